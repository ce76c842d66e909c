"""The executor's retry policy: a transaction that failed with a retryable error (MongoDB's
TransientTransactionError, a lost connection) is run again after a jittered back-off that
grows from the failed attempt's own duration (or, with `--retry-wait pytpcc`, py-tpcc's
0.1 s times the retry's number), up to max_retries."""

import datetime as dt
from types import SimpleNamespace

import pytest
from tpcc_runner import executor
from tpcc_runner.drivers.base import DriverError, RetryableError
from tpcc_runner.executor import (
    ERROR_BACKOFF_CAP,
    ERROR_BACKOFF_FLOOR,
    RETRY_BACKOFF_CAP,
    RETRY_BACKOFF_FLOOR,
    RETRY_WAITS,
    error_backoff,
    execute_once,
    pytpcc_retry_wait,
    retry_backoff,
)
from tpcc_runner.transactions import PaymentInput, PaymentOutput


def test_backoff_starts_at_the_failed_attempts_duration_and_doubles():
    assert retry_backoff(1, 0.2, 1.0) == pytest.approx(0.2)
    assert retry_backoff(2, 0.2, 1.0) == pytest.approx(0.4)
    assert retry_backoff(3, 0.2, 1.0) == pytest.approx(0.8)


def test_backoff_has_a_floor_for_quick_attempts_and_a_cap():
    assert retry_backoff(1, 0.0001, 1.0) == pytest.approx(RETRY_BACKOFF_FLOOR)
    assert retry_backoff(9, 0.3, 1.0) == pytest.approx(RETRY_BACKOFF_CAP)


def test_backoff_jitter_spans_the_upper_half_of_the_ceiling():
    assert retry_backoff(2, 0.1, 0.0) == pytest.approx(0.1)
    assert retry_backoff(2, 0.1, 0.5) == pytest.approx(0.15)


class _Clock:
    """The executor's time: attempts and back-offs advance it; back-offs are recorded."""

    def __init__(self):
        self.now, self.waits = 1000.0, []

    def monotonic(self):
        return self.now

    time = perf_counter = monotonic

    def sleep(self, seconds):
        self.waits.append(seconds)
        self.now += seconds


class _Conflicting:
    """Fails `conflicts` times with a retryable error, each attempt taking `attempt_s`."""

    def __init__(self, clock: _Clock, conflicts: int, attempt_s: float):
        self.clock, self.left, self.attempt_s = clock, conflicts, attempt_s

    def payment(self, params: PaymentInput) -> PaymentOutput:
        self.clock.now += self.attempt_s
        if self.left:
            self.left -= 1
            raise RetryableError("mongodb: WriteConflict (TransientTransactionError)")
        return PaymentOutput(params.c_id or 0, -10.0, "GC")


PAYMENT = PaymentInput(1, 1, 1, 1, 7, None, 10.0, dt.datetime(2026, 11, 26))


