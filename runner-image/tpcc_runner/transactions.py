"""The five TPC-C transactions' inputs (clauses 2.4.1-2.8.1) and what a driver returns for
each (what the executor, the durability ledger, the ACID tests and the tests read), as types:
the contract between workload.py, which draws the inputs, executor.py and a Driver
(drivers/base.py). Field names are the specification's column names.

They are made on the hot path (one input and one output per transaction, issue 23 measures
the runner's CPU per transaction), so: slots, no validation, and an order line is a
NamedTuple (about ten per NewOrder; a tuple is built faster than a frozen dataclass and is
the (i_id, supply_w_id, quantity) shape the durability ledger digests)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .drivers.base import Driver


class OrderLineInput(NamedTuple):
    """One line of a NewOrder (clause 2.4.1.5)."""

    i_id: int  # an id no ITEM has on the last line of the 1 % that roll back
    supply_w_id: int
    quantity: int


@dataclass(frozen=True, slots=True)
class NewOrderInput:
    """Clause 2.4.1: an order of customer (w_id, d_id, c_id) entered at o_entry_d."""

    w_id: int
    d_id: int
    c_id: int
    o_entry_d: dt.datetime
    items: tuple[OrderLineInput, ...]

    @property
    def remote(self) -> bool:
        """A line supplied by another warehouse (the order is not all-local)."""
        return any(line.supply_w_id != self.w_id for line in self.items)

    def run_on(self, driver: Driver) -> NewOrderOutput:
        return driver.new_order(self)


@dataclass(frozen=True, slots=True)
class PaymentInput:
    """Clause 2.5.1: customer (c_w_id, c_d_id) pays h_amount through district (w_id, d_id).
    The customer is given by c_id or by c_last: exactly one of them is set (workload.py
    draws one, clause 2.5.1.2)."""

    w_id: int
    d_id: int
    c_w_id: int
    c_d_id: int
    c_id: int | None
    c_last: str | None
    h_amount: float
    h_date: dt.datetime

    @property
    def remote(self) -> bool:
        """The customer belongs to another warehouse."""
        return self.c_w_id != self.w_id

    def run_on(self, driver: Driver) -> PaymentOutput:
        return driver.payment(self)


@dataclass(frozen=True, slots=True)
class OrderStatusInput:
    """Clause 2.6.1: the last order of a customer of (w_id, d_id), by c_id or by c_last
    (exactly one is set, as in PaymentInput)."""

    w_id: int
    d_id: int
    c_id: int | None
    c_last: str | None

    def run_on(self, driver: Driver) -> OrderStatusOutput:
        return driver.order_status(self)


@dataclass(frozen=True, slots=True)
class DeliveryInput:
    """Clause 2.7.1: deliver the oldest undelivered order of each district of w_id."""

    w_id: int
    o_carrier_id: int
    ol_delivery_d: dt.datetime

    def run_on(self, driver: Driver) -> DeliveryOutput:
        return driver.delivery(self)


@dataclass(frozen=True, slots=True)
class StockLevelInput:
    """Clause 2.8.1: items of district (w_id, d_id)'s last 20 orders with stock below threshold."""

    w_id: int
    d_id: int
    threshold: int

    def run_on(self, driver: Driver) -> StockLevelOutput:
        return driver.stock_level(self)


@dataclass(frozen=True, slots=True)
class NewOrderOutput:
    o_id: int
    total: float  # the order's total with discount and taxes (clause 2.4.2.2)


@dataclass(frozen=True, slots=True)
class PaymentOutput:
    c_id: int  # the customer who paid (chosen by c_last: the one at position ceil(n/2))
    c_balance: float  # after the payment
    c_credit: str


@dataclass(frozen=True, slots=True)
class OrderStatusOutput:
    c_id: int
    c_balance: float
    o_id: int | None  # None: the customer has no order
    o_carrier_id: int | None  # None: not delivered (or no order)
    lines: int  # the order's lines


@dataclass(frozen=True, slots=True)
class DeliveryOutput:
    delivered: tuple[tuple[int, int], ...]  # (d_id, o_id) of each district delivered, in order
    skipped: int  # districts without an undelivered order (clause 2.7.4.2)


@dataclass(frozen=True, slots=True)
class StockLevelOutput:
    low_stock: int


TransactionInput = NewOrderInput | PaymentInput | OrderStatusInput | DeliveryInput | StockLevelInput
TransactionOutput = NewOrderOutput | PaymentOutput | OrderStatusOutput | DeliveryOutput | StockLevelOutput
