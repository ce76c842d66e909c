"""Fixtures of the operator's unit tests."""

import pytest
from crd_schema import defaulted_spec
from tpcc_operator.runspec import RunSpec


@pytest.fixture
def spec_of():
    """The typed spec of a BenchmarkRun spec as written (the CRD's defaults applied)."""
    return RunSpec.parse


@pytest.fixture
def document_of():
    """A BenchmarkRun's spec as the API server stores it (defaulted JSON): what a test edits the
    way a user edits the object; the operator reads it anew each tick."""
    return defaulted_spec
