"""The runner's Prometheus endpoint. Client processes measure; the parent process owns the
registry and adds up what they report, so one endpoint serves the whole runner."""

from __future__ import annotations

import collections
import socketserver
import threading
import time
from collections.abc import Callable, Iterable
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, Counter, Gauge, disable_created_metrics, make_wsgi_app
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from tpcc_contract.tpcc import TRANSACTIONS
from tpcc_contract.ycsb.measurements import Measurements

from .results import LATENCY_BUCKETS
from .ycsb.measurements import live_buckets, live_counts

# No `_created` series: prometheus_client's creation timestamp of every counter child, which
# nothing reads and which doubles each counter's series (process-wide, so set where it is imported).
disable_created_metrics()

# YCSB's operations take tens of microseconds on an in-memory database: buckets from 50 us
YCSB_LATENCY_BUCKETS = (
    0.00005,
    0.0001,
    0.00025,
    0.0005,
    0.00075,
    0.001,
    0.0015,
    0.002,
    0.003,
    0.005,
    0.0075,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)
PHASES = ("connecting", "loading", "waiting", "warmup", "measuring", "checking", "done", "failed")
TPMC_WINDOW_SECONDS = 10.0


class _YcsbCollector:
    """`tpcc ycsb`'s operations by measurement name and Return status, and their latencies, read
    at each scrape from the running client threads' measurements (source: () -> the threads'
    Measurements): the HdrHistograms YCSB's numbers come from, in YCSB_LATENCY_BUCKETS."""

    def __init__(self) -> None:
        self.source: Callable[[], list[Measurements]] | None = None

    def collect(self) -> Iterable[CounterMetricFamily | HistogramMetricFamily]:
        if self.source is None:
            return
        threads = self.source()
        family = CounterMetricFamily(
            "tpcc_ycsb_operations",
            "YCSB operations by operation and Return status (OK, NOT_FOUND, ERROR, ...)",
            labels=["operation", "status"],
        )
        for (name, status), count in sorted(live_counts(threads).items()):
            family.add_metric([name, status], count)
        yield family
        latency = HistogramMetricFamily(
            "tpcc_ycsb_operation_duration_seconds",
            "Latency of YCSB operations by measurement as YCSB "
            "names it (READ, UPDATE, ...; a failed one's under READ-FAILED, ...)",
            labels=["operation"],
        )
        bounds = [*map(str, YCSB_LATENCY_BUCKETS), "+Inf"]
        for name, buckets in sorted(live_buckets(threads, YCSB_LATENCY_BUCKETS).items()):
            latency.add_metric([name], list(zip(bounds, buckets.cumulative)), buckets.sum_seconds)
        yield latency


class _LatencyCollector:
    """Cumulative latency histograms fed with bucket counts from the client processes."""

    def __init__(self) -> None:
        self.buckets = {t: [0] * (len(LATENCY_BUCKETS) + 1) for t in TRANSACTIONS}
        self.sums = dict.fromkeys(TRANSACTIONS, 0.0)

    def add(self, txn: str, counts: list[int], total_seconds: float) -> None:
        mine = self.buckets[txn]
        for i, n in enumerate(counts):
            mine[i] += n
        self.sums[txn] += total_seconds

    def collect(self) -> Iterable[HistogramMetricFamily]:
        fam = HistogramMetricFamily(
            "tpcc_transaction_duration_seconds",
            "Latency of executed transactions (committed or rolled back)",
            labels=["type"],
        )
        for txn in TRANSACTIONS:
            cumulative, buckets = 0, []
            for bound, n in zip([*map(str, LATENCY_BUCKETS), "+Inf"], self.buckets[txn]):
                cumulative += n
                buckets.append((bound, cumulative))
            fam.add_metric([txn], buckets, self.sums[txn])
        yield fam


class _ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args) -> None:  # a probe every 2 s is not news
        pass


