"""YCSB workload properties, typed: the names, defaults and meanings of YCSB 0.17's
CoreWorkload, TimeSeriesWorkload and Client (`-p name=value` on YCSB's command line), the presets
A-F and TimeSeries A exactly as YCSB's workloads/workloada..f and tsworkloada files, and
validation that names the property at fault.

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
TIMESERIES_WORKLOAD_CLASSES = (
    "site.ycsb.workloads.TimeSeriesWorkload",
    "com.yahoo.ycsb.workloads.TimeSeriesWorkload",
)
CORE, TIMESERIES = "core", "timeseries"
# TimeSeriesWorkload's key chooser: CoreWorkload's distributions but latest and exponential
TIMESERIES_REQUEST_DISTRIBUTIONS = ("uniform", "sequential", "zipfian", "hotspot")
TIMESTAMP_UNITS = ("SECONDS", "MILLISECONDS", "MINUTES", "HOURS", "DAYS")  # YCSB refuses NANO/MICRO
VALUE_TYPES = ("integers", "floats", "mixednumbers")
KEY_ALPHABET = 52  # IncrementingPrintableStringGenerator's default set: A-Z and a-z

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
    # tsworkloada also says delayedSeries=0.0 and delayedIntervals=0: YCSB's names are all lower
    # case (delayedseries, delayedintervals), so YCSB ignores those two lines and runs with the
    # defaults 0.10 and 5; the preset leaves them out to run what YCSB runs.
    "tsa": {
        "workload": TIMESERIES_WORKLOAD_CLASSES[0],
        "recordcount": "1474560",
        "operationcount": "2949120",
        "fieldlength": "8",
        "fieldcount": "64",
        "tagcount": "4",
        "tagcardinality": "1,2,4,2",
        "sparsity": "0.0",
        "timestampunits": "SECONDS",
        "timestampinterval": "60",
        "querytimespan": "3600",
        "readproportion": "0.10",
        "updateproportion": "0.00",
        "insertproportion": "0.90",
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
    # TimeSeriesWorkload (workload == TIMESERIES): fieldcount is the number of series keys,
    # fieldlength their length, insertstart the first timestamp (0: the clock at the start)
    workload: str = CORE
    timestampkey: str = "YCSBTS"
    valuekey: str = "YCSBV"
    timestampinterval: int = 60
    timestampunits: str = "SECONDS"
    tagcount: int = 4
    tagcardinality: tuple[int, ...] = (1, 2, 4, 8)
    tagkeylength: int = 8
    tagvaluelength: int = 8
    tagpairdelimiter: str = "="
    deletedelimiter: str = ":"  # 0.17's operation chooser never picks DELETE: read, not used
    randomwritetimestamporder: bool = False
    randomtimeseriesorder: bool = True
    valuetype: str = "floats"
    sparsity: float = 0.0
    delayedseries: float = 0.10
    delayedintervals: int = 5
    querytimespan: int = 0
    queryrandomtimespan: bool = False
    querytimespandelimiter: str = ","
    groupbykey: str = "YCSBGB"
    groupbyfunction: str = ""
    groupbykeys: tuple[bool, ...] = ()
    downsamplingkey: str = "YCSBDS"
    downsamplingfunction: str = ""
    downsamplinginterval: int = 0

    @property
    def timeseries(self) -> bool:
        return self.workload == TIMESERIES

    @property
    def fields_per_record(self) -> int:
        """The fields a record holds: fieldcount, or a series key's tags, timestamp and value."""
        return self.tagcount + 2 if self.timeseries else self.fieldcount

    @property
    def records_to_load(self) -> int:
        if self.insertcount is not None:
            return self.insertcount
        return self.recordcount if self.timeseries else self.recordcount - self.insertstart

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
        if not self.timeseries:
            return {name: getattr(self, attr) for name, (attr, _) in _SPECS.items()}
        specs = {**_SPECS, **_TIMESERIES_SPECS}
        return {"workload": TIMESERIES_WORKLOAD_CLASSES[0], **{n: getattr(self, a) for n, (a, _) in specs.items()}}

    def tag_cardinalities(self) -> tuple[int, ...]:
        """One cardinality per tag: tagcardinality's first tagcount, 1 for tags it leaves out
        (what TimeSeriesWorkload's comment says; its code sets only the first of them to 1 and
        leaves the others 0, on which its reads fail)."""
        given = self.tagcardinality[: self.tagcount]
        return given + (1,) * (self.tagcount - len(given))

    def series_count(self) -> int:
        """Time series in all: fieldcount keys times every combination of tag values."""
        return self.fieldcount * math.prod(self.tag_cardinalities())


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


