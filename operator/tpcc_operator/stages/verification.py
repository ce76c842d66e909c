"""What Verifying checks, one Job each: the consistency check started with the measured interval
(verify.duringRun), durability (the verifier over every runner pod's ledger, TPC-C or YCSB),
the consistency check after the run, the ACID tests.

Observes: those Jobs and their reports, the database's readiness, the faults, the runner pods.
Does: CreateMidcheckJob, CreateVerifyJob, ReleaseRunners, CreateCheckJob, CreateAcidJob.
"""

from __future__ import annotations

from .. import faults as fault_injection
from .. import plan, sweep_layout, workloads
from ..results import acid_status, consistency_status, during_run_status
from ..runspec import RunSpec
from ..timestamps import parse_time
from ..workloads import DurabilityVerdict
from .actions import CreateAcidJob, CreateCheckJob, CreateMidcheckJob, CreateVerifyJob, ReleaseRunners
from .fault_moves import inject_faults
from .machine import Builder, Step, World


def check_consistency(b: Builder, run: plan.Run, world: World, cells: list[sweep_layout.Cell]) -> Step | None:
    """The consistency check after the run (the checker Job; in a sweep, it also reads the
    Deliveries of the cells measured earlier on the same load)."""
    if world.check_report is not None and (world.checker.succeeded or world.checker.failed):
        consistency = consistency_status(world.check_report)
        b.step.status["consistency"] = consistency.to_json()
        if not consistency.passed:
            msg = "violated consistency conditions " + ", ".join(map(str, consistency.violated))
            b.condition("ConsistencyVerified", False, "Violated", msg)
            return b.fail("ConsistencyViolated", msg)
        b.condition("ConsistencyVerified", True, "Passed", "all consistency conditions hold")
    elif world.checker.failed or world.checker.succeeded:
        msg = world.checker.message or "the check wrote no report"
        b.condition("ConsistencyVerified", False, "CheckFailed", msg)
        return b.fail("CheckFailed", f"consistency check failed: {msg}")
    elif not world.checker.exists:
        earlier = (
            () if run.cell is None else tuple(c.index for c in sweep_layout.load_cells(cells, cells[run.cell])[:-1])
        )
        b.act(CreateCheckJob(earlier))
        b.event("CheckJobCreated", f"job {plan.job_name(run, 'checker')}")
    return None


def check_during_run(b: Builder, run: plan.Run, spec: RunSpec, world: World) -> Step | None:
    """The report of the check Job started with the measured interval (created now if the run
    ended before that, which whileRunning then says)."""
    if world.midcheck_report is not None and (world.midcheck.succeeded or world.midcheck.failed):
        start_at = parse_time(b.status["startAt"])
        consistency = during_run_status(world.midcheck_report, start_at, fault_injection.measured_end(spec, start_at))
        b.step.status["consistencyDuringRun"] = consistency.to_json()
        if not consistency.passed:
            msg = "violated consistency conditions while transactions ran: " + ", ".join(map(str, consistency.violated))
            b.condition("ConsistencyVerified", False, "ViolatedDuringRun", msg)
            return b.fail("ConsistencyViolatedDuringRun", msg)
        b.event(
            "ConsistentDuringRun",
            f"the consistency conditions held in a read from {consistency.started_at} to {consistency.finished_at}",
        )
    elif world.midcheck.failed or world.midcheck.succeeded:
        msg = world.midcheck.message or "the check wrote no report"
        b.condition("ConsistencyVerified", False, "CheckFailed", msg)
        return b.fail("CheckFailed", f"consistency check during the run failed: {msg}")
    elif not world.midcheck.exists:
        b.act(CreateMidcheckJob())
        b.event(
            "DuringRunCheckJobCreated",
            f"job {plan.job_name(run, 'midcheck')}: created after the run ended",
            warning=True,
        )
    return None


