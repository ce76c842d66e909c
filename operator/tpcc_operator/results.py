"""Runner documents -> the BenchmarkRun's status.results; the verifier's durability.json ->
status.durability; the checker's check.json -> status.consistency; acid.json -> status.acid;
load.json -> status.load.

The merge itself (sum counts and histograms, percentiles from the merged histograms) is the
contract's `merge_results` (tpcc_contract.results, which the runner builds its documents with);
this module picks what belongs in a status (no histograms) and builds it as runstatus's types,
which jsonmodel writes the Kubernetes way. The runner's documents are read by their own
(snake_case) keys: they are the runner's contract, not the resource's.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from tpcc_contract.results import LATE_START_SECONDS, merge_deliveries, merge_results

from .runstatus import (
    ACID_ERROR,
    ACID_FAILED,
    Acid,
    AcidTest,
    Condition,
    Consistency,
    ConsistencyDuringRun,
    CounterComparison,
    Durability,
    LateRunner,
    Load,
    PodResults,
    ResponseTime,
    Results,
    ServerAgreement,
    TimelineStep,
    TransactionResults,
)
from .timestamps import parse_time


def _shard_index(doc: dict) -> int:
    return int(str(doc.get("shard", "0/1")).partition("/")[0])


def run_deliveries(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """The Deliveries of all runner pods, as `tpcc check --deliveries` reads them: consistency
    condition 11 counts the orders delivered during the run from them, not from ORDERS."""
    return merge_deliveries(docs).to_json()


def run_status(docs: list[dict[str, Any]]) -> Results:
    """status.results from the results.json of every runner pod, merged once."""
    return _results(merge_results(docs), docs)


def _results(merged: dict[str, Any], docs: list[dict[str, Any]]) -> Results:
    totals = merged["totals"]
    return Results(
        tpm_c=merged["tpmC"],
        transactions_per_second=merged.get("transactions_per_second"),
        **_server(merged),
        # absent (None) when it means nothing, with the reason instead
        efficiency=merged["efficiency"],
        efficiency_reason=merged["efficiency_reason"] if merged["efficiency"] is None else None,
        measured_seconds=merged["measured_seconds"],
        pacing=merged["pacing"],
        seed=merged["options"]["seed"],
        c_constants=merged["c_constants"],
        response_times=_response_times(merged),
        response_times_passed=merged["response_times_passed"],
        spec_deviations=tuple(merged["spec_deviations"]),
        late_runners=tuple(
            LateRunner(shard=p["shard"], late_seconds=p["late_seconds"]) for p in merged["late_runners"]
        ),
        start=merged["start"],
        end=merged["end"],
        runner_pods=merged["pods"],
        committed=totals["committed"],
        retries=totals["retries"],
        aborts=totals["rollbacks"],
        errors=totals["errors"],
        unknown=totals["unknown"],
        transactions={name: _transaction(t) for name, t in merged["transactions"].items()},
        timeline=tuple(TimelineStep(t=s["t"], tpm_c=s["tpmC"]) for s in merged["timeline"]),
        pods=_pods(merged, docs),
    )


def _response_times(merged: dict[str, Any]) -> dict[str, ResponseTime]:
    """Clause 5.2.5.3's 90th-percentile response times against their limits (a type that did
    not run has no percentile and no verdict)."""
    return {
        name: ResponseTime(
            limit_seconds=v["limit_seconds"],
            p90_seconds=v["p90_seconds"] if v["passed"] is not None else None,
            passed=v["passed"],
        )
        for name, v in merged["response_times"].items()
    }


def _transaction(t: dict[str, Any]) -> TransactionResults:
    """One transaction type's counts, share of the mix and latencies."""
    return TransactionResults(
        committed=t["committed"],
        rollbacks=t["rollbacks"],
        errors=t["errors"],
        unknown=t["unknown"],
        retries=t["retries"],
        executed=t["executed"],
        mix_percent=t["mix_percent"],
        latency_ms=t["latency_ms"],
    )