def _choice(*allowed: str, fold: Callable[[str], str] = str) -> Callable[[str], str]:
    """fold: how YCSB reads the name before comparing (str.upper for timestampunits)."""

    def parse(text: str) -> str:
        if fold(text) not in allowed:
            raise PropertyError("one of " + "|".join(allowed))
        return fold(text)

    return parse


def _cardinalities(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise PropertyError("whole numbers >= 1 separated by commas") from None
    if any(value < 1 for value in values):
        raise PropertyError("whole numbers >= 1 separated by commas")
    return values


def _flags(text: str) -> tuple[bool, ...]:
    try:
        return tuple(int(part) != 0 for part in text.split(","))
    except ValueError:
        raise PropertyError("0s and 1s separated by commas, one per tag") from None


def _any_text(text: str) -> str:
    return text


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
# TimeSeriesWorkload's own (YCSB 0.17's names; CoreWorkload ignores them, so here they are
# refused with it: a typo'd workload class would otherwise run CoreWorkload silently)
_TIMESERIES_SPECS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "timestampkey": ("timestampkey", _text),
    "valuekey": ("valuekey", _text),
    "timestampinterval": ("timestampinterval", _count),
    "timestampunits": ("timestampunits", _choice(*TIMESTAMP_UNITS, fold=str.upper)),
    "tagcount": ("tagcount", _count),
    "tagcardinality": ("tagcardinality", _cardinalities),
    "tagkeylength": ("tagkeylength", _count),
    "tagvaluelength": ("tagvaluelength", _count),
    "tagpairdelimiter": ("tagpairdelimiter", _text),
    "deletedelimiter": ("deletedelimiter", _text),
    "randomwritetimestamporder": ("randomwritetimestamporder", _boolean),
    "randomtimeseriesorder": ("randomtimeseriesorder", _boolean),
    "valuetype": ("valuetype", _choice(*VALUE_TYPES, fold=str.lower)),
    "sparsity": ("sparsity", _real),
    "delayedseries": ("delayedseries", _real),
    "delayedintervals": ("delayedintervals", _count),
    "querytimespan": ("querytimespan", _count),
    "queryrandomtimespan": ("queryrandomtimespan", _boolean),
    "querytimespandelimiter": ("querytimespandelimiter", _text),
    "groupbykey": ("groupbykey", _text),
    "groupbyfunction": ("groupbyfunction", _any_text),
    "groupbykeys": ("groupbykeys", _flags),
    "downsamplingkey": ("downsamplingkey", _text),
    "downsamplingfunction": ("downsamplingfunction", _any_text),
    "downsamplinginterval": ("downsamplinginterval", _count),
}
PROPERTY_NAMES = tuple(_SPECS)
TIMESERIES_PROPERTY_NAMES = tuple(_TIMESERIES_SPECS)


def resolve(preset: str | None, overrides: dict[str, str]) -> Properties:
    """A preset's properties (or CoreWorkload's defaults) with the overrides on top, checked."""
    if preset is not None and preset not in PRESETS:
        raise PropertyError(f"unknown workload {preset!r} (one of {', '.join(sorted(PRESETS))})")
    given = {**(PRESETS[preset] if preset else {}), **overrides}
    workload = _workload_kind(given.pop("workload", CORE_WORKLOAD_CLASSES[0]).strip())
    specs = {**_SPECS, **(_TIMESERIES_SPECS if workload == TIMESERIES else {})}
    if timeseries_only := sorted(set(given) & set(_TIMESERIES_SPECS) - set(specs)):
        raise PropertyError(
            f"property {', '.join(timeseries_only)}: TimeSeriesWorkload's, not CoreWorkload's "
            f"(set workload={TIMESERIES_WORKLOAD_CLASSES[0]} or the preset tsa)"
        )
    if unknown := sorted(set(given) - set(specs)):
        raise PropertyError(f"unknown property {', '.join(unknown)} (known: {', '.join(specs)})")
    values: dict[str, Any] = {"workload": workload}
    for name, text in given.items():
        attribute, parse = specs[name]
        try:
            values[attribute] = parse(text.strip())
        except PropertyError as want:
            raise PropertyError(f"property {name} must be {want}, got {text!r}") from None
    props = Properties(**values)
    validate(props)
    if props.timeseries:
        validate_timeseries(props)
    return props