class RunnerMetrics:
    def __init__(self) -> None:
        # Set once every client process of a run has connected all its terminals: /ready
        # answers 200 from then on, so a Kubernetes readiness probe waits for the connections.
        self.ready = threading.Event()
        self.registry = CollectorRegistry()
        r = self.registry
        self.transactions = Counter(
            "tpcc_transactions",
            "Transactions by type and outcome (committed, rollbacks, errors, unknown)",
            ["type", "outcome"],
            registry=r,
        )
        self.retries = Counter("tpcc_retries", "Retried transaction attempts", ["type"], registry=r)
        self.reconnects = Counter("tpcc_reconnects", "Connections re-established after a loss", registry=r)
        self.tpmc = Gauge(
            "tpcc_tpmc", f"NewOrders committed per minute over the last {TPMC_WINDOW_SECONDS:.0f} s", registry=r
        )
        self.phase = Gauge("tpcc_phase", "1 for the runner's current phase", ["phase"], registry=r)
        self.info = Gauge(
            "tpcc_run_info",
            "Options of this runner",
            ["db", "command", "warehouses", "clients", "shard", "version"],
            registry=r,
        )
        self.load_units_total = Gauge("tpcc_load_units_planned", "Load units to load, done or not", registry=r)
        self.load_units_done = Gauge("tpcc_load_units_done", "Load units loaded", registry=r)
        self.load_rows = Counter("tpcc_load_rows", "Rows loaded", ["table"], registry=r)
        self.consistency = Gauge(
            "tpcc_consistency_condition_passed",
            "1 if clause 3.3.2.<condition> holds, 0 if violated",
            ["condition"],
            registry=r,
        )
        self.latency = _LatencyCollector()
        r.register(self.latency)
        self.ycsb = _YcsbCollector()
        r.register(self.ycsb)
        self._new_orders: collections.deque[tuple[float, int]] = collections.deque()
        self.current_tpmc = 0.0
        self._phase_lock = threading.Lock()
        self.current_phase = ""
        for t in TRANSACTIONS:
            for o in ("committed", "rollbacks", "errors", "unknown"):
                self.transactions.labels(t, o)
            self.retries.labels(t)
        self.set_phase("connecting")

    def serve(self, port: int) -> None:
        """/metrics (Prometheus) and /ready (200 once the run's clients are connected)."""
        if not port:
            return
        metrics_app = make_wsgi_app(self.registry)

        def app(environ, start_response):
            if environ.get("PATH_INFO") == "/ready":
                ok = self.ready.is_set()
                start_response("200 OK" if ok else "503 Service Unavailable", [("Content-Type", "text/plain")])
                return [b"clients connected\n" if ok else b"clients not connected yet\n"]
            return metrics_app(environ, start_response)

        server = make_server("", port, app, _ThreadingWSGIServer, handler_class=_QuietHandler)
        threading.Thread(target=server.serve_forever, daemon=True).start()

    def set_phase(self, phase: str, only_from: tuple[str, ...] = ()) -> None:
        """The runner's phase; with only_from, only if it is still in one of those phases (a
        thread that says `measuring` late must not undo the `done` the run said meanwhile)."""
        with self._phase_lock:
            if only_from and self.current_phase not in only_from:
                return
            self.current_phase = phase
            for p in PHASES:
                self.phase.labels(p).set(1 if p == phase else 0)

    def add_report(self, report: dict) -> None:
        """Fold one client-process report (see executor) into the metrics."""
        now = time.monotonic()
        for txn, outcomes in report["counts"].items():
            for outcome, n in outcomes.items():
                if n:
                    self.transactions.labels(txn, outcome).inc(n)
        for txn, n in report["retries"].items():
            if n:
                self.retries.labels(txn).inc(n)
        if report.get("reconnects"):
            self.reconnects.inc(report["reconnects"])
        for txn, counts in report["buckets"].items():
            self.latency.add(txn, counts, report["sums"][txn])
        committed = report["counts"].get("NEW_ORDER", {}).get("committed", 0)
        self._new_orders.append((now, committed))
        while self._new_orders and self._new_orders[0][0] < now - TPMC_WINDOW_SECONDS:
            self._new_orders.popleft()
        self.current_tpmc = sum(n for _, n in self._new_orders) * 60.0 / TPMC_WINDOW_SECONDS
        self.tpmc.set(self.current_tpmc)
