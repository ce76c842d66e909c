"""YCSB CoreWorkload properties, typed: the names, defaults and meanings of YCSB 0.17's
CoreWorkload and Client (`-p name=value` on YCSB's command line), the presets A-F exactly as
YCSB's workloads/workloada..f files, and validation that names the property at fault.

    props = resolve("a", {"recordcount": "100000", "requestdistribution": "uniform"})

Where this is stricter than YCSB (which reads what it can and falls back to a default): an
unknown property, a value of the wrong kind, an unknown distribution name, a negative count or
proportions that do not add up to 1 are errors here (YCSB normalises the proportions by their
sum, so a typo there silently changes the mix). recordcount 0 (YCSB: 2^31-1 records) is refused.
Two properties are the runner's own: batchsize (YCSB's MongoDB binding reads it too: inserts
per bulk write on load) and operationspertransaction (the FoundationDB-vs-MongoDB study's
transactional runners: N operations per database transaction; 1 = none).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

OPERATIONS = ("READ", "UPDATE", "INSERT", "SCAN", "READMODIFYWRITE")
REQUEST_DISTRIBUTIONS = ("uniform", "zipfian", "latest", "hotspot", "sequential", "exponential")
FIELD_LENGTH_DISTRIBUTIONS = ("constant", "uniform", "zipfian")
SCAN_LENGTH_DISTRIBUTIONS = ("uniform", "zipfian")
INSERT_ORDERS = ("hashed", "ordered")
CORE_WORKLOAD_CLASSES = ("site.ycsb.workloads.CoreWorkload", "com.yahoo.ycsb.workloads.CoreWorkload")

# YCSB's workloads/workloada..f (0.15 and 0.17 differ only in the class name), property by property.
_COMMON = {"recordcount": "1000", "operationcount": "1000", "readallfields": "true"}
PRESETS: dict[str, dict[str, str]] = {
    "a": {
        **_COMMON,
        "readproportion": "0.5",
        "updateproportion": "0.5",
        "scanproportion": "0",
        "insertproportion": "0",
        "requestdistribution": "zipfian",
    },
    "b": {
        **_COMMON,
        "readproportion": "0.95",
        "updateproportion": "0.05",
        "scanproportion": "0",
        "insertproportion": "0",
        "requestdistribution": "zipfian",
    },
    "c": {
        **_COMMON,
        "readproportion": "1",
        "updateproportion": "0",
        "scanproportion": "0",
        "insertproportion": "0",
        "requestdistribution": "zipfian",
    },
    "d": {
        **_COMMON,
        "readproportion": "0.95",
        "updateproportion": "0",
        "scanproportion": "0",
        "insertproportion": "0.05",
        "requestdistribution": "latest",
    },
    "e": {
        **_COMMON,
        "readproportion": "0",
        "updateproportion": "0",
        "scanproportion": "0.95",
        "insertproportion": "0.05",
        "requestdistribution": "zipfian",
        "maxscanlength": "100",
        "scanlengthdistribution": "uniform",
    },
    "f": {
        **_COMMON,
        "readproportion": "0.5",
        "updateproportion": "0",
        "scanproportion": "0",
        "insertproportion": "0",
        "readmodifywriteproportion": "0.5",
        "requestdistribution": "zipfian",
    },
}


class PropertyError(ValueError):
    """A property that is unknown, of the wrong kind or inconsistent with another."""


@dataclass(frozen=True)
class Properties:
    """CoreWorkload's properties with YCSB's defaults (CoreWorkload.*_DEFAULT, Client's)."""

    recordcount: int = 1000  # YCSB's default 0 means 2^31-1; every preset says 1000
    operationcount: int = 1000  # 0: no limit (then maxexecutiontime ends the run)
    maxexecutiontime: float = 0.0  # seconds, 0: no limit
    threadcount: int = 1
    target: float = 0.0  # operations per second over all threads, 0: unthrottled
    table: str = "usertable"
    fieldcount: int = 10
    fieldnameprefix: str = "field"
    fieldlength: int = 100
    minfieldlength: int = 1
    fieldlengthdistribution: str = "constant"
    readallfields: bool = True
    writeallfields: bool = False
    readproportion: float = 0.95
    updateproportion: float = 0.05
    insertproportion: float = 0.0
    scanproportion: float = 0.0
    readmodifywriteproportion: float = 0.0
    requestdistribution: str = "uniform"
    hotspotdatafraction: float = 0.2
    hotspotopnfraction: float = 0.8
    exponential_percentile: float = 95.0
    exponential_frac: float = 0.8571428571
    insertorder: str = "hashed"
    insertstart: int = 0
    insertcount: int | None = None  # None: recordcount - insertstart
    zeropadding: int = 1
    minscanlength: int = 1
    maxscanlength: int = 1000
    scanlengthdistribution: str = "uniform"
    batchsize: int = 1
    operationspertransaction: int = 1
    dataintegrity: bool = False  # values derived from key and field; reads check them

    @property
    def records_to_load(self) -> int:
        return self.recordcount - self.insertstart if self.insertcount is None else self.insertcount

    def proportions(self) -> dict[str, float]:
        return {
            "READ": self.readproportion,
            "UPDATE": self.updateproportion,
            "INSERT": self.insertproportion,
            "SCAN": self.scanproportion,
            "READMODIFYWRITE": self.readmodifywriteproportion,
        }

    def field_names(self) -> list[str]:
        return [f"{self.fieldnameprefix}{i}" for i in range(self.fieldcount)]

    def to_ycsb(self) -> dict[str, Any]:
        """Every property under its YCSB name (for the results document)."""
        return {name: getattr(self, attr) for name, (attr, _) in _SPECS.items()}


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise PropertyError("a whole number") from None
    if value < 0:
        raise PropertyError("a whole number >= 0")
    return value


def _real(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise PropertyError("a number") from None
    if not math.isfinite(value) or value < 0:
        raise PropertyError("a number >= 0")
    return value


def _boolean(text: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise PropertyError("true or false")
    return text.lower() == "true"


def _text(text: str) -> str:
    if not text:
        raise PropertyError("not empty")
    return text


def _choice(*allowed: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in allowed:
            raise PropertyError("one of " + "|".join(allowed))
        return text

    return parse


# YCSB name -> (Properties attribute, parser of the text)
_SPECS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "recordcount": ("recordcount", _count),
    "operationcount": ("operationcount", _count),
    "maxexecutiontime": ("maxexecutiontime", _real),
    "threadcount": ("threadcount", _count),
    "target": ("target", _real),
    "table": ("table", _text),
    "fieldcount": ("fieldcount", _count),
    "fieldnameprefix": ("fieldnameprefix", _text),
    "fieldlength": ("fieldlength", _count),
    "minfieldlength": ("minfieldlength", _count),
    "fieldlengthdistribution": ("fieldlengthdistribution", _choice(*FIELD_LENGTH_DISTRIBUTIONS)),
    "readallfields": ("readallfields", _boolean),
    "writeallfields": ("writeallfields", _boolean),
    "readproportion": ("readproportion", _real),
    "updateproportion": ("updateproportion", _real),
    "insertproportion": ("insertproportion", _real),
    "scanproportion": ("scanproportion", _real),
    "readmodifywriteproportion": ("readmodifywriteproportion", _real),
    "requestdistribution": ("requestdistribution", _choice(*REQUEST_DISTRIBUTIONS)),
    "hotspotdatafraction": ("hotspotdatafraction", _real),
    "hotspotopnfraction": ("hotspotopnfraction", _real),
    "exponential.percentile": ("exponential_percentile", _real),
    "exponential.frac": ("exponential_frac", _real),
    "insertorder": ("insertorder", _choice(*INSERT_ORDERS)),
    "insertstart": ("insertstart", _count),
    "insertcount": ("insertcount", _count),
    "zeropadding": ("zeropadding", _count),
    "minscanlength": ("minscanlength", _count),
    "maxscanlength": ("maxscanlength", _count),
    "scanlengthdistribution": ("scanlengthdistribution", _choice(*SCAN_LENGTH_DISTRIBUTIONS)),
    "batchsize": ("batchsize", _count),
    "operationspertransaction": ("operationspertransaction", _count),
    "dataintegrity": ("dataintegrity", _boolean),
}
PROPERTY_NAMES = tuple(_SPECS)


def resolve(preset: str | None, overrides: dict[str, str]) -> Properties:
    """A preset's properties (or CoreWorkload's defaults) with the overrides on top, checked."""
    if preset is not None and preset not in PRESETS:
        raise PropertyError(f"unknown workload {preset!r} (one of {', '.join(sorted(PRESETS))})")
    given = {**(PRESETS[preset] if preset else {}), **overrides}
    workload_class = given.pop("workload", CORE_WORKLOAD_CLASSES[0])
    if workload_class not in CORE_WORKLOAD_CLASSES:
        raise PropertyError(f"property workload: only CoreWorkload is implemented, not {workload_class!r}")
    unknown = sorted(set(given) - set(_SPECS))
    if unknown:
        raise PropertyError(f"unknown property {', '.join(unknown)} (known: {', '.join(PROPERTY_NAMES)})")
    values = {}
    for name, text in given.items():
        attribute, parse = _SPECS[name]
        try:
            values[attribute] = parse(text.strip())
        except PropertyError as want:
            raise PropertyError(f"property {name} must be {want}, got {text!r}") from None
    props = Properties(**values)
    validate(props)
    return props


def validate(p: Properties) -> None:
    """The cross-property rules; each error names the property."""
    total = sum(p.proportions().values())
    if not math.isclose(total, 1.0, rel_tol=0, abs_tol=1e-9):
        raise PropertyError(
            "readproportion + updateproportion + insertproportion + scanproportion + "
            f"readmodifywriteproportion must be 1, got {total:g}"
        )
    for name in (
        "recordcount",
        "fieldcount",
        "threadcount",
        "batchsize",
        "operationspertransaction",
        "minscanlength",
        "fieldlength",
    ):
        if getattr(p, name) < 1:
            raise PropertyError(f"property {name} must be >= 1, got {getattr(p, name)}")
    if p.recordcount < p.insertstart + p.records_to_load:
        raise PropertyError(
            f"property recordcount ({p.recordcount}) must be >= insertstart + insertcount "
            f"({p.insertstart} + {p.records_to_load})"
        )
    if p.maxscanlength < p.minscanlength:
        raise PropertyError(f"property maxscanlength ({p.maxscanlength}) must be >= minscanlength ({p.minscanlength})")
    if p.fieldlengthdistribution != "constant" and p.fieldlength < p.minfieldlength:
        raise PropertyError(f"property fieldlength ({p.fieldlength}) must be >= minfieldlength ({p.minfieldlength})")
    for name in ("hotspotdatafraction", "hotspotopnfraction"):
        if not 0 <= getattr(p, name) <= 1:
            raise PropertyError(f"property {name} must be between 0 and 1, got {getattr(p, name)}")
    if not 0 < p.exponential_percentile < 100:
        raise PropertyError(
            f"property exponential.percentile must be between 0 and 100, got {p.exponential_percentile}"
        )
    if p.exponential_frac <= 0:
        raise PropertyError(f"property exponential.frac must be > 0, got {p.exponential_frac}")
    if p.requestdistribution == "zipfian" and p.operationcount == 0 and p.insertproportion > 0:
        raise PropertyError(
            "property operationcount must be > 0 with requestdistribution=zipfian and "
            "inserts: YCSB sizes the zipfian key space by the inserts it expects"
        )
    if p.dataintegrity and p.fieldlengthdistribution != "constant":
        raise PropertyError(
            "property dataintegrity=true needs fieldlengthdistribution=constant "
            "(as YCSB: the value a read is checked against has the field's length)"
        )
    if p.operationcount == 0 and p.maxexecutiontime == 0:
        raise PropertyError("property operationcount 0 (no limit) needs maxexecutiontime > 0")