def test_execute_once_backs_off_between_retries(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(executor, "time", clock)
    outcome, result, retries, _, error = execute_once(_Conflicting(clock, 2, 0.2), "PAYMENT", PAYMENT, 10, 2000.0)
    assert (outcome, result, retries, error) == ("committed", PaymentOutput(7, -10.0, "GC"), 2, None)
    assert len(clock.waits) == 2
    assert 0.1 <= clock.waits[0] <= 0.2 and 0.2 <= clock.waits[1] <= 0.4  # ~1x then ~2x the attempt


def test_execute_once_gives_up_after_max_retries(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(executor, "time", clock)
    outcome, _, retries, _, error = execute_once(_Conflicting(clock, 5, 0.01), "PAYMENT", PAYMENT, 3, 2000.0)
    assert (outcome, retries, len(clock.waits)) == ("errors", 3, 3)
    assert "gave up after 3 retries" in error


def test_pytpcc_wait_is_a_tenth_of_a_second_times_the_retry_whatever_the_attempt_took():
    assert [pytpcc_retry_wait(n, 0.0001, 0.9) for n in (1, 2, 3, 10)] == pytest.approx([0.1, 0.2, 0.3, 1.0])
    assert pytpcc_retry_wait(2, 5.0, 0.0) == pytest.approx(0.2)
    assert set(RETRY_WAITS) == {"backoff", "pytpcc"}


def test_execute_once_waits_as_the_retry_wait_it_is_given(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(executor, "time", clock)
    conflicting = _Conflicting(clock, 3, 0.002)
    outcome, _, retries, _, _ = execute_once(conflicting, "PAYMENT", PAYMENT, 10, 2000.0, RETRY_WAITS["pytpcc"])
    assert (outcome, retries) == ("committed", 3)
    assert clock.waits == pytest.approx([0.1, 0.2, 0.3])  # backoff would have waited 2.5-10 ms first


def test_a_terminal_waits_by_its_plans_retry_wait(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(executor, "time", clock)
    monkeypatch.setattr(executor, "_sleep_until", lambda t: clock.sleep(max(0.0, t - clock.now)))
    waits = {}
    for wait in RETRY_WAITS:
        clock.waits = []
        call = SimpleNamespace(txn="PAYMENT", keying_seconds=0.0, think_seconds=0.0)
        terminal = SimpleNamespace(next_call=lambda: call, inputs=lambda txn: PAYMENT)
        acc = SimpleNamespace(record=lambda *args, **kw: None)
        plan = SimpleNamespace(ledger=False, max_retries=10, retry_wait=wait)
        executor.terminal_step(
            plan, terminal, _Conflicting(clock, 2, 0.001), acc, SimpleNamespace(end=clock.now + 60), 0
        )
        waits[wait] = [w for w in clock.waits if w > 0]
    assert waits["pytpcc"] == pytest.approx([0.1, 0.2])
    assert all(w <= 0.01 for w in waits["backoff"]) and len(waits["backoff"]) == 2


def test_error_backoff_doubles_from_10_ms_to_a_second_and_resets():
    assert error_backoff(0, 1.0) == 0.0
    assert [error_backoff(n, 1.0) for n in (1, 2, 3)] == pytest.approx([0.01, 0.02, 0.04])
    assert error_backoff(20, 1.0) == pytest.approx(1.0) and error_backoff(20, 0.0) == pytest.approx(0.5)


class _Failing:
    """A database that answers each Payment at once (0.1 ms) with an error, but the ones listed."""

    def __init__(self, clock: _Clock, succeeding: set[int] = frozenset()):
        self.clock, self.succeeding, self.calls, self.called_at = clock, succeeding, 0, []

    def payment(self, params: PaymentInput) -> PaymentOutput:
        self.called_at.append(self.clock.now)
        self.clock.now += 0.0001
        self.calls += 1
        if self.calls in self.succeeding:
            return PaymentOutput(params.c_id or 0, -10.0, "GC")
        raise DriverError("Payment: Procedure Payment was not found (status -3)")


def _terminal_for(
    clock: _Clock, driver, seconds: float, interval: float | None = None, client: int = 0, clients: int = 1
) -> list[str]:
    """The outcomes of one terminal (global number `client` of `clients`) that only runs
    Payments, for `seconds` of the clock; interval: its pace under --target-tps."""
    call = SimpleNamespace(txn="PAYMENT", keying_seconds=0.0, think_seconds=0.0)
    terminal = SimpleNamespace(next_call=lambda: call, inputs=lambda txn: PAYMENT)
    outcomes: list[str] = []
    acc = SimpleNamespace(record=lambda txn, outcome, *rest: outcomes.append(outcome))
    plan = SimpleNamespace(
        ledger=False, max_retries=0, retry_wait="backoff", terminal_interval=interval, all_clients=clients
    )
    window = SimpleNamespace(start=clock.now, end=clock.now + seconds)
    executor._terminal_loop(plan, terminal, driver, acc, window, client)
    return outcomes


class _Answering:
    """A database that answers each Payment in 1 ms, but once, from `stall_at`, takes `stall` s."""

    def __init__(self, clock: _Clock, stall_at: float = float("inf"), stall: float = 0.0):
        self.clock, self.stall_at, self.stall, self.called_at = clock, stall_at, stall, []

    def payment(self, params: PaymentInput) -> PaymentOutput:
        self.called_at.append(self.clock.now)
        if self.clock.now >= self.stall_at:
            self.clock.now += self.stall
            self.stall_at = float("inf")
        self.clock.now += 0.001
        return PaymentOutput(params.c_id or 0, -10.0, "GC")


def test_a_paced_terminal_starts_on_its_schedule(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(executor, "time", clock)
    driver = _Answering(clock)
    # terminal 1 of 4, one transaction every 0.5 s: its first start a quarter interval in
    outcomes = _terminal_for(clock, driver, 10.0, interval=0.5, client=1, clients=4)
    assert outcomes == ["committed"] * 20  # back to back, a 1 ms database: some 10,000
    starts = [t - 1000.0 for t in driver.called_at]
    assert starts == pytest.approx([0.125 + 0.5 * k for k in range(20)])


def test_a_paced_terminal_late_after_a_stall_makes_up_nothing(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(executor, "time", clock)
    driver = _Answering(clock, stall_at=1002.0, stall=3.0)
    _terminal_for(clock, driver, 10.0, interval=0.5)
    gaps = [b - a for a, b in zip(driver.called_at, driver.called_at[1:])]
    stalled = gaps.index(max(gaps))
    assert gaps[stalled] == pytest.approx(3.001)  # the stalled call, then at once
    assert gaps[stalled + 1] == pytest.approx(0.5)  # on the new schedule: no burst of the missed six
    assert len(driver.called_at) == 20 - 6 + 1


def test_a_terminal_whose_transactions_all_fail_slows_down(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(executor, "time", clock)
    outcomes = _terminal_for(clock, _Failing(clock), 10.0)
    # without the back-off: about 100,000 errors in these 10 s (one each 0.1 ms)
    assert set(outcomes) == {"errors"} and 12 <= len(outcomes) <= 30, len(outcomes)
    assert max(clock.waits) <= ERROR_BACKOFF_CAP


def test_a_success_ends_the_back_off(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(executor, "time", clock)
    driver = _Failing(clock, succeeding={9})
    outcomes = _terminal_for(clock, driver, 5.0)
    assert outcomes[8] == "committed" and outcomes[9] == "errors"
    gaps = [b - a for a, b in zip(driver.called_at, driver.called_at[1:])]
    assert gaps[7] >= 0.5  # after 8 errors in a row: half of the 1 s cap at least
    assert gaps[8] < 0.001  # after the success: at once
    assert gaps[9] <= ERROR_BACKOFF_FLOOR + 0.001  # the first error again: 10 ms at most
