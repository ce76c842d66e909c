import pytest

# Tests that start a real server are "db" tests (hack/test.sh db), whatever module they are in.
SERVER_FIXTURES = {"voltdb", "voltdb_cluster", "secantus", "own_secantus"}


def pytest_configure(config):
    config.addinivalue_line("markers", "db: needs a real database server (started by the test)")
    config.addinivalue_line("markers", "k8s: needs the local Kubernetes (hack/local-k8s.sh)")


def pytest_collection_modifyitems(items):
    for item in items:
        if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.db)
