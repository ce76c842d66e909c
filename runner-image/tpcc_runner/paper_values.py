"""The numbers a study prints for one of its manifests (crds/samples/papers/), machine-readable,
and ours beside them from a BenchmarkRun's status. Pure.

A manifest's `bench.tpcc.dev/paper-values` annotation is a JSON list; each entry names

- `point`: the configuration the number is for, as the manifest's sweep axes name it:
  `warehouses`, `clients`, `matrix` ({field: value}); `{}` is the run itself (a single run, or a
  sweep of repetitions only). A point leaves out the axes the text does not vary, so it may match
  several of our configurations (VLDB Fig. 1 prints one value for both read preferences).
- `metric`: what the number measures (METRICS).
- `printed`: the number exactly as the text prints it ("34385", "142 62.36 258 98995 34" where the
  extraction split the digits, "3.5 times", "21.93%").
- `where`: the section, table or figure that prints it.
- `relativeTo` (optional): a relation. The number is then `point` against `relativeTo`, as the text
  says it: "N times" (point / relativeTo) or "N%" (the increase from relativeTo to point).

Ours: status.sweep.configurations (each configuration's median throughput) for a sweep, the run's
status.results / status.ycsb / status.load for a single run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

PREFIX = "bench.tpcc.dev/"
VALUES, PAPER, FIGURE = PREFIX + "paper-values", PREFIX + "paper", PREFIX + "figure"
# set by hack/k8s/papers.py on a run it shrank (--scaled): what it changed; a ratio then compares
# a small local run with the study's hardware and says nothing about either
SCALED = PREFIX + "scaled"

# metric -> how it reads
METRICS = {
    "tpmC": "tpmC",
    "opsPerSecond": "operations/s",
    "loadOpsPerSecond": "records loaded/s",
    "newOrders": "NewOrders executed",
    "transactions": "transactions executed",
    "aborts": "NewOrder rollbacks",
}
# the metrics status.sweep.configurations holds per configuration (a sweep's other counts are per cell)
THROUGHPUTS = ("tpmC", "opsPerSecond")
TIMES, PERCENT = "times", "percent"


@dataclass(frozen=True)
class Point:
    """A configuration as the manifest's axes name it; no field set: the run itself."""

    warehouses: int | None = None
    clients: int | None = None
    matrix: tuple[tuple[str, str], ...] = ()  # (field, value) as sweep.matrix names them

    @classmethod
    def of(cls, d: Mapping[str, Any]) -> Point:
        unknown = set(d) - {"warehouses", "clients", "matrix"}
        if unknown:
            raise ValueError(f"a point names warehouses, clients and matrix, not {sorted(unknown)}")
        matrix = d.get("matrix") or {}
        return cls(d.get("warehouses"), d.get("clients"), tuple((str(k), str(v)) for k, v in matrix.items()))

    def matches(self, warehouses: int | None, clients: int, matrix: Mapping[str, str]) -> bool:
        """Whether a configuration of ours is this point (the axes the point leaves out: any value)."""
        return (
            self.warehouses in (None, warehouses)
            and self.clients in (None, clients)
            and all(matrix.get(f) == v for f, v in self.matrix)
        )

    def label(self) -> str:
        parts = [f"{self.warehouses} warehouses"] if self.warehouses is not None else []
        parts += [f"{self.clients} clients"] if self.clients is not None else []
        parts += [f"{f.rpartition('.')[2]}={v}" for f, v in self.matrix]
        return ", ".join(parts) or "the run"

    def to_json(self) -> dict[str, Any]:
        return {
            **({"warehouses": self.warehouses} if self.warehouses is not None else {}),
            **({"clients": self.clients} if self.clients is not None else {}),
            **({"matrix": dict(self.matrix)} if self.matrix else {}),
        }


@dataclass(frozen=True)
class PaperValue:
    """One number a study prints, at one point (or a relation between two)."""

    point: Point
    metric: str
    printed: str
    where: str
    relative_to: Point | None = None

    def __post_init__(self) -> None:
        if self.metric not in METRICS:
            raise ValueError(f"{VALUES}: metric {self.metric!r} is none of {', '.join(METRICS)}")
        try:
            self.number  # noqa: B018 -- a printed form that is no number fails here, not when drawn
        except ValueError:
            raise ValueError(f"{VALUES}: printed {self.printed!r} is no number") from None

    @property
    def change(self) -> str:
        """How a relation is said: TIMES or PERCENT; "" for an absolute value."""
        if self.relative_to is None:
            return ""
        return PERCENT if self.printed.endswith("%") else TIMES

    @property
    def number(self) -> float:
        """The printed number read: digits the extraction split by spaces joined, the unit dropped."""
        digits = self.printed.removesuffix("%").removesuffix("times")
        return float(digits.replace(" ", "").replace(",", ""))

    def label(self) -> str:
        if self.relative_to is None:
            return self.point.label()
        return f"{self.point.label()} against {self.relative_to.label()}"

    def to_json(self) -> dict[str, Any]:
        return {
            "point": self.point.to_json(),
            **({"relativeTo": self.relative_to.to_json()} if self.relative_to is not None else {}),
            "metric": self.metric,
            "printed": self.printed,
            "where": self.where,
        }


def parse(text: str) -> tuple[PaperValue, ...]:
    """The annotation's entries; ValueError naming what is wrong."""
    entries = json.loads(text)
    if not isinstance(entries, list):
        raise ValueError(f"{VALUES} is a JSON list, not {type(entries).__name__}")
    return tuple(
        PaperValue(
            Point.of(e["point"]),
            str(e.get("metric")),
            str(e["printed"]),
            str(e["where"]),
            Point.of(e["relativeTo"]) if e.get("relativeTo") is not None else None,
        )
        for e in entries
    )


