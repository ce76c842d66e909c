"""Stage Verifying: the checks of verification.py in order (plan.verifying_role); the run (or the
sweep's cell) is measured when the last of them has passed.

Observes: the status's verdicts so far. Does: what verification.py does; moves to Succeeded.
"""

from __future__ import annotations

from .. import plan
from ..runspec import RunSpec
from .machine import Builder, Step, World, patched
from .sweep_cells import cell_measured
from .verification import check_consistency, check_during_run, run_acid_tests, verify_durability


def tick(b: Builder, run: plan.Run, spec: RunSpec, world: World, cells: list[plan.Cell]) -> Step | None:
    """Durability (the verifier Job over every ledger), consistency (the checker Job), then the
    ACID tests (their Job); the run (or cell) is measured when the last of them has passed."""
    job = plan.verifying_role(spec, b.status)
    if job == "midcheck":
        failed = check_during_run(b, run, spec, world)
    elif job == "verifier":
        failed = verify_durability(b, run, spec, world)
    elif job == "checker":
        failed = check_consistency(b, run, world, cells)
    elif spec.verify.acid_tests is not None and "acid" not in b.status:
        failed = run_acid_tests(b, run, world)
    else:
        failed = None
    if not failed and _all_verified(spec, patched(b.status, b.step.status)):
        cell_measured(b, run, spec, "run complete: " + ", ".join(_what_held(spec)))
    return failed


def _all_verified(spec: RunSpec, status: dict) -> bool:
    return (
        "durability" in status
        and ("consistency" in status or not spec.checks_consistency)
        and ("acid" in status or spec.verify.acid_tests is None)
        and ("consistencyDuringRun" in status or not spec.verify.during_run)
    )


def _what_held(spec: RunSpec) -> list[str]:
    if spec.workload.kind == plan.YCSB:
        return ["no acknowledged write lost"]
    held = ["consistency conditions held during the run"] if spec.verify.during_run else []
    held += ["no acknowledged order lost"]
    held += ["consistency conditions hold"] if spec.verify.enabled else ["consistency check disabled"]
    held += ["ACID tests passed"] if spec.verify.acid_tests is not None else []
    return held
