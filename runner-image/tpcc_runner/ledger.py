"""The durability ledger: every acknowledged NewOrder (and every NewOrder whose outcome is
unknown) with the identity of the order (see durability.py), written as it is acknowledged;
verified against the database after the run, over the ledgers of every runner pod at once.

A ledger is a text file (or the same text served over HTTP by a runner pod that holds it
for the verifier), one `LedgerRecord.line()` per line."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import shutil
import signal
import threading
from collections.abc import Iterable, Iterator
from typing import TextIO

from . import k8s
from .drivers.base import Driver
from .durability import (
    DurabilityVerdict,
    LedgerRecord,
    OrderIdentity,
    acknowledged_keys,
    judge,
    parse_record,
    unknown_lookups,
)

log = logging.getLogger("tpcc")
BATCH = 1000
RELEASED = "ledgersVerified"  # the operator's word, in the start ConfigMap, that the runner pods may exit
RELEASE_POLL_SECONDS = 5.0


class LedgerWriter:
    """Appends and fsyncs each batch: the ledger must survive what the database may not."""

    def __init__(self, path: str):
        self.f: TextIO = open(path, "a", encoding="ascii")

    def write(self, lines: Iterable[str]) -> None:
        n = 0
        for line in lines:
            self.f.write(line + "\n")
            n += 1
        if n:
            self.f.flush()
            os.fsync(self.f.fileno())

    def close(self) -> None:
        self.f.close()


def ledger_lines(source: str, timeout: float) -> Iterator[str]:
    """The lines of a ledger: a file path, or the http URL of a runner pod holding one."""
    if source.startswith(("http://", "https://")):
        # imported here: a run's clients import this module and never read a ledger (k8s.py says why)
        import urllib.error
        import urllib.request

        try:
            with urllib.request.urlopen(source, timeout=timeout) as r:
                for raw in r:
                    yield raw.decode("ascii")
        except (urllib.error.URLError, OSError) as e:
            raise OSError(f"ledger {source}: {getattr(e, 'reason', e)}") from None
        return
    with open(source, encoding="ascii") as f:
        yield from f


def read_ledgers(sources: list[str], timeout: float = 30.0) -> list[LedgerRecord]:
    """Every record of every ledger (file paths or http URLs), each tagged with its source."""
    records = []
    for source in sources:
        for n, line in enumerate(ledger_lines(source, timeout), 1):
            if not line.strip():
                continue
            try:
                records.append(parse_record(line, source))
            except ValueError as e:
                raise ValueError(f"{source}:{n}: {e}") from None
    return records


def verify(driver: Driver, records: list[LedgerRecord], ledgers: int) -> DurabilityVerdict:
    """Fetch what the database holds for the records, then judge (durability.judge). A database
    that holds no TPC-C load at all (not even its schema, after a whole-system crash it did not
    survive) holds none of them: every acknowledged order is lost, which the verdict says."""
    if driver.read_meta() is None:
        nothing = judge(records, {}, {key: [] for key in unknown_lookups(records)}, ledgers)
        return dataclasses.replace(nothing, database_empty=True)
    stored: dict[tuple[int, int, int], OrderIdentity] = {}
    keys = acknowledged_keys(records)
    for i in range(0, len(keys), BATCH):
        for key, order in driver.stored_orders(keys[i : i + BATCH]).items():
            stored[key] = order.identity()
    entered = {}
    for w, d, c, ms in unknown_lookups(records):
        entered[(w, d, c, ms)] = [o.identity() for o in driver.orders_entered_at(w, d, c, ms)]
    return judge(records, stored, entered, ledgers)


class Released(Exception):
    """The operator released the runner pods while they still ran: it has ended the run (a run
    fails mid-way, e.g. a VoltDB without k-safety that lost its data with a node) and judged it,
    so nothing the pod measures from now on counts."""


@contextlib.contextmanager
def ended_when_released(release_ref: str | None, poll: float = RELEASE_POLL_SECONDS) -> Iterator[None]:
    """While in this block (a run's measuring), a thread reads the start ConfigMap every `poll`
    seconds and, once the operator has released the runners, raises Released in the main
    thread. Without it a run the operator had already failed went on against its database to
    the end of durationSeconds (an hour-long run: an hour). An API error is read past: the
    next poll tries again. No ref (outside Kubernetes): nothing is watched."""
    if not release_ref:
        yield
        return
    ended = threading.Event()

    def raise_released(signum: int, frame: object) -> None:
        if not ended.is_set():  # the block may have ended between the poll and this handler
            raise Released

    def watch() -> None:
        while not ended.wait(poll):
            try:
                released = RELEASED in k8s.configmap_data(release_ref)
            except k8s.KubeError as e:
                log.debug("run: reading %s: %s", release_ref, e)
                continue
            if released:  # a real signal to the main thread: it interrupts a blocking wait there
                signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGUSR1)
                return

    previous = signal.signal(signal.SIGUSR1, raise_released)
    watcher = threading.Thread(target=watch, name="release-watch", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        ended.set()
        watcher.join()
        signal.signal(signal.SIGUSR1, previous)


def hold_ledger(path: str, port: int, release_ref: str, timeout: float) -> None:
    """Serve the ledger file at /ledger until the operator's verifier has read every pod's
    ledger and says so (ledgersVerified), or the timeout passes: the verdict is then the
    operator's to give, so the runner exits 0 either way."""
    import http.server  # here, not at the top: every `tpcc` process would pay for it

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path != "/ledger":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=ascii")
            self.send_header("Content-Length", str(os.path.getsize(path)))
            self.end_headers()
            with open(path, "rb") as f:
                shutil.copyfileobj(f, self.wfile)

        def log_message(self, *_):
            pass

    server = http.server.ThreadingHTTPServer(("", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    log.info("ledger: serving %s on :%d/ledger until the operator has verified it", path, port)
    try:
        k8s.wait_for_key(release_ref, RELEASED, timeout)
    except k8s.KubeError as e:
        log.warning("ledger: %s; exiting", e)
    finally:
        server.shutdown()
