"""The typed parts of a BenchmarkRun's status, by the status field each is written to, and the
check that a status reads back as them and writes again the same JSON: test_phases' Driver makes
it on every status a stage test produces, test_status_types on the captured ones."""

from __future__ import annotations

from tpcc_operator.runstatus import Acid, Results, YcsbResults

PARTS: dict[str, type] = {
    "acid": Acid,
    "results": Results,
    "ycsb": YcsbResults,
}


def changed_by_types(status: dict) -> list[str]:
    """The status fields whose typed reading, written again, is not what the status holds."""
    return [
        key for key, cls in PARTS.items() if status.get(key) and cls.from_json(status[key]).to_json() != status[key]
    ]
