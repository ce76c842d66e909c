import os
from pathlib import Path

import pytest

HERE = Path(__file__).parent

# Tests that start a real server are "db" tests (hack/test.sh db), whatever module they are in.
SERVER_FIXTURES = {"voltdb", "voltdb_cluster", "secantus", "own_secantus"}

# hack/test.sh runs the db tests as two pytest sessions at once (TPCC_DB_SHARE=a and =b): much of
# a db test is waiting (a server starting, a run's fixed duration, a node rejoining). The shares
# are balanced by what each module took, two sessions at a time (hack/test.sh prints it after the
# stage, from hack/module-times.py; the first fresh-machine run, 2026-11-26): a = 672 s (runner
# e2e 260, YCSB on both databases 101, VoltDB driver 100, MongoDB driver 96, durability 61, the
# rest under 20); b = 636 s (VoltDB failover 114, server counters 109, YCSB failover 98,
# observability 90, the rest under 45); then the YCSB TimeSeries module (19 s) moved from a to b.
# A db module missing here is an error, not a silent skip.
DB_SHARES = {
    "test_runner_e2e.py": "a",
    "test_ycsb_databases.py": "a",
    "test_durability_db.py": "a",
    "test_mongodb_driver.py": "a",
    "test_voltdb_driver.py": "a",
    "test_acid_mongodb.py": "a",
    "test_secantus_member.py": "a",
    "test_pytpcc_shim.py": "a",
    "test_failover_voltdb.py": "b",
    "test_server_counters.py": "b",
    "test_ycsb_failover_voltdb.py": "b",
    "test_observability.py": "b",
    "test_ycsb_regression_voltdb.py": "b",
    "test_readme_runner.py": "b",
    "test_acid_voltdb.py": "b",
    "test_check_during_run.py": "b",
    "test_readme_ycsb.py": "b",
    "test_error_budget.py": "b",
    "test_ycsb_java.py": "b",
    "test_window_e2e.py": "b",  # run together, a took 664 s and b 586 (CI21): this 34 s test moved
    "test_ycsb_timeseries_db.py": "b",
    "test_voltdb_start_stall.py": "b",  # CI of 2026-12-07: a 831 s with it, b 778
}


def pytest_configure(config):
    config.addinivalue_line("markers", "db: needs a real database server (started by the test)")
    config.addinivalue_line("markers", "k8s: needs the local Kubernetes (hack/local-k8s.sh)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        # this directory's tests only: a hook of a conftest sees every item of the session, and the
        # operator's tests have a `voltdb` fixture of their own (a spec, no server)
        if item.path.parent == HERE and SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.db)
    share = os.environ.get("TPCC_DB_SHARE")
    keep, drop = [], []
    for item in items:
        if item.get_closest_marker("db") is None or item.path.parent != HERE:
            keep.append(item)
            continue
        if item.path.name not in DB_SHARES:
            raise pytest.UsageError(f"{item.path.name}: give it a share in runner-image/tests/conftest.py DB_SHARES")
        (keep if share is None or DB_SHARES[item.path.name] == share else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
