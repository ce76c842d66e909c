"""The executor's retry policy: a transaction that failed with a retryable error (MongoDB's
TransientTransactionError, a lost connection) is run again after a jittered back-off that
grows from the failed attempt's own duration, up to max_retries."""

import datetime as dt

import pytest
from tpcc_runner import executor
from tpcc_runner.drivers.base import RetryableError
from tpcc_runner.executor import RETRY_BACKOFF_CAP, RETRY_BACKOFF_FLOOR, execute_once, retry_backoff
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

    time = monotonic

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
