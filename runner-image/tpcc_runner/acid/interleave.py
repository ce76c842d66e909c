"""Running a second transaction while a first is held open, and telling how it behaved: it
completed meanwhile, it waited for the first to end, or the database rolled it back. No
database here: the adapters hand in what to run."""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from ..drivers.base import Driver, LoadMeta, RetryableError
from .clause3 import COMPLETED, ROLLED_BACK, WAITED, Overlap, pick

R = TypeVar("R")
# How long the second transaction may take before it counts as waiting for the first: a
# transaction of a few rows takes milliseconds, even on the Python test server.
STALL_SECONDS = 3.0
RETRIES = 3
# The Payment the consistency test commits between the check's reads, while another client
# writes the same warehouse (one warehouse: its W_YTD row is every Payment's) and wins often.
CONTENDED_RETRIES = 30
# How long the second transaction may still take once the held one has ended: a database that
# keeps it waiting past that (a lock never released, a hung server) fails the test.
RELEASE_SECONDS = 60.0


class StillWaiting(Exception):
    """The second transaction did not finish after the held one ended: what it waited for."""


def interleave(
    other: Callable[[], Any],
    end_held: Callable[[], R],
    retry: bool = True,
    stall: float = STALL_SECONDS,
    release: float = RELEASE_SECONDS,
) -> tuple[Overlap, R]:
    """Start `other` while the held transaction is open, give it `stall` seconds, then end the
    held one with `end_held` (its commit or rollback, with whatever it still reads first) and
    collect `other`, which must end within `release` seconds after (else StillWaiting). A
    RetryableError of `other` is the database rolling it back; with `retry` it runs again after
    the held transaction ended (as the runner's executor would), and its result is the retry's.
    Other errors propagate."""
    done: dict[str, Any] = {}

    def run() -> None:
        try:
            done["result"] = other()
        except RetryableError as e:
            done["conflict"] = str(e)
        except Exception as e:  # handed to the caller's thread below
            done["error"] = e

    thread = threading.Thread(target=run, name="acid-other", daemon=True)
    thread.start()
    thread.join(stall)
    outcome = WAITED if thread.is_alive() else (ROLLED_BACK if "conflict" in done else COMPLETED)
    ended = end_held()
    thread.join(release)
    if thread.is_alive():
        raise StillWaiting(
            f"the second transaction still waited {release:.0f} s after the held one "
            f"ended ({'committed or rolled back' if ended is None else ended!r})"
        )
    if "error" in done:
        raise done["error"]
    if "conflict" in done:
        outcome = ROLLED_BACK
    overlap = Overlap(outcome, done.get("result"), done.get("conflict"))
    if outcome == ROLLED_BACK and retry:
        overlap.result = retried(other)
    return overlap, ended


def retried(other: Callable[[], R], attempts: int = RETRIES) -> R:
    """other(), run again (up to `attempts` in all, a few ms apart) while the database rolls it back."""
    for n in range(attempts - 1):
        try:
            return other()
        except RetryableError:
            time.sleep(random.uniform(0, 0.01 * (n + 1)))  # apart from a writer of the same rows
    return other()


@contextlib.contextmanager
def transactions_meanwhile(make_driver: Callable[[], Driver], meta: LoadMeta) -> Iterator[list[int]]:
    """Another client's Payments and NewOrders, on a connection of its own, for as long as the
    with-block runs. Yields [how many committed], which that client's thread keeps counting."""
    committed = [0]
    stop = threading.Event()

    def commit() -> None:
        driver = make_driver()
        driver.connect()
        rng = random.Random(meta.c_id)
        try:
            while not stop.is_set():
                chosen = pick(rng, meta.warehouses, meta.districts, meta.customers_per_district, meta.items)
                try:
                    driver.payment(chosen.payment()) if committed[0] % 2 else driver.new_order(chosen.new_order())
                    committed[0] += 1
                except RetryableError:
                    continue
        finally:
            driver.close()

    thread = threading.Thread(target=commit, daemon=True)
    thread.start()
    try:
        yield committed
    finally:
        stop.set()
        thread.join()
