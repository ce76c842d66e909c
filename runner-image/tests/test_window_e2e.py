"""Two runner pods against a real server (SecantusDB): one seed gives both the same C
constants, and a pod that starts late is measured over its own seconds and named."""

from __future__ import annotations

import json
import random
import subprocess
import time

import pytest
from cli_helpers import TPCC, tpcc
from secantus_server import secantus  # noqa: F401  (fixture)
from tpcc_contract.results import merge_results
from tpcc_runner.workload import CConstants, load_constants, run_constants

pytestmark = pytest.mark.db
SEED = 7


def _run(args: list[str], shard: str, start_at: float, results) -> subprocess.Popen:
    return subprocess.Popen(
        [
            *TPCC,
            "run",
            *args,
            "--warehouses",
            "1",
            "--clients",
            "1",
            "--duration",
            "20",
            "--warmup",
            "0",
            "--seed",
            str(SEED),
            "--shard",
            shard,
            "--start-at",
            str(start_at),
            "--results",
            str(results),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_one_seed_one_set_of_constants_and_a_late_pod_is_named(secantus, tmp_path):
    args = [
        "--db",
        "mongodb",
        "--endpoints",
        secantus.endpoint,
        "--metrics-port",
        "0",
        "--driver-opt",
        "schema=normalized",
    ]
    loaded = tpcc(
        "load",
        *args,
        "--warehouses",
        "1",
        "--workers",
        "1",
        "--reset",
        "--seed",
        str(SEED),
        "--items",
        "1000",
        "--customers-per-district",
        "30",
    )
    assert loaded.code == 0, loaded.stderr
    c_load = load_constants(random.Random(SEED))
    meta = loaded.json()["meta"]
    assert CConstants(meta["c_last"], meta["c_id"], meta["ol_i_id"]) == c_load

    start_at = time.time() + 10
    on_time = _run(args, "0/2", start_at, tmp_path / "0.json")
    time.sleep(max(0.0, start_at + 1.5 - time.time()))  # the second pod arrives >= 1.5 s late
    late = _run(args, "1/2", start_at, tmp_path / "1.json")
    for p in (on_time, late):
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    docs = [json.loads((tmp_path / f"{i}.json").read_text()) for i in range(2)]

    expected_run = run_constants(random.Random(SEED), c_load).to_dict()
    for doc in docs:
        assert doc["options"]["seed"] == SEED and doc["c_constants"]["run"] == expected_run
    assert docs[0]["window"]["late_seconds"] < 1.0
    assert docs[1]["window"]["late_seconds"] > 1.5
    # the late pod divides by the seconds it measured, not by the planned twenty
    assert docs[1]["measured_seconds"] < docs[0]["measured_seconds"]
    merged = merge_results(docs)
    assert [p["shard"] for p in merged["late_runners"]] == [1]
    assert merged["measured_seconds"] == docs[1]["measured_seconds"]
    assert merged["efficiency"] is None and merged["spec_deviations"]