def to_annotation(values: Sequence[PaperValue]) -> str:
    """The annotation's text: one entry a line."""
    return "[\n" + ",\n".join(json.dumps(v.to_json(), ensure_ascii=False) for v in values) + "\n]\n"


@dataclass(frozen=True)
class PaperFigure:
    """What a BenchmarkRun's annotations say it reproduces, and the numbers printed for it."""

    paper: str
    figure: str
    values: tuple[PaperValue, ...]
    scaled: str = ""  # what hack/k8s/papers.py changed to run it here ("": as written)

    def caption(self) -> str:
        return f"{self.paper}, {self.figure}"

    def short_caption(self) -> str:
        """The study and its figure's number, without the figure's description (a legend's)."""
        return f"{self.paper}, {self.figure.split(':')[0]}"


def figure_of(metadata: Mapping[str, Any]) -> PaperFigure | None:
    """The paper figure of a BenchmarkRun's metadata; None without paper values."""
    notes = metadata.get("annotations") or {}
    if not notes.get(VALUES):
        return None
    return PaperFigure(
        str(notes.get(PAPER, "")), str(notes.get(FIGURE, "")), parse(notes[VALUES]), str(notes.get(SCALED, ""))
    )


@dataclass(frozen=True)
class Measured:
    """One configuration of ours: a sweep's (its median over repetitions), or the run."""

    warehouses: int | None  # None: a YCSB sweep's (its configurations have no warehouses)
    clients: int
    matrix: Mapping[str, str] = field(default_factory=dict)
    values: Mapping[str, float] = field(default_factory=dict)  # metric -> ours

    def label(self) -> str:
        return Point(self.warehouses, self.clients, tuple(self.matrix.items())).label()


def measured(spec: Mapping[str, Any], status: Mapping[str, Any]) -> list[Measured]:
    """Our configurations: status.sweep.configurations for a sweep, else the run's figures."""
    sweep = status.get("sweep") or {}
    if sweep.get("cells"):
        return [
            Measured(
                int(c["warehouses"]) if "warehouses" in c else None,
                int(c["clients"]),
                {str(k): str(v) for k, v in (c.get("matrix") or {}).items()},
                {m: float(c[m]["median"]) for m in THROUGHPUTS if "median" in (c.get(m) or {})},
            )
            for c in sweep.get("configurations") or []
        ]
    workload = spec.get("workload") or {}
    ours = _run_figures(status)
    if not ours:
        return []
    return [Measured(int(workload.get("warehouses", 0)), int(workload.get("clients", 0)), {}, ours)]


def _run_figures(status: Mapping[str, Any]) -> dict[str, float]:
    """A single run's figures by metric, those its status has."""
    results, ycsb, load = status.get("results") or {}, status.get("ycsb") or {}, status.get("load") or {}
    types = results.get("transactions") or {}
    out: dict[str, float] = {}
    if results.get("tpmC") is not None:
        out["tpmC"] = float(results["tpmC"])
        out["transactions"] = float(sum(int(t.get("executed", 0)) for t in types.values()))
        out["aborts"] = float(results.get("aborts", 0))
    if "NEW_ORDER" in types:
        out["newOrders"] = float(types["NEW_ORDER"].get("executed", 0))
    if ycsb.get("opsPerSecond") is not None:
        out["opsPerSecond"] = float(ycsb["opsPerSecond"])
        if load.get("rowsPerSecond"):
            out["loadOpsPerSecond"] = float(load["rowsPerSecond"])
    return out


@dataclass(frozen=True)
class Comparison:
    """A printed value and ours at the same point (for a relation: ours said the same way)."""

    value: PaperValue
    ours: float | None  # None: no configuration of ours at that point, or none with this metric
    configuration: str = ""  # which configuration of ours ("" when none)

    @property
    def ratio(self) -> float | None:
        """Ours over the paper's, for an absolute value measured here."""
        if self.ours is None or self.value.change or self.value.number == 0:
            return None
        return self.ours / self.value.number

    def ours_text(self) -> str:
        if self.ours is None:
            return "not measured"
        if self.value.change == PERCENT:
            return f"{self.ours:+.2f}%"
        if self.value.change == TIMES:
            return f"{self.ours:.2f} times"
        return f"{self.ours:,.2f}" if self.ours < 100 else f"{self.ours:,.0f}"


def compare(values: Sequence[PaperValue], ours: Sequence[Measured]) -> list[Comparison]:
    """Each value beside each of our configurations at its point (a point leaving an axis out
    matches one of ours per value of it); one Comparison without ours where none matches."""
    out = []
    for v in values:
        found = [
            Comparison(v, *_ours(v, m, ours))
            for m in ours
            if v.point.matches(m.warehouses, m.clients, m.matrix) and v.metric in m.values
        ]
        out += [c for c in found if c.ours is not None] or [Comparison(v, None)]
    return out


def _ours(value: PaperValue, at: Measured, ours: Sequence[Measured]) -> tuple[float | None, str]:
    """Ours at one configuration: its figure; for a relation, it against our one configuration at
    relativeTo (at the same warehouses and clients where relativeTo does not name them)."""
    if value.relative_to is None:
        return at.values[value.metric], at.label()
    base = value.relative_to
    there = Point(
        base.warehouses if base.warehouses is not None else at.warehouses,
        base.clients if base.clients is not None else at.clients,
        base.matrix,
    )
    against = [m for m in ours if there.matches(m.warehouses, m.clients, m.matrix) and value.metric in m.values]
    if len(against) != 1 or not against[0].values[value.metric]:
        return None, ""
    times = at.values[value.metric] / against[0].values[value.metric]
    return (times - 1) * 100 if value.change == PERCENT else times, f"{at.label()} against {against[0].label()}"
