"""BenchmarkRun's spec as types, read once at the edge (`RunSpec.parse`) and passed around as such.

Defaults live in one place, the CRD: the API server applies them to every object it stores, and
`parse` applies the same CRD's defaults (structural defaulting, as the API server does) to a spec
that did not come through it (a test's, a schedule's template), so both read alike. A field is
`X | None` exactly when the CRD neither requires nor defaults it; `test_runspec` holds every
dataclass and the CRD's schema to each other, field by field, in both directions.

The parsed document is kept (`RunSpec.document`) for what is defined over the JSON itself: the
spec and comparison hashes, and the copy recorded in each BenchmarkResult.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import os
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from .jsonmodel import json_name, named

# the operator chart carries the CRDs (and the image carries the charts: TPCC_CHARTS_DIR)
CRDS = Path("tpcc-operator") / "crds"
_REPO_CHARTS = Path(__file__).resolve().parents[2] / "charts"


T = TypeVar("T")


class SpecError(ValueError):
    """A spec the CRD's schema would not have admitted; the message names the field."""


@dataclass(frozen=True)
class CredentialsRef:
    name: str
    username_key: str
    password_key: str


@dataclass(frozen=True)
class External:
    endpoints: tuple[str, ...]
    credentials_secret_ref: CredentialsRef | None = None


@dataclass(frozen=True)
class Deploy:
    chart: str
    version: str
    replicas: int
    k_safety: int
    values: Mapping[str, Any] | None = None
    # preferred | required | none: the members kept off each other's nodes; None: as the chart's
    # values say (the shipped charts' default: preferred)
    anti_affinity: str | None = None


@dataclass(frozen=True)
class Database:
    type: str
    ready_timeout_seconds: int
    deploy: Deploy | None = None
    external: External | None = None

    @property
    def deployed(self) -> bool:
        return self.external is None


@dataclass(frozen=True)
class Mix:
    new_order: int
    payment: int
    order_status: int
    delivery: int
    stock_level: int


@dataclass(frozen=True)
class RemotePercent:
    new_order_lines: int | None = None
    payments: int | None = None


@dataclass(frozen=True)
class Ycsb:
    workload: str
    record_count: int
    operations_per_transaction: int
    batch_size: int
    target_ops_per_second: float | None = None
    properties: Mapping[str, str] | None = None


@dataclass(frozen=True)
class Workload:
    kind: str
    warehouses: int
    clients: int
    duration_seconds: int
    warmup_seconds: int
    load_workers: int
    connect_timeout_seconds: int
    max_error_percent: float
    mix: Mix
    pacing: str
    reset_before_load: bool | None = None
    scale_down: int | None = None
    load_timeout_seconds: int | None = None
    seed: int | None = None
    remote_percent: RemotePercent | None = None
    retry_wait: str | None = None  # None: the runner's backoff
    target_transactions_per_second: int | None = None  # None: back to back
    driver_options: Mapping[str, Any] | None = None
    ycsb: Ycsb | None = None

    @property
    def ycsb_or_defaults(self) -> Ycsb:
        """ycsb; absent (kind: ycsb without the block), the CRD's defaults for it."""
        return self.ycsb or defaulted(Ycsb, "workload", "ycsb")


@dataclass(frozen=True)
class Resources:
    requests: Mapping[str, Any] | None = None
    limits: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Runners:
    parallelism: int
    image: str
    image_pull_policy: str
    metrics_port: int
    start_delay_seconds: int
    ready_timeout_seconds: int
    resources: Resources | None = None


@dataclass(frozen=True)
class Acid:
    enabled: bool
    tests: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Verify:
    enabled: bool
    timeout_seconds: int
    after_load: bool
    during_run: bool
    acid: Acid | None = None

    @property
    def acid_tests(self) -> tuple[str, ...] | None:
        """The ACID tests to run (() for all of them), or None: not asked for."""
        if self.acid is None or not self.acid.enabled:
            return None
        return self.acid.tests or ()


@dataclass(frozen=True)
class Cleanup:
    policy: str
    ttl_seconds_after_finished: int | None = None


