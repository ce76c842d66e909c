"""The merge of YCSB runner pods' documents (what the operator puts in status.ycsb), on documents
the real executor measured against the in-memory store."""

from __future__ import annotations

import argparse

import pytest
from test_ycsb_executor import loaded, props_of, run
from tpcc_contract.ycsb.measurements import Measurements
from tpcc_contract.ycsb.results import merge
from tpcc_runner.drivers.base import ConnectionOptions
from tpcc_runner.ycsb.command import results_document


def pod_document(db, props, seed: int, shard: int, start: float) -> dict:
    outcome = run(db, props, "run", seed=seed)
    args = argparse.Namespace(phase="run", db="memory", workload="a")
    doc = results_document(args, props, seed, ConnectionOptions(), outcome)
    doc.update(kind="ycsb", shard=f"{shard}/2", threads=props.threadcount, window={"start": start, "end": start + 10.0})
    return doc, outcome


def test_two_pods_merge_into_what_their_operations_were_together():
    props = props_of("a", threadcount=2)
    db = loaded(props)
    (a, out_a), (b, out_b) = pod_document(db, props, 7, 0, 1000.0), pod_document(db, props, 8, 1, 1001.0)
    merged = merge([a, b])
    together = Measurements()
    together.add(out_a.measurements)
    together.add(out_b.measurements)
    for name in ("READ", "UPDATE"):
        summary = together.summary(name)
        assert merged["operations"][name]["count"] == sum(summary["Return"].values())
        assert merged["operations"][name]["latencyMs"]["p99"] == round(summary["99thPercentileLatency(us)"] / 1000, 3)
    # the common window: the later start (1001) to the earlier end (1010)
    ok = merged["operations"]["READ"]["count"] + merged["operations"]["UPDATE"]["count"]
    assert merged["opsPerSecond"] == round(ok / 9.0, 1) and merged["runnerPods"] == 2
    assert (merged["start"], merged["end"]) == ("1970-01-01T00:16:41Z", "1970-01-01T00:16:50Z")
    assert merged["properties"]["dataintegrity"] == "true" and merged["properties"]["recordcount"] == "200"
    assert all(op["errors"] == 0 for op in merged["operations"].values())
    assert merged["clientLoop"] == "a thread per client"  # the memory store pipelines nothing


def test_the_loops_the_pods_ran_are_named():
    props = props_of("a")
    db = loaded(props)
    (a, _), (b, _) = pod_document(db, props, 7, 0, 1000.0), pod_document(db, props, 8, 1, 1000.0)
    a["driver"]["client_loop"] = b["driver"]["client_loop"] = "pipelined, compiled"
    assert merge([a, b])["clientLoop"] == "pipelined, compiled"
    b["driver"]["client_loop"] = "pipelined (not compiled: the compiled loop (_voltloop) is not built here)"
    assert merge([a, b])["clientLoop"] == (
        "pipelined (not compiled: the compiled loop (_voltloop) is not built here); pipelined, compiled"
    )
    del a["driver"]["client_loop"]  # a runner from before the loops were named
    assert merge([a, b])["clientLoop"].startswith("not recorded; ")


def test_pods_of_different_runs_are_refused():
    props = props_of("a")
    db = loaded(props)
    a, _ = pod_document(db, props, 7, 0, 1000.0)
    other = props_of("a", fieldcount=4)
    b, _ = pod_document(loaded(other), other, 8, 1, 1000.0)
    with pytest.raises(ValueError, match="the pods ran different properties"):
        merge([a, b])
    with pytest.raises(ValueError, match="not every document"):
        merge([a, {"tpmC": 1.0}])
