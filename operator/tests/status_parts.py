"""The typed parts of a BenchmarkRun's status, by the status field each is written to, and the
check that a status (and a BenchmarkResult's spec) reads back as them and writes again the same
JSON: test_phases' Driver makes it on every status and result a stage test produces,
test_status_types on the captured ones."""

from __future__ import annotations

from tpcc_operator.cost import CostFigure
from tpcc_operator.history import ResultRecord, ResultSpec, result_object
from tpcc_operator.placement import Placement
from tpcc_operator.runstatus import (
    Acid,
    Consistency,
    ConsistencyDuringRun,
    Durability,
    Load,
    Results,
    YcsbResults,
)
from tpcc_operator.sweep import Cell, Table, with_row

PARTS: dict[str, type] = {
    "acid": Acid,
    "results": Results,
    "ycsb": YcsbResults,
    "load": Load,
    "durability": Durability,
    "consistency": Consistency,
    "consistencyAfterLoad": Consistency,
    "consistencyDuringRun": ConsistencyDuringRun,
    "sweep": Table,
    "cost": CostFigure,
    "placement": Placement,
}


def changed_by_types(status: dict) -> list[str]:
    """The status fields whose typed reading, written again, is not what the status holds."""
    return [
        key for key, cls in PARTS.items() if status.get(key) and cls.from_json(status[key]).to_json() != status[key]
    ]


def result_changed_by_types(record: ResultRecord) -> bool:
    """Whether the BenchmarkResult's spec, read back as its type, writes another JSON."""
    written = result_object(record, "local/tpcc-runner:dev")["spec"]
    return ResultSpec.from_json(written).to_json() != written


def sweep_status(cells: list[dict], current: int = 0) -> dict:
    """A status.sweep of these rows (status.sweep.cells[] as JSON), counted as the operator counts."""
    rows = tuple(Cell.from_json(c) for c in cells)
    uncounted = Table(current=current, cells=rows, total=0, progress="", succeeded=0, failed=0, regressed=0)
    return with_row(uncounted, 0, rows[0]).to_json()