def _pods(merged: dict[str, Any], docs: list[dict[str, Any]]) -> tuple[PodResults, ...]:
    """Each runner pod's share: its clients, tpmC, commits and measured window, by shard."""
    windows = {w["shard"]: w for w in merged["pod_windows"]}
    pods = (
        PodResults(
            shard=_shard_index(d),
            clients=d["clients"],
            tpm_c=d["tpmC"],
            committed=d["totals"]["committed"],
            late_seconds=windows[_shard_index(d)]["late_seconds"],
            measure_start=d["start"],
            measure_end=d["end"],
        )
        for d in docs
    )
    return tuple(sorted(pods, key=lambda p: p.shard))


def _server(merged: dict[str, Any]) -> dict[str, Any]:
    """database_bytes and server_agreement from the merged document's `server` section (absent
    figures left out)."""
    if "server_agreement" not in merged:
        return {}
    size, agreement = merged["server"]["size"], merged["server_agreement"]
    sizes = {
        k: size[f"{k}_bytes"] for k in ("data", "index", "storage", "memory") if size.get(f"{k}_bytes") is not None
    }
    return {
        "database_bytes": sizes or None,
        "server_agreement": ServerAgreement(
            verdict=agreement["verdict"],
            tolerance=agreement["tolerance"],
            reason=agreement.get("reason") or None,
            comparisons=tuple(
                CounterComparison(
                    counter=c["counter"],
                    what=c["what"],
                    transactions=tuple(c["transactions"]),
                    client=c["client"],
                    server=c["server"],
                    allowed=c["allowed"],
                    agrees=c["agrees"],
                )
                for c in agreement["comparisons"]
            ),
        ),
    }


def late_runners_message(results: Results) -> str | None:
    """Why the run fails with reason RunnerLate, or None: a runner pod whose terminals were all
    running only more than LATE_START_SECONDS into the measured interval (startAt + warmup)
    missed part of what the others measured."""
    if not results.late_runners:
        return None
    pods = ", ".join(f"shard {p.shard} ({p.late_seconds:.1f} s after startAt)" for p in results.late_runners)
    return (
        f"runner pods started their terminals more than {LATE_START_SECONDS:g} s into the measured "
        f"interval (startAt + warmup): {pods}"
    )


def error_budget_message(results: Results, max_percent: float) -> str | None:
    """Why the run fails with reason TooManyErrors, or None: a transaction type more of whose
    attempts than workload.maxErrorPercent ended in an error. Rollbacks are the spec's and
    unknown outcomes are the durability verifier's; errors are the database (or the driver)
    refusing work, which the runner counts and goes on from, so tpmC alone would not show it."""
    over = []
    for name, t in sorted(results.transactions.items()):
        percent = 100.0 * t.errors / t.attempts if t.attempts else 0.0
        if percent > max_percent:
            over.append(f"{name} {t.errors} of {t.attempts} attempts ({percent:.1f}%)")
    if not over:
        return None
    return f"errors above workload.maxErrorPercent ({max_percent:g}%): " + ", ".join(over)


def durability_status(report: dict[str, Any]) -> Durability:
    """status.durability from the verifier's durability.json (the judge is the runner's
    durability.judge, over the ledgers of all runner pods at once)."""
    lost = int(report.get("lost", 0))
    return Durability(
        acknowledged=int(report.get("acknowledged", 0)),
        found=int(report.get("found", 0)),
        lost=lost,
        missing=int(report.get("missing", 0)),
        replaced=int(report.get("replaced", 0)),
        duplicates=int(report.get("duplicates", 0)),
        unknown_outcome=int(report.get("unknown_outcome", 0)),
        unknown_committed=int(report.get("unknown_committed", 0)),
        unknown_not_committed=int(report.get("unknown_not_committed", 0)),
        ledgers=int(report.get("ledgers", 0)),
        lost_examples=tuple(str(e) for e in report.get("lost_examples", []))[:10],
        database_empty=bool(report.get("database_empty")),
        # a report that claims durable with a loss in its counts is not durable
        durable=bool(report.get("durable")) and lost == 0,
    )


