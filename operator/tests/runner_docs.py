"""results.json documents made with the runner's own code (as a runner pod writes them)."""

from __future__ import annotations

from tpcc_contract.histograms import record_latency
from tpcc_contract.results import PodWindow, TypeStats, build_results
from tpcc_contract.tpcc import TRANSACTIONS

START_AT = 1_735_689_600.0  # 2025-01-01T00:00:00Z, the barrier of these runs
WARMUP = 10.0


def pod_results(
    shard: int,
    shards: int,
    new_orders: int,
    latency_s: float,
    clients: int = 4,
    seconds: int = 60,
    late_seconds: float = 0.01,
    errors: dict[str, int] | None = None,
) -> dict:
    """One pod's results.json: new_orders spread evenly over its measured seconds; a pod
    late_seconds after the barrier (beyond the warmup) measured fewer seconds; `errors` per
    transaction type on top of its commits."""
    stats = {t: TypeStats() for t in TRANSACTIONS}
    for t in TRANSACTIONS:
        n = new_orders if t == "NEW_ORDER" else max(1, new_orders // 10)
        stats[t].counts["committed"] = n
        stats[t].counts["errors"] = (errors or {}).get(t, 0)
        for _ in range(n):
            record_latency(stats[t].histogram, latency_s)
    stats["NEW_ORDER"].counts["rollbacks"] = 1
    stats["PAYMENT"].retries = 2
    started = START_AT + late_seconds
    window = PodWindow(
        START_AT, started, START_AT + WARMUP, max(START_AT + WARMUP, started), START_AT + WARMUP + seconds
    )
    measured = window.whole_seconds()
    per_second = [0] * seconds
    for k in range(new_orders):
        per_second[measured.start + k % len(measured)] += 1
    return build_results(
        stats,
        window,
        per_second,
        1,
        clients,
        False,
        {0: new_orders},
        {
            "shard": f"{shard}/{shards}",
            "options": {"db": "voltdb", "seed": 42},
            "c_constants": {
                "load": {"c_last": 10, "c_id": 1, "ol_i_id": 2},
                "run": {"c_last": 80, "c_id": 1, "ol_i_id": 2},
            },
            "spec_deviations": ["no keying or think times"],
            # each pod's Deliveries delivered district 1 and 2 once, one outcome unknown
            "deliveries": {"1:1": 1, "1:2": 1},
            "deliveries_unknown_outcome": {"1": shard},
        },
    )


def results_status(tpmc: float) -> dict:
    """A status.results as the operator writes it from one runner pod's document, with this tpmC."""
    from tpcc_operator.results import run_status

    return {**run_status([pod_results(0, 1, 10, 0.01)]).to_json(), "tpmC": tpmc}


def durability_report(acknowledged: int, lost: int = 0, ledgers: int = 2) -> dict:
    """The verifier's durability.json, made with the runner's own judge: `lost` of the
    acknowledged orders have had their O_ID reused by another order."""
    from tpcc_runner.durability import LedgerRecord, OrderIdentity, judge

    records = [
        LedgerRecord(True, 1, 3, 3001 + i, OrderIdentity(i % 3000 + 1, 1_735_689_600_000 + i, 5, "0a1b2c3d"))
        for i in range(acknowledged)
    ]
    stored = {r.key: r.identity if i >= lost else OrderIdentity(9, 1, 5, "ffffffff") for i, r in enumerate(records)}
    records.append(LedgerRecord(False, 1, 3, None, OrderIdentity(7, 1_735_689_700_000, 6, "00000000")))
    return judge(records, stored, {}, ledgers).to_dict()


def acid_report(failed: dict[str, str] | None = None, not_applicable: dict[str, str] | None = None) -> dict:
    """acid.json as `tpcc acid` writes it: every test passed but those named failed (their
    evidence) or not applicable (the reason)."""
    from tpcc_runner.acid.clause3 import FAILED, NOT_APPLICABLE, PASSED, TESTS, Verdict
    from tpcc_runner.acid.command import document

    failed, not_applicable = failed or {}, not_applicable or {}
    verdicts = [
        Verdict(name, FAILED, failed[name])
        if name in failed
        else Verdict(name, NOT_APPLICABLE, not_applicable[name])
        if name in not_applicable
        else Verdict(name, PASSED, "the second transaction waited for the first")
        for name in TESTS
    ]
    return document("voltdb", 7, verdicts, {"db": "voltdb"})


def ycsb_pod_results(shard: int, shards: int, reads: int, updates: int, latency_s: float) -> dict:
    """One YCSB runner pod's results.json (workload A) with its operations measured by the
    runner's own Measurements, released at START_AT for 20 s."""
    from tpcc_contract.ycsb.measurements import OK, Measurements
    from tpcc_contract.ycsb.properties import resolve

    ms = Measurements()
    for name, n in (("READ", reads), ("UPDATE", updates)):
        for _ in range(n):
            ms.measure(name, OK, latency_s)
    return {
        "kind": "ycsb",
        "command": "ycsb run",
        "db": "voltdb",
        "workload": "a",
        "properties": resolve("a", {"recordcount": "1000"}).to_ycsb(),
        "operations": ms.to_json(),
        "shard": f"{shard}/{shards}",
        "window": {"start": START_AT, "end": START_AT + 20},
    }


def ycsb_status(ops_per_second: float) -> dict:
    """A status.ycsb as the runner merges one pod's document, with these operations per second."""
    from tpcc_contract.ycsb.results import merge

    return {**merge([ycsb_pod_results(0, 1, 10, 10, 0.001)]), "opsPerSecond": ops_per_second}