def _workload_kind(workload_class: str) -> str:
    if workload_class in CORE_WORKLOAD_CLASSES:
        return CORE
    if workload_class in TIMESERIES_WORKLOAD_CLASSES:
        return TIMESERIES
    raise PropertyError(
        f"property workload must be one of {', '.join(CORE_WORKLOAD_CLASSES + TIMESERIES_WORKLOAD_CLASSES)}, "
        f"got {workload_class!r}"
    )


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
    if not p.timeseries and p.recordcount < p.insertstart + p.records_to_load:
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
    if p.requestdistribution == "zipfian" and p.operationcount == 0 and p.insertproportion > 0 and not p.timeseries:
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


def _refuse_if(wrong: bool, message: str) -> None:
    if wrong:
        raise PropertyError(message)


def validate_timeseries(p: Properties) -> None:
    """TimeSeriesWorkload's rules, and the settings on which YCSB's code fails at run time (a
    division or Random.nextInt by zero, keys that repeat) or which it cannot check, refused here
    with the property named."""
    _refuse_if(
        p.requestdistribution not in TIMESERIES_REQUEST_DISTRIBUTIONS,
        f"property requestdistribution must be one of {'|'.join(TIMESERIES_REQUEST_DISTRIBUTIONS)} "
        f"with TimeSeriesWorkload, got {p.requestdistribution!r}",
    )
    _refuse_if(
        p.readmodifywriteproportion > 0,
        "property readmodifywriteproportion must be 0 with TimeSeriesWorkload (YCSB's client thread stops at one)",
    )
    _refuse_if(
        p.fieldcount < p.threadcount,
        f"property fieldcount ({p.fieldcount}: the series keys) must be >= threadcount ({p.threadcount}), as YCSB's",
    )
    for name in ("tagcount", "tagkeylength", "tagvaluelength", "timestampinterval"):
        _refuse_if(getattr(p, name) < 1, f"property {name} must be >= 1, got {getattr(p, name)}")
    for name, length, needed in (
        ("fieldlength", p.fieldlength, p.fieldcount),
        ("tagkeylength", p.tagkeylength, p.tagcount),
        ("tagvaluelength", p.tagvaluelength, max(p.tag_cardinalities())),
    ):
        _refuse_if(
            KEY_ALPHABET**length < needed,
            f"property {name} {length} gives {KEY_ALPHABET**length} distinct strings of A-Z, a-z, "
            f"fewer than the {needed} needed",
        )
    _validate_timeseries_values(p)


def _validate_timeseries_values(p: Properties) -> None:
    _refuse_if(not 0 <= p.sparsity < 1, f"property sparsity must be >= 0 and < 1, got {p.sparsity}")
    _refuse_if(not 0 <= p.delayedseries <= 1, f"property delayedseries must be between 0 and 1, got {p.delayedseries}")
    _refuse_if(
        p.delayedseries > 0 and p.delayedintervals < 1, "property delayedintervals must be >= 1 when delayedseries > 0"
    )
    _refuse_if(
        p.queryrandomtimespan and p.querytimespan < p.timestampinterval,
        f"property querytimespan ({p.querytimespan}) must be >= timestampinterval ({p.timestampinterval}) "
        "with queryrandomtimespan=true",
    )
    _refuse_if(
        bool(p.groupbyfunction) and len(p.groupbykeys) != p.tagcount,
        f"property groupbykeys must have one 0 or 1 per tag ({p.tagcount}) when groupbyfunction is set",
    )
    _refuse_if(
        bool(p.downsamplingfunction) and p.downsamplinginterval < 1,
        "property downsamplinginterval must be >= 1 when downsamplingfunction is set",
    )
    _refuse_if(
        (p.readproportion > 0 or p.scanproportion > 0) and p.recordcount < p.series_count(),
        f"property recordcount ({p.recordcount}) must be >= the number of series ({p.series_count()}: fieldcount "
        "times the tag cardinalities) for reads and scans: YCSB picks their timestamps among recordcount / series - 1",
    )
    _refuse_if(p.randomwritetimestamporder, "property randomwritetimestamporder=true is not implemented here")
    _refuse_if(
        p.dataintegrity,
        "property dataintegrity=true is not implemented for TimeSeriesWorkload: YCSB's check compares the "
        "fields a read returns, and a read asks for fields named tag=value that no store holds, so it would pass empty",
    )
    _refuse_if(
        p.operationspertransaction != 1,
        "property operationspertransaction must be 1 with TimeSeriesWorkload (not implemented for its upserts)",
    )
