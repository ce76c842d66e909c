"""results.json documents made with the runner's own code (as a runner pod writes them)."""
from __future__ import annotations

from tpcc_runner.results import TypeStats, build_results, record_latency
from tpcc_runner.workload import TRANSACTIONS


def pod_results(shard: int, shards: int, new_orders: int, latency_s: float, clients: int = 4,
                seconds: float = 60.0) -> dict:
    stats = {t: TypeStats() for t in TRANSACTIONS}
    for t in TRANSACTIONS:
        n = new_orders if t == "NEW_ORDER" else max(1, new_orders // 10)
        stats[t].counts["committed"] = n
        for _ in range(n):
            record_latency(stats[t].histogram, latency_s)
    stats["NEW_ORDER"].counts["rollbacks"] = 1
    stats["PAYMENT"].retries = 2
    return build_results(stats, seconds, 1, clients, {0: new_orders},
                         {"start": f"2025-01-01T00:00:0{shard}Z", "end": f"2025-01-01T00:01:0{shard}Z",
                          "shard": f"{shard}/{shards}", "options": {"db": "voltdb"}})