@dataclass(frozen=True)
class MatrixAxis:
    """One axis of sweep.matrix: a spec field (a path under spec) and the values it takes, as
    strings (the CRD allows only fields that leave the database's shape alone); paired with
    another axis, it takes its i-th value with that axis's i-th and adds no combinations."""

    field: str
    values: tuple[str, ...]
    paired_with: str | None = None


@dataclass(frozen=True)
class Saturation:
    """sweep.saturation: clients from start_clients, + step (or x factor) while within
    max_clients, until throughput grows less than min_gain_percent or a p90 limit breaks."""

    start_clients: int
    max_clients: int
    min_gain_percent: float
    step: int | None = None
    factor: int | None = None
    p90_limits_ms: Mapping[str, float] | None = field(default=None, metadata=named("p90LimitsMs"))


@dataclass(frozen=True)
class Sweep:
    repetitions: int
    warehouses: tuple[int, ...] | None = None
    clients: tuple[int, ...] | None = None
    matrix: tuple[MatrixAxis, ...] | None = None
    saturation: Saturation | None = None
    oversized_loads: str = "Refuse"  # Refuse | LeaveOut (sweep_layout)


@dataclass(frozen=True)
class History:
    limit: int
    delete_with_run: bool


@dataclass(frozen=True)
class FixedBaseline:
    tpm_c: float | None = field(default=None, metadata=named("tpmC"))
    p99_ms: Mapping[str, float] | None = None


@dataclass(frozen=True)
class Baseline:
    min_results: int
    previous: int | None = None
    result: str | None = None
    fixed: FixedBaseline | None = None


@dataclass(frozen=True)
class ChangePoints:
    enabled: bool
    min_history: int
    max_p_value: float = field(metadata=named("maxPValue"))
    recent_results: int


@dataclass(frozen=True)
class Regression:
    max_tpm_c_drop_percent: float = field(metadata=named("maxTpmCDropPercent"))
    max_p99_increase_percent: Mapping[str, float]
    on_regression: str
    baseline: Baseline | None = None
    change_points: ChangePoints | None = None

    @property
    def baseline_or_defaults(self) -> Baseline:
        """baseline; absent, the CRD's defaults for one."""
        return self.baseline or defaulted(Baseline, "regression", "baseline")


@dataclass(frozen=True)
class Chaos:
    """A chaos fault's Chaos Mesh experiment: its kind and its spec as the user wrote it (the
    operator adds the selector and, absent, the mode)."""

    kind: str
    spec: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Fault:
    action: str
    method: str
    pod_index: int
    after_seconds: int
    every_seconds: int
    count: int
    grace_period_seconds: int
    allow_data_loss: bool
    victim: str
    duration_seconds: int | None = None
    for_good: bool | None = None  # node-loss: lost for the rest of the measured interval
    delay_ms: int | None = None  # slow-network: netem's delay, jitter and loss
    jitter_ms: int | None = None
    loss_percent: float | None = None
    split: str | None = None  # partition: isolate | halves
    runners: str | None = None  # partition: everywhere | cut-off-side
    chaos: Chaos | None = None  # chaos: the Chaos Mesh experiment


@dataclass(frozen=True)
class Cost:
    price_per_hour: float
    currency: str


@dataclass(frozen=True)
class RunSpec:
    database: Database
    workload: Workload
    runners: Runners
    verify: Verify
    cleanup: Cleanup
    history: History
    faults: tuple[Fault, ...] | None = None
    sweep: Sweep | None = None
    regression: Regression | None = None
    baseline_tpm_c: float | None = field(default=None, metadata=named("baselineTpmC"))
    cost: Cost | None = None
    run_token: str | None = None
    # the defaulted JSON document this was parsed from (not a field of the CRD)
    document: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False, metadata={"document": True})

    @classmethod
    def parse(cls, spec: Mapping[str, Any], charts_dir: Path | None = None) -> RunSpec:
        """The typed spec of a BenchmarkRun's `spec`, with the CRD's defaults applied.
        Raises SpecError naming the field for what the CRD's schema rules out by type."""
        document = apply_defaults(crd_spec_schema(charts_dir), copy.deepcopy(dict(spec)))
        return dataclasses.replace(_build(cls, document, "spec"), document=document)

    @property
    def deploy(self) -> Deploy:
        """database.deploy; absent (and no external database) means the CRD's defaults."""
        return self.database.deploy or defaulted(Deploy, "database", "deploy")

    def section(self, name: str) -> Any:
        """A top-level section as JSON (for hashes and records, which are defined over it)."""
        return copy.deepcopy(self.document.get(name))


