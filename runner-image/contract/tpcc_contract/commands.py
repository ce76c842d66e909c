"""The runner command lines the operator writes into its Jobs, typed: one dataclass per `tpcc`
command, each field named as the runner's parser names the option (its dest) and holding the value
the parser gives it back, and `to_argv()` the line itself. The operator builds these
(runner_jobs.py, workloads/); operator/tests/test_runner_contract.py parses every line with the
runner's own parser (tpcc_runner.cli.build_parser) and holds the two to each other in both
directions: each field is an option of the command, each option is a field or left to the runner."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


def _flag(option: str, on: bool) -> list[str]:
    return [option] if on else []


def _option(option: str, value: object | None) -> list[str]:
    return [] if value is None else [option, str(value)]


def _repeated(option: str, values: tuple[str, ...]) -> list[str]:
    return [a for value in values for a in (option, value)]


@dataclass(frozen=True)
class Connection:
    """The options of every command that talks to the database."""

    db: str
    endpoints: str  # host[:port],...
    connect_timeout: int
    metrics_port: int  # 0: no /metrics
    driver_opt: tuple[str, ...] = ()  # KEY=VALUE each

    def to_argv(self) -> list[str]:
        return [
            "--db",
            self.db,
            "--endpoints",
            self.endpoints,
            "--connect-timeout",
            str(self.connect_timeout),
            "--metrics-port",
            str(self.metrics_port),
            *_repeated("--driver-opt", self.driver_opt),
        ]


@dataclass(frozen=True)
class RunnerPod:
    """What each pod of an Indexed runner Job is told: its shard, the start ConfigMap whose startAt
    is the barrier, its results ConfigMap, and the ledger of every acknowledged write it holds after
    the run until the verifier has read the ledgers of all pods (ledgersVerified in the start
    ConfigMap)."""

    shard: str  # INDEX/COUNT; INDEX is the Job's $(JOB_COMPLETION_INDEX)
    start_configmap: str
    results_configmap: str
    ledger: str
    hold_ledger: str
    ledger_port: int
    hold_timeout: int

    def to_argv(self) -> list[str]:
        return [
            "--shard",
            self.shard,
            "--start-configmap",
            self.start_configmap,
            "--results-configmap",
            self.results_configmap,
            "--ledger",
            self.ledger,
            "--hold-ledger",
            self.hold_ledger,
            "--ledger-port",
            str(self.ledger_port),
            "--hold-timeout",
            str(self.hold_timeout),
        ]


class RunnerCommand:
    """A `tpcc` command line: its words (the subcommands), then its options."""

    words: ClassVar[tuple[str, ...]]

    def to_argv(self) -> list[str]:
        raise NotImplementedError


@dataclass(frozen=True)
class Load(RunnerCommand):
    """`tpcc load`: the TPC-C warehouses."""

    words: ClassVar[tuple[str, ...]] = ("load",)
    connection: Connection
    warehouses: int
    workers: int
    seed: int
    results_configmap: str  # load.json, and with check load-check.json
    reset: bool = False
    refuse_existing: bool = False
    check: bool = False
    scale_down: int | None = None  # workload.scaleDown: the specification's rows per warehouse divided by it

    def to_argv(self) -> list[str]:
        return [
            *self.words,
            *self.connection.to_argv(),
            "--warehouses",
            str(self.warehouses),
            "--workers",
            str(self.workers),
            "--seed",
            str(self.seed),
            *(["--scale-down", str(self.scale_down)] if self.scale_down is not None else []),
            *_flag("--reset", self.reset),
            *_flag("--refuse-existing", self.refuse_existing),
            "--results-configmap",
            self.results_configmap,
            *_flag("--check", self.check),
        ]


@dataclass(frozen=True)
class Run(RunnerCommand):
    """`tpcc run`: one runner pod's terminals, its share of total_clients."""

    words: ClassVar[tuple[str, ...]] = ("run",)
    connection: Connection
    warehouses: int
    total_clients: int
    duration: int
    warmup: int
    mix: tuple[int, int, int, int, int]  # NewOrder, Payment, OrderStatus, Delivery, StockLevel
    seed: int
    pod: RunnerPod
    think_time: bool = False
    remote_line_percent: int | None = None  # None: the runner's clause value
    remote_payment_percent: int | None = None
    retry_wait: str | None = None  # None: the runner's default (backoff)
    target_tps: int | None = None  # over all pods' terminals; None: no limit

    def to_argv(self) -> list[str]:
        return [
            *self.words,
            *self.connection.to_argv(),
            "--warehouses",
            str(self.warehouses),
            "--total-clients",
            str(self.total_clients),
            "--duration",
            str(self.duration),
            "--warmup",
            str(self.warmup),
            "--mix",
            ",".join(str(n) for n in self.mix),
            "--seed",
            str(self.seed),
            *_flag("--think-time", self.think_time),
            *_option("--remote-line-percent", self.remote_line_percent),
            *_option("--remote-payment-percent", self.remote_payment_percent),
            *_option("--retry-wait", self.retry_wait),
            *_option("--target-tps", self.target_tps),
            *self.pod.to_argv(),
        ]


