"""The parts of a BenchmarkRun's status the operator writes and reads again, as types: written
with `to_json`, read with `in_status` (jsonmodel's one mapping to the CRD's camelCase).

A field that every operator version wrote is required; one a later version added is `X | None`,
so a status written before it still reads (the test holds each part to the CRD's status schema,
field by field). What the runner's documents become is results.py's; this module only names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .jsonmodel import JsonModel

# status.acid.tests[].status, and what fails the run
ACID_FAILED, ACID_ERROR = "failed", "error"


@dataclass(frozen=True, kw_only=True)
class AcidTest(JsonModel):
    test: str
    clause: str
    status: str  # passed | failed | not-applicable | error
    reason: str


@dataclass(frozen=True, kw_only=True)
class Acid(JsonModel):
    """status.acid: each ACID test's verdict (the observed values stay in the BenchmarkResult's
    ConfigMap)."""

    passed: bool
    seed: int
    counts: Mapping[str, int]  # tests by status: passed, failed, not-applicable, error
    tests: tuple[AcidTest, ...]

    @property
    def failed(self) -> tuple[AcidTest, ...]:
        """The tests that failed or could not run."""
        return tuple(t for t in self.tests if t.status in (ACID_FAILED, ACID_ERROR))
