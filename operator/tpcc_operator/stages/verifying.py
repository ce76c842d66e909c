"""Stage Verifying: the checks of verification.py in order (runner_jobs.verifying_role); the run (or the
sweep's cell) is measured when the last of them has passed.

Observes: the Job of the check under way and its report (CHECKS), the database's readiness and
the runner pods before the verifier, fault injection's reads, the status's verdicts so far.
Does: what verification.py does; moves to Succeeded.
"""

from __future__ import annotations

import datetime as dt

from .. import plan, runner_jobs, sweep_layout, workloads
from ..runspec import RunSpec
from . import fault_moves, reads
from .machine import Builder, JobState, Step, World, patched
from .sweep_cells import cell_measured
from .verification import check_consistency, check_during_run, run_acid_tests, verify_durability

# Each check's Job: the World fields of its state and of its report, and the report's file.
CHECKS: dict[str, tuple[reads.JobField, reads.ReportField, str]] = {
    "midcheck": ("midcheck", "midcheck_report", runner_jobs.MIDCHECK_KEY),
    "verifier": ("verifier", "durability_report", "durability.json"),
    "checker": ("checker", "check_report", "check.json"),
    "acid": ("acid", "acid_report", "acid.json"),
}


def observes(run: plan.Run, spec: RunSpec, status: dict, now: dt.datetime, seen: World | None) -> list[reads.Read]:
    """The Job of the check under way and fault injection's reads; then the Job's report once
    it finished, or before the verifier starts, the database's readiness and the runner pods'
    IPs (whose ledgers it reads)."""
    faults = fault_moves.observes(run, spec, status, now) if seen is None else []
    role = runner_jobs.verifying_role(spec, status)
    if role == "acid" and (spec.verify.acid_tests is None or "acid" in status):
        return faults  # every check done
    job, report, key = CHECKS[role]
    if seen is None:
        return [reads.Job(job, plan.job_name(run, role)), *faults]
    state = _job_state(seen, role)
    if state.succeeded or state.failed:
        return [reads.Report(report, plan.check_configmap_name(run), key)]
    if role != "verifier" or state.exists:
        return []
    ready = [reads.DatabaseReadiness(plan.database_pod_selector(run))] if spec.database.deployed else []
    return [*ready, reads.RunnerPodIps(plan.job_name(run, "runner"))]


def _job_state(seen: World, role: str) -> JobState:
    return {"midcheck": seen.midcheck, "verifier": seen.verifier, "checker": seen.checker, "acid": seen.acid}[role]


def tick(b: Builder, run: plan.Run, spec: RunSpec, world: World, cells: list[sweep_layout.Cell]) -> Step | None:
    """Durability (the verifier Job over every ledger), consistency (the checker Job), then the
    ACID tests (their Job); the run (or cell) is measured when the last of them has passed."""
    job = runner_jobs.verifying_role(spec, b.status)
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
        cell_measured(b, run, spec, "run complete: " + ", ".join(workloads.of(spec).held(spec)))
    return failed


def _all_verified(spec: RunSpec, status: dict) -> bool:
    return (
        "durability" in status
        and ("consistency" in status or not workloads.checks_consistency(spec))
        and ("acid" in status or spec.verify.acid_tests is None)
        and ("consistencyDuringRun" in status or not spec.verify.during_run)
    )
