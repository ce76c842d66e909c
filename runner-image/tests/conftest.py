import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "db: needs a real database server (started by the test)")
    config.addinivalue_line("markers", "k8s: needs the local Kubernetes (hack/local-k8s.sh)")