# ---- the CRD and its defaults ----------------------------------------------------------------


@functools.cache
def _crd_spec_schema(path: Path) -> dict:
    crd = yaml.safe_load(path.read_text())
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]


def crd_spec_schema(charts_dir: Path | None = None, crd: str = "benchmarkrun.yaml") -> dict:
    """The schema of `spec` in one of the operator's CRDs."""
    return _crd_spec_schema((charts_dir or charts_dir_of_image()) / CRDS / crd)


def charts_dir_of_image() -> Path:
    """Where the operator's charts are: TPCC_CHARTS_DIR in the image, else the repository's."""
    return Path(os.environ.get("TPCC_CHARTS_DIR", _REPO_CHARTS))


def defaulted(cls: type, *path: str) -> Any:
    """The section at `path` (under spec) written as `{}`: the CRD's defaults for it."""
    schema = crd_spec_schema()
    for key in path:
        schema = schema["properties"][key]
    return _build(cls, apply_defaults(schema, {}), ".".join(("spec", *path)))


def apply_defaults(schema: Mapping[str, Any], value: Any) -> Any:
    """Structural defaulting as the API server does it: an absent property with a default gets
    it, then every present object is defaulted in turn (arrays item by item)."""
    if isinstance(value, dict):
        for key, sub in (schema.get("properties") or {}).items():
            if key not in value and "default" in sub:
                value[key] = copy.deepcopy(sub["default"])
            if key in value:
                value[key] = apply_defaults(sub, value[key])
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key in value:
                value[key] = apply_defaults(extra, value[key])
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        value = [apply_defaults(schema["items"], v) for v in value]
    return value


# ---- JSON -> dataclasses -----------------------------------------------------------------------


def spec_fields(cls: type) -> list[dataclasses.Field]:
    """The fields of a spec dataclass that are fields of the CRD."""
    return [f for f in dataclasses.fields(cls) if not f.metadata.get("document")]


_type_hints = functools.cache(typing.get_type_hints)


def build(cls: type[T], document: Mapping[str, Any]) -> T:
    """The spec dataclass `cls` of a defaulted spec document (another CRD's: the schedule's).
    Raises SpecError naming the field for what the CRD's schema rules out by type."""
    return _build(cls, document, "spec")


def _build(cls: type, data: Any, path: str) -> Any:
    if not isinstance(data, Mapping):
        raise SpecError(f"{path}: expected an object, got {type(data).__name__}")
    hints = _type_hints(cls)
    kwargs = {}
    for f in spec_fields(cls):
        key, where = json_name(f), f"{path}.{json_name(f)}"
        if key in data and data[key] is not None:
            kwargs[f.name] = _convert(hints[f.name], data[key], where)
        elif f.default is dataclasses.MISSING:
            raise SpecError(f"{where}: required")
    return cls(**kwargs)


def _convert(hint: Any, value: Any, path: str) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return _convert(next(a for a in args if a is not type(None)), value, path)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _build(hint, value, path)
    if origin is tuple:
        if not isinstance(value, list):
            raise SpecError(f"{path}: expected a list, got {type(value).__name__}")
        return tuple(_convert(args[0], v, f"{path}[{i}]") for i, v in enumerate(value))
    if origin is Mapping:
        if not isinstance(value, Mapping):
            raise SpecError(f"{path}: expected an object, got {type(value).__name__}")
        if args and args[1] is float:
            return {k: _scalar(float, v, f"{path}.{k}") for k, v in value.items()}
        return copy.deepcopy(dict(value))
    return _scalar(hint, value, path)


def _scalar(hint: type, value: Any, path: str) -> Any:
    if hint is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, hint) and not (hint is int and isinstance(value, bool)):
        return value
    raise SpecError(f"{path}: expected {hint.__name__}, got {type(value).__name__} {value!r}")