def acid_status(report: dict[str, Any]) -> Acid:
    """status.acid from acid.json: each test's verdict and reason (the observed values stay in
    the BenchmarkResult's ConfigMap); passed only when no test failed or could not run."""
    tests = tuple(
        AcidTest(
            test=str(t["test"]),
            clause=str(t.get("clause", "")),
            status=str(t["status"]),
            reason=str(t.get("reason", ""))[:1000],
        )
        for t in report.get("tests", [])
    )
    counts = {s: sum(t.status == s for t in tests) for s in ("passed", ACID_FAILED, "not-applicable", ACID_ERROR)}
    return Acid(
        passed=bool(report.get("passed")) and not (counts[ACID_FAILED] or counts[ACID_ERROR]),
        seed=int(report.get("seed", 0)),
        counts=counts,
        tests=tests,
    )


def consistency_status(report: dict[str, Any]) -> Consistency:
    """status.consistency from check.json."""
    conditions = tuple(
        Condition(
            number=c["number"],
            passed=bool(c["passed"]),
            checked=c.get("checked", 0),
            violations=c.get("violations", 0),
            example=str(c["example"]) if c.get("example") else None,
            note=str(c["note"]) if c.get("note") else None,
        )
        for c in report.get("conditions", [])
    )
    violated = tuple(sorted(c.number for c in conditions if not c.passed))
    return Consistency(passed=bool(report.get("passed")) and not violated, violated=violated, conditions=conditions)


def during_run_status(
    report: dict[str, Any], runners_from: dt.datetime, runners_to: dt.datetime
) -> ConsistencyDuringRun:
    """status.consistencyDuringRun from the check's report: the conditions, when it read, and
    whether it began reading while the runners' transactions committed (from startAt to the end
    of the measured interval)."""
    consistency = consistency_status(report)
    started, finished = str(report.get("started_at", "")), str(report.get("finished_at", ""))
    return ConsistencyDuringRun(
        passed=consistency.passed,
        violated=consistency.violated,
        conditions=consistency.conditions,
        started_at=started,
        finished_at=finished,
        while_running=bool(started) and runners_from <= parse_time(started) < runners_to,
    )


def ycsb_durability_status(report: dict[str, Any]) -> Durability:
    """status.durability from `tpcc ycsb verify`'s verdict over the runner pods' ledgers: the
    acknowledged writes (inserts, and records updated) and the record count against the load's
    keys plus the acknowledged inserts (a range when some inserts' outcome is unknown)."""
    expected = report.get("expected_records", 0)
    low, high = expected if isinstance(expected, list) else (expected, expected)
    unknown = report.get("unknown_outcome") or {}
    acknowledged = int(report.get("acknowledged_inserts", 0)) + int(report.get("acknowledged_updates", 0))
    lost, records = int(report.get("lost", 0)), int(report.get("records", 0))
    return Durability(
        acknowledged=acknowledged,
        found=acknowledged - lost,
        lost=lost,
        unknown_outcome=int(unknown.get("inserts", 0)) + int(unknown.get("updates", 0)),
        ledgers=int(report.get("ledgers", 0)),
        records=records,
        expected_records=str(low) if low == high else f"{low}-{high}",
        lost_examples=tuple(str(e) for e in report.get("lost_examples", []))[:10],
        database_empty=records == 0 and int(low) > 0,
        # a report that claims durable with a loss in its counts is not durable
        durable=bool(report.get("durable")) and lost == 0,
    )


def load_status(report: dict[str, Any]) -> Load:
    """status.load from the load Job's load.json (TPC-C rows of every table; YCSB records)."""
    return Load(
        rows=int(report.get("rows", 0)),
        seconds=float(report.get("seconds", 0.0)),
        rows_per_second=float(report.get("rows_per_second", 0.0)),
    )