@dataclass(frozen=True)
class VerifyLedger(RunnerCommand):
    """`tpcc verify-ledger`: every acknowledged NewOrder of all runner pods' ledgers, together."""

    words: ClassVar[tuple[str, ...]] = ("verify-ledger",)
    connection: Connection
    ledger: tuple[str, ...]  # each runner pod's ledger URL
    results_configmap: str  # durability.json

    def to_argv(self) -> list[str]:
        return [
            *self.words,
            *self.connection.to_argv(),
            *_repeated("--ledger", self.ledger),
            "--results-configmap",
            self.results_configmap,
        ]


@dataclass(frozen=True)
class Check(RunnerCommand):
    """`tpcc check`: the 12 consistency conditions; with snapshot, while transactions run."""

    words: ClassVar[tuple[str, ...]] = ("check",)
    connection: Connection
    warehouses: int
    results_configmap: str
    snapshot: bool = False
    deliveries: tuple[str, ...] = ()  # the runner pods' deliveries.json files (condition 11)
    results_key: str | None = None  # None: the runner's check.json

    def to_argv(self) -> list[str]:
        return [
            *self.words,
            *_flag("--snapshot", self.snapshot),
            *self.connection.to_argv(),
            "--warehouses",
            str(self.warehouses),
            *_repeated("--deliveries", self.deliveries),
            "--results-configmap",
            self.results_configmap,
            *_option("--results-key", self.results_key),
        ]


@dataclass(frozen=True)
class Acid(RunnerCommand):
    """`tpcc acid`: the ACID tests of clause 3."""

    words: ClassVar[tuple[str, ...]] = ("acid",)
    connection: Connection
    seed: int
    results_configmap: str  # acid.json
    tests: tuple[str, ...] | None = None  # None: all of them

    def to_argv(self) -> list[str]:
        return [
            *self.words,
            *self.connection.to_argv(),
            *(["--tests", ",".join(self.tests)] if self.tests else []),
            "--seed",
            str(self.seed),
            "--results-configmap",
            self.results_configmap,
        ]


@dataclass(frozen=True)
class Changepoints(RunnerCommand):
    """`tpcc changepoints`: E-Divisive change points over a run history."""

    words: ClassVar[tuple[str, ...]] = ("changepoints",)
    history: str  # history.json's path in the pod
    max_pvalue: float
    results_configmap: str  # changepoints.json

    def to_argv(self) -> list[str]:
        return [
            *self.words,
            "--history",
            self.history,
            "--max-pvalue",
            repr(self.max_pvalue),
            "--results-configmap",
            self.results_configmap,
        ]


@dataclass(frozen=True)
class YcsbWorkload:
    """What every `tpcc ycsb` phase is told of the workload: the preset, then each property as
    `-p NAME=VALUE` (a run's flags, which the runner applies last, follow)."""

    workload: str
    properties: tuple[tuple[str, str], ...]  # (name, value), sorted by name

    def to_argv(self) -> list[str]:
        return ["--workload", self.workload, *[a for name, value in self.properties for a in ("-p", f"{name}={value}")]]


@dataclass(frozen=True)
class YcsbLoad(RunnerCommand):
    """`tpcc ycsb load`: the records."""

    words: ClassVar[tuple[str, ...]] = ("ycsb", "load")
    ycsb: YcsbWorkload
    connection: Connection
    threads: int
    seed: int
    results_configmap: str  # load.json
    reset: bool = False

    def to_argv(self) -> list[str]:
        return [
            *self.words,
            *self.ycsb.to_argv(),
            *self.connection.to_argv(),
            "--threads",
            str(self.threads),
            "--seed",
            str(self.seed),
            *_flag("--reset", self.reset),
            "--results-configmap",
            self.results_configmap,
        ]


@dataclass(frozen=True)
class YcsbRun(RunnerCommand):
    """`tpcc ycsb run`: one runner pod's threads, its share of total_threads and of the target."""

    words: ClassVar[tuple[str, ...]] = ("ycsb", "run")
    ycsb: YcsbWorkload
    connection: Connection
    total_threads: int
    seed: int
    duration: int  # warmup and measured seconds: YCSB's maxexecutiontime
    pod: RunnerPod
    target: float | None = None  # this pod's operations per second; None: no limit

    def to_argv(self) -> list[str]:
        return [
            *self.words,
            *self.ycsb.to_argv(),
            *self.connection.to_argv(),
            "--total-threads",
            str(self.total_threads),
            "--seed",
            str(self.seed),
            "--duration",
            str(self.duration),
            *([] if self.target is None else ["--target", repr(self.target)]),
            *self.pod.to_argv(),
        ]


@dataclass(frozen=True)
class YcsbVerify(RunnerCommand):
    """`tpcc ycsb verify`: every acknowledged write of all ledgers, and the record count."""

    words: ClassVar[tuple[str, ...]] = ("ycsb", "verify")
    ycsb: YcsbWorkload
    connection: Connection
    ledger: tuple[str, ...]
    results_configmap: str  # durability.json

    def to_argv(self) -> list[str]:
        return [
            *self.words,
            *self.ycsb.to_argv(),
            *self.connection.to_argv(),
            *_repeated("--ledger", self.ledger),
            "--results-configmap",
            self.results_configmap,
        ]