def run_acid_tests(b: Builder, run: plan.Run, world: World) -> Step | None:
    """The ACID tests' Job; a test that failed or could not run fails the run with its reason."""
    if world.acid_report is not None and (world.acid.succeeded or world.acid.failed):
        acid = acid_status(world.acid_report)
        b.step.status["acid"] = acid.to_json()
        counts = ", ".join(f"{n} {s}" for s, n in acid.counts.items() if n)
        if not acid.passed:
            msg = f"ACID tests: {counts}; " + "; ".join(f"{t.test} {t.status}: {t.reason}" for t in acid.failed)
            b.condition("ACIDVerified", False, "ACIDTestFailed", msg[:1000])
            return b.fail("ACIDTestFailed", msg[:1000])
        b.condition("ACIDVerified", True, "Passed", f"ACID tests: {counts}")
        b.event("ACIDVerified", f"ACID tests: {counts}")
    elif world.acid.failed or world.acid.succeeded:
        msg = world.acid.message or "the ACID tests wrote no report"
        b.condition("ACIDVerified", False, "ACIDTestsFailed", msg)
        return b.fail("ACIDUnverified", f"ACID tests could not run: {msg}")
    elif not world.acid.exists:
        b.act(CreateAcidJob())
        b.event("ACIDJobCreated", f"job {plan.job_name(run, 'acid')}")
    return None


def verify_durability(b: Builder, run: plan.Run, spec: RunSpec, world: World) -> Step | None:
    """The durability step of Verifying: once the faults are over and the database is whole
    again, one verifier Job reads the ledgers of all runner pods and judges them together;
    then the runner pods are released. Returns the Step if the run fails."""
    if world.verifier.succeeded or world.verifier.failed:
        b.act(ReleaseRunners())
        if world.durability_report is None:
            msg = world.verifier.message or "the verifier wrote no report"
            b.condition("Durable", False, "VerificationFailed", msg)
            return b.fail("DurabilityUnverified", f"durability verification failed: {msg}")
        return _durability_verdict(b, workloads.of(spec).durability(world.durability_report))
    if world.verifier.exists:
        return None
    return _start_verifier(b, run, spec, world)


def _durability_verdict(b: Builder, verdict: DurabilityVerdict) -> Step | None:
    """status.durability and the Durable condition; a loss (the workload's words say which, with
    an example) fails the run DurabilityLost."""
    d = verdict.status
    b.step.status["durability"] = d.to_json()
    if d.durable:
        b.condition("Durable", True, "NoLoss", verdict.held)
        return None
    msg = verdict.lost + (f", e.g. {d.lost_examples[0]}" if d.lost_examples else "")
    msg += f"; the database came back without its {verdict.load} load" if d.database_empty else ""
    b.condition("Durable", False, verdict.reason, msg)
    return b.fail("DurabilityLost", msg)


def _start_verifier(b: Builder, run: plan.Run, spec: RunSpec, world: World) -> Step | None:
    """The verifier Job, only after the last fault has recovered and every member is back
    (within readyTimeoutSeconds), and while every runner pod still holds its ledger."""
    n = spec.runners.parallelism
    timeout = spec.database.ready_timeout_seconds
    failed = inject_faults(b, run, spec, world)
    if failed:
        return failed
    faults = b.step.status.get("faults", b.status.get("faults") or [])
    replicas = plan.database_pod_count(spec) if spec.database.deployed else 0
    if not fault_injection.in_progress(faults) and world.database_ready >= replicas:
        gone = sorted(set(range(n)) - set(world.runner_pod_ips))
        if gone:
            msg = f"runner pods {gone} are gone: their durability ledgers cannot be verified"
            b.condition("Durable", False, "LedgersUnavailable", msg)
            return b.fail("DurabilityUnverified", msg)
        b.act(CreateVerifyJob(dict(world.runner_pod_ips)))
        b.event("VerifyJobCreated", f"job {plan.job_name(run, 'verifier')}: the ledgers of {n} runner pods")
    elif b.elapsed() > timeout:
        if faults and fault_injection.in_progress(faults):
            last = faults[-1]
            msg = f"{last['target']} not back and ready {timeout}s after the run (fault {last['number']})"
        else:
            msg = f"{world.database_ready}/{replicas} database pods ready {timeout}s after the run"
        b.condition("Durable", False, "DatabaseNotRecovered", msg)
        return b.fail("DatabaseNotRecovered", msg)
    return None
