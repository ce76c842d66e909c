"""Fixtures of the operator's unit tests."""
import pytest
from crd_schema import defaulted_spec


@pytest.fixture
def spec_of():
    return defaulted_spec
