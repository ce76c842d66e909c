"""Running a transaction body in the driver's session: one multi-document transaction (or
statement by statement), committed with re-sends of an unknown result, every pymongo error
classified into the driver contract's (base.py); the executor decides on retries."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import pymongo
from pymongo import errors
from pymongo.read_concern import ReadConcern
from pymongo.read_preferences import ReadPreference

from ..base import ConnectionLost, ConnectionOptions, NotPermitted, RetryableError, UnknownOutcome, UserAbort
from .config import UNAUTHORIZED
from .connection import Connection, _one_line

# what a transaction body returns (the five transactions: their output dict)
Result = TypeVar("Result")


class _InvalidItem(Exception):
    """NewOrder met an unused item id: abort the transaction (clause 2.4.2.3)."""


class Sessions(Connection):
    """One client session, kept across transactions until its connection fails."""

    def __init__(self, connection: ConnectionOptions):
        super().__init__(connection)
        self._session: pymongo.client_session.ClientSession | None = None
        # a transaction's read and write concerns, made once (not per transaction)
        self._txn_read_concern = ReadConcern(self.read_concern)
        self._txn_write_concern = self._commit_write_concern()

    def close(self) -> None:
        self._drop_session()
        super().close()

    def _get_session(self):
        if self._session is None:
            self._session = self.client.start_session(causal_consistency=self.causal)
        return self._session

    def _drop_session(self) -> None:
        if self._session is not None:
            try:
                self._session.end_session()
            except errors.PyMongoError:
                pass
            self._session = None

    def _run(self, body: Callable[[Any], Result], in_transaction: bool = True) -> Result:
        """Run body(session) in one transaction and commit it (or, with transactions=false or
        in_transaction=False, statement by statement in the session); errors become the
        contract's."""
        in_txn = self.transactions and in_transaction
        try:
            session = self._get_session()
            try:
                with pymongo.timeout(self.txn_timeout):
                    if in_txn:
                        session.start_transaction(
                            read_concern=self._txn_read_concern,
                            write_concern=self._txn_write_concern,
                            read_preference=ReadPreference.PRIMARY,
                        )
                    result = body(session)
            except BaseException:
                if in_txn and session.in_transaction:
                    with pymongo.timeout(min(self.txn_timeout, 10)):
                        session.abort_transaction()  # best effort: pymongo swallows its errors
                raise
        except _InvalidItem as e:
            raise UserAbort(f"mongodb: {e}") from None
        except errors.PyMongoError as e:
            raise self._not_committed(e) from None
        if in_txn:
            self._commit(session)
        return result

    def _not_committed(self, e: errors.PyMongoError) -> BaseException:
        """Classify an error raised before the commit (the transaction did not happen)."""
        msg = f"mongodb: {_one_line(e)}"
        if isinstance(e, errors.NotPrimaryError):
            return RetryableError(msg)  # step-down: a primary will be elected
        if isinstance(e, errors.ConnectionFailure):  # socket gone, timeout, no server selectable
            self._drop_session()
            return ConnectionLost(msg)
        if e.has_error_label("TransientTransactionError"):
            return RetryableError(msg)  # write conflict, lock timeout, transaction aborted
        if isinstance(e, errors.ExecutionTimeout):
            return RetryableError(msg)  # our txn_timeout expired on the server; nothing committed
        if isinstance(e, errors.OperationFailure) and e.code == UNAUTHORIZED:
            return NotPermitted(msg)
        return e  # anything else is a bug or bad data: the executor counts it as an error

    def _commit(self, session) -> None:
        last: errors.PyMongoError | None = None
        attempts = 0
        for attempt in range(1 + self.commit_retries):
            attempts += 1
            try:
                with pymongo.timeout(self.txn_timeout):
                    session.commit_transaction()
                return
            except errors.PyMongoError as e:
                last = e
                if e.has_error_label("TransientTransactionError"):
                    raise RetryableError(f"mongodb: commit: {_one_line(e)}") from None
                if not e.has_error_label("UnknownTransactionCommitResult"):
                    break
                time.sleep(min(0.1 * 2**attempt, 2.0))
        self._drop_session()
        raise UnknownOutcome(
            f"mongodb: commit result unknown after {attempts} attempt(s)" + (f": {_one_line(last)}" if last else "")
        ) from None
