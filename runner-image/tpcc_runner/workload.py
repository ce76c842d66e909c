"""TPC-C workload rules, pure and database-agnostic: random generators (clause 2.1.5-6,
4.3.2), the C constants, customer last names, transaction inputs (clauses 2.4.1-2.8.1),
the transaction mix (5.2.3-4) and keying/think times (5.2.5)."""

from __future__ import annotations

import math
import random
import string
from dataclasses import dataclass, replace

from tpcc_contract.tpcc import DELIVERY, NEW_ORDER, ORDER_STATUS, PAYMENT, STOCK_LEVEL, TRANSACTIONS

from .drivers.base import utcnow
from .transactions import (
    DeliveryInput,
    NewOrderInput,
    OrderLineInput,
    OrderStatusInput,
    PaymentInput,
    StockLevelInput,
    TransactionInput,
)

DEFAULT_MIX = (45, 43, 4, 4, 4)
# Clause 5.2.3 minimum percentages for a compliant mix (NewOrder is whatever remains).
MIN_MIX = {PAYMENT: 43.0, ORDER_STATUS: 4.0, DELIVERY: 4.0, STOCK_LEVEL: 4.0}

DISTRICTS_PER_WAREHOUSE = 10

SYLLABLES = ("BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING")
# clause 5.2.5.7: keying time (s) and mean think time (s) per transaction type
KEYING_TIME = {NEW_ORDER: 18.0, PAYMENT: 3.0, ORDER_STATUS: 2.0, DELIVERY: 2.0, STOCK_LEVEL: 2.0}
MEAN_THINK_TIME = {NEW_ORDER: 12.0, PAYMENT: 12.0, ORDER_STATUS: 10.0, DELIVERY: 5.0, STOCK_LEVEL: 5.0}
TERMINALS_PER_WAREHOUSE = 10  # clause 4.2.2
MIN_MEASURED_SECONDS = 120 * 60  # clause 5.5.1: a measurement interval of at least 120 minutes
PACINGS = ("none", "spec")  # spec: the keying and think times of clause 5.2.5

ALPHANUMERIC = string.ascii_letters + string.digits


def parse_mix(text: str) -> tuple[int, int, int, int, int]:
    """ "45,43,4,4,4" -> percentages of NewOrder, Payment, OrderStatus, Delivery, StockLevel."""
    parts = text.split(",")
    if len(parts) != 5:
        raise ValueError(
            f"mix needs 5 comma-separated percentages (NewOrder,Payment,OrderStatus,Delivery,StockLevel), got {text!r}"
        )
    try:
        mix = tuple(int(p) for p in parts)
    except ValueError:
        raise ValueError(f"mix percentages must be integers, got {text!r}") from None
    if any(m < 0 for m in mix) or sum(mix) != 100:
        raise ValueError(f"mix percentages must be >= 0 and add up to 100, got {text!r}")
    new_order, payment, order_status, delivery, stock_level = mix  # five: checked above
    return new_order, payment, order_status, delivery, stock_level


def last_name(number: int) -> str:
    """Clause 4.3.2.3: three syllables chosen by the digits of a number in 0..999."""
    return SYLLABLES[number // 100] + SYLLABLES[(number // 10) % 10] + SYLLABLES[number % 10]


@dataclass(frozen=True)
class CConstants:
    """The run-time constants C of NURand (clause 2.1.6)."""

    c_last: int  # A = 255
    c_id: int  # A = 1023
    ol_i_id: int  # A = 8191

    def to_dict(self) -> dict[str, int]:
        return {"c_last": self.c_last, "c_id": self.c_id, "ol_i_id": self.ol_i_id}


def valid_c_last_delta(c_run: int, c_load: int) -> bool:
    """Clause 2.1.6.1: C_LAST at run differs from C_LAST at load by 65..119, not 96 or 112."""
    delta = abs(c_run - c_load)
    return 65 <= delta <= 119 and delta not in (96, 112)


def load_constants(rng: random.Random) -> CConstants:
    return CConstants(rng.randint(0, 255), rng.randint(0, 1023), rng.randint(0, 8191))


def run_constants(rng: random.Random, load: CConstants) -> CConstants:
    """C_ID and OL_I_ID may be reused; C_LAST must keep the clause 2.1.6.1 distance."""
    candidates = [c for c in range(256) if valid_c_last_delta(c, load.c_last)]
    return CConstants(rng.choice(candidates), load.c_id, load.ol_i_id)


class TpccRandom:
    """Clause 2.1.5-4.3.2 generators over a seeded random.Random."""

    def __init__(self, seed: int | None = None, constants: CConstants | None = None):
        self.rng = random.Random(seed)
        self._bits = self.rng.getrandbits
        self.c = constants or load_constants(self.rng)

    def number(self, low: int, high: int) -> int:
        """rng.randint(low, high): the same draw from the same stream (CPython's randint is
        randrange's width times _randbelow_with_getrandbits: getrandbits(width's bit length),
        rejected until below the width), in one Python call instead of three. A NewOrder
        makes about 45 of these; randint's calls were a fifth of the runner's CPU on VoltDB.
        test_workload.py compares the two over many ranges."""
        width = high - low + 1
        if width <= 0:
            raise ValueError(f"empty range for number({low}, {high})")
        k = width.bit_length()
        r = self._bits(k)
        while r >= width:
            r = self._bits(k)
        return low + r

    def nurand(self, a: int, x: int, y: int, c: int) -> int:
        """Clause 2.1.6: NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x"""
        return (((self.number(0, a) | self.number(x, y)) + c) % (y - x + 1)) + x

    def number_excluding(self, low: int, high: int, excluded: int) -> int:
        n = self.number(low, high - 1)
        return n + 1 if n >= excluded else n

    def a_string(self, low: int, high: int) -> str:
        return "".join(self.rng.choices(ALPHANUMERIC, k=self.number(low, high)))

    def n_string(self, low: int, high: int) -> str:
        return "".join(self.rng.choices(string.digits, k=self.number(low, high)))

    def a_strings(self, count: int, length: int) -> list[str]:
        """count a_string(length, length) in a row (STOCK's ten S_DIST_xx)."""
        return [self.a_string(length, length) for _ in range(count)]

    def money(self, low_cents: int, high_cents: int) -> float:
        return self.number(low_cents, high_cents) / 100

    def order_line_draws(self, count: int, items: int, amounts: bool) -> list[tuple[int, float, str]]:
        """An initial order's count lines' (OL_I_ID, OL_AMOUNT, OL_DIST_INFO) (clause 4.3.3.1):
        OL_AMOUNT drawn only for undelivered orders (0.00 otherwise)."""
        return [
            (self.number(1, items), self.money(1, 999_999) if amounts else 0.0, self.a_string(24, 24))
            for _ in range(count)
        ]

    def fraction(self, low: int, high: int, scale: int) -> float:
        return self.number(low, high) / scale

    def zip_code(self) -> str:
        return self.n_string(4, 4) + "11111"

    def state(self) -> str:
        return "".join(self.rng.choices(string.ascii_uppercase, k=2))

    def data_with_original(self) -> str:
        """Clause 4.3.3.1: I_DATA/S_DATA, 26..50 chars, 10% with ORIGINAL at a random place."""
        data = self.a_string(26, 50)
        if self.number(1, 10) == 1:
            at = self.number(0, len(data) - 8)
            data = data[:at] + "ORIGINAL" + data[at + 8 :]
        return data

    # -- keys drawn during the run ------------------------------------------------------
    def customer_id(self, customers_per_district: int) -> int:
        return self.nurand(1023, 1, customers_per_district, self.c.c_id)

    def customer_last_name(self, customers_per_district: int) -> str:
        # A smaller-than-spec load has fewer distinct names: draw only existing ones.
        return last_name(self.nurand(255, 0, min(999, customers_per_district - 1), self.c.c_last))

    def item_id(self, items: int) -> int:
        return self.nurand(8191, 1, items, self.c.ol_i_id)


@dataclass(frozen=True)
class Scale:
    """Database cardinalities; the defaults are the specification's (clause 4.3.3.1)."""

    items: int = 100_000
    customers_per_district: int = 3_000
    districts: int = DISTRICTS_PER_WAREHOUSE

    def scaled_down(self, divisor: int) -> Scale:
        """The items and customers per district divided by `divisor` (at least one of each), as
        py-tpcc's --scalefactor divides them: not TPC-C-compliant above 1, for quick runs."""
        return replace(
            self,
            items=max(1, self.items // divisor),
            customers_per_district=max(1, self.customers_per_district // divisor),
        )

    @property
    def orders_per_district(self) -> int:
        return self.customers_per_district

    @property
    def new_orders_per_district(self) -> int:
        """900 of 3,000 per spec: the last 30% of the initial orders are undelivered."""
        return self.customers_per_district * 900 // 3000

    @property
    def first_undelivered_o_id(self) -> int:
        return self.orders_per_district - self.new_orders_per_district + 1


@dataclass(frozen=True)
class RemotePercents:
    """How often a transaction reaches beyond its home warehouse: a NewOrder line supplied by
    another warehouse (clause 2.4.1.5: 1 %) and a Payment by a customer of another warehouse
    (clause 2.5.1.2: 15 %). The studies varied them (the VoltDB study ran no remote lines)."""

    new_order_line: int = 1
    payment: int = 15

    def __post_init__(self):
        for name, pct in (("new_order_line", self.new_order_line), ("payment", self.payment)):
            if not 0 <= pct <= 100:
                raise ValueError(f"remote {name} percent must be 0-100, not {pct}")

    def deviation(self) -> str | None:
        if self == RemotePercents():
            return None
        return (
            f"remote NewOrder lines {self.new_order_line}% and remote Payments {self.payment}% "
            "(clauses 2.4.1.5 and 2.5.1.2: 1% and 15%)"
        )


class TransactionInputs:
    """Inputs of the five transactions for one terminal (clauses 2.4.1 - 2.8.1)."""

    def __init__(
        self,
        rnd: TpccRandom,
        scale: Scale,
        warehouses: int,
        home_w_id: int | None,
        stock_level_d_id: int,
        remote: RemotePercents = RemotePercents(),
    ):
        self.remote = remote
        self.r = rnd
        self.scale = scale
        self.warehouses = warehouses
        self.home_w_id = home_w_id  # None: a random home warehouse per transaction
        self.stock_level_d_id = stock_level_d_id

    def _w_id(self) -> int:
        return self.home_w_id or self.r.number(1, self.warehouses)

    def _other_w_id(self, w_id: int) -> int:
        return self.r.number_excluding(1, self.warehouses, w_id)

    def _customer(self) -> tuple[int | None, str | None]:
        """(c_id, c_last) of a Payment or OrderStatus: 60 % by last name (clause 2.5.1.2)."""
        if self.r.number(1, 100) <= 60:
            return None, self.r.customer_last_name(self.scale.customers_per_district)
        return self.r.customer_id(self.scale.customers_per_district), None

    def new_order(self) -> NewOrderInput:
        w_id = self._w_id()
        ol_cnt = self.r.number(5, 15)
        rollback = self.r.number(1, 100) == 1
        items = []
        for n in range(ol_cnt):
            i_id = self.r.item_id(self.scale.items)
            if rollback and n == ol_cnt - 1:
                i_id = self.scale.items + 1  # an unused item: the 1% that must roll back
            supply = w_id
            if self.warehouses > 1 and self.r.number(1, 100) <= self.remote.new_order_line:
                supply = self._other_w_id(w_id)
            items.append(OrderLineInput(i_id, supply, self.r.number(1, 10)))
        return NewOrderInput(
            w_id=w_id,
            d_id=self.r.number(1, self.scale.districts),
            c_id=self.r.customer_id(self.scale.customers_per_district),
            o_entry_d=utcnow(),
            items=tuple(items),
        )

    def payment(self) -> PaymentInput:
        w_id = self._w_id()
        d_id = self.r.number(1, self.scale.districts)
        if self.warehouses == 1 or self.r.number(1, 100) > self.remote.payment:
            c_w_id, c_d_id = w_id, d_id
        else:  # a customer of another warehouse pays through this one
            c_w_id, c_d_id = self._other_w_id(w_id), self.r.number(1, self.scale.districts)
        h_amount = self.r.money(100, 500_000)  # drawn before the customer
        c_id, c_last = self._customer()
        return PaymentInput(
            w_id=w_id,
            d_id=d_id,
            c_w_id=c_w_id,
            c_d_id=c_d_id,
            c_id=c_id,
            c_last=c_last,
            h_amount=h_amount,
            h_date=utcnow(),
        )

    def order_status(self) -> OrderStatusInput:
        w_id = self._w_id()
        d_id = self.r.number(1, self.scale.districts)
        c_id, c_last = self._customer()
        return OrderStatusInput(w_id=w_id, d_id=d_id, c_id=c_id, c_last=c_last)

    def delivery(self) -> DeliveryInput:
        w_id = self._w_id()
        return DeliveryInput(w_id=w_id, o_carrier_id=self.r.number(1, 10), ol_delivery_d=utcnow())

    def stock_level(self) -> StockLevelInput:
        w_id = self._w_id()
        return StockLevelInput(w_id=w_id, d_id=self.stock_level_d_id, threshold=self.r.number(10, 20))

    def draw(self, txn: str) -> TransactionInput:
        """The inputs of a transaction of type txn (one of TRANSACTIONS, as the mix deals
        them), the most frequent types tested first."""
        if txn == NEW_ORDER:
            return self.new_order()
        if txn == PAYMENT:
            return self.payment()
        if txn == ORDER_STATUS:
            return self.order_status()
        if txn == DELIVERY:
            return self.delivery()
        if txn == STOCK_LEVEL:
            return self.stock_level()
        raise ValueError(f"no TPC-C transaction {txn!r}")


class MixDeck:
    """Clause 5.2.4.2: transaction types drawn from a shuffled deck, so every 100 draws
    hold exactly the mix's percentages (a weighted coin drifts on short runs)."""

    def __init__(self, rng: random.Random, mix: tuple[int, ...] = DEFAULT_MIX):
        self.rng = rng
        self.cards = [t for t, pct in zip(TRANSACTIONS, mix) for _ in range(pct)]
        self.deck: list[str] = []

    def next(self) -> str:
        if not self.deck:
            self.deck = self.cards[:]
            self.rng.shuffle(self.deck)
        return self.deck.pop()


@dataclass(frozen=True)
class Call:
    """What a terminal does next: the type, then keying time, the transaction, think time."""

    txn: str
    keying_seconds: float
    think_seconds: float


# Without think times a type's Call is always the same: made once, not per transaction.
UNPACED_CALLS = {txn: Call(txn, 0.0, 0.0) for txn in TRANSACTIONS}


class Terminal:
    """The random draws of one terminal, in a fixed order (type, think time, then the inputs
    when the transaction is due), so one seed gives one sequence of inputs whatever the
    timing: the same seed on the same load reproduces the run's transaction inputs."""

    def __init__(
        self,
        seed: int,
        global_client: int,
        constants: CConstants,
        scale: Scale,
        warehouses: int,
        total_clients: int,
        mix: tuple[int, ...],
        paced: bool,
        remote: RemotePercents = RemotePercents(),
    ):
        self.random = TpccRandom(seed * 1_000_003 + global_client, constants)
        home_w, stock_level_d = terminal_assignment(global_client, warehouses, total_clients)
        self._inputs = TransactionInputs(self.random, scale, warehouses, home_w, stock_level_d, remote)
        self._deck = MixDeck(self.random.rng, mix)
        self.paced = paced

    def next_call(self) -> Call:
        txn = self._deck.next()
        if not self.paced:
            return UNPACED_CALLS[txn]
        return Call(txn, KEYING_TIME[txn], think_seconds(self.random.rng, txn))

    def inputs(self, txn: str) -> TransactionInput:
        return self._inputs.draw(txn)


def terminal_assignment(global_client: int, warehouses: int, total_clients: int | None) -> tuple[int | None, int]:
    """(home warehouse, StockLevel district) of a terminal (clause 2.8.1.1, 4.2.2): clients
    spread round-robin over warehouses; with fewer clients than warehouses a client draws a
    random home warehouse per transaction instead (py-tpcc's behaviour) so every warehouse
    is used."""
    d_id = (global_client // warehouses) % DISTRICTS_PER_WAREHOUSE + 1
    if total_clients is not None and total_clients < warehouses:
        return None, d_id
    return global_client % warehouses + 1, d_id


def think_seconds(rng: random.Random, txn: str) -> float:
    """Clause 5.2.5.4: negative exponential think time, truncated at 10 x the mean."""
    mean = MEAN_THINK_TIME[txn]
    return min(-math.log(1.0 - rng.random()) * mean, 10 * mean)


def spec_deviations(
    *,
    paced: bool,
    mix: tuple[int, ...],
    clients: int,
    warehouses: int,
    items: int,
    customers_per_district: int,
    schema_variant: str,
    measured_seconds: float,
    remote: RemotePercents = RemotePercents(),
    target_tps: float | None = None,
) -> list[str]:
    """Every way the run departs from the TPC-C specification, one line each."""
    out = []
    if target_tps:
        out.append(
            f"no keying or think times (clause 5.2.5): terminals submit at a fixed rate, {target_tps:g} "
            "transactions a second over all terminals"
        )
    elif not paced:
        out.append("no keying or think times (clause 5.2.5): terminals submit back to back")
    out.append(
        "no emulated terminals or RTE (clause 6): each terminal is a client thread with "
        "its own database connection, no screen I/O or transaction monitor"
    )
    if clients != TERMINALS_PER_WAREHOUSE * warehouses:
        out.append(
            f"{clients} terminals for {warehouses} warehouses, not "
            f"{TERMINALS_PER_WAREHOUSE} per warehouse (clause 4.2.2)"
        )
    out.append("Delivery runs synchronously, not queued for deferred execution (clause 2.7.2)")
    low = [f"{t} {pct}% < {MIN_MIX[t]:g}%" for t, pct in zip(TRANSACTIONS, mix) if t in MIN_MIX and pct < MIN_MIX[t]]
    if low:
        out.append(f"mix below the clause 5.2.3 minimums: {', '.join(low)}")
    if (items, customers_per_district) != (Scale.items, Scale.customers_per_district):
        out.append(
            f"scaled-down population: {items} items, {customers_per_district} customers "
            f"per district (clause 4.3.3.1: {Scale.items}, {Scale.customers_per_district})"
        )
    if remote_deviation := remote.deviation():
        out.append(remote_deviation)
    if schema_variant.startswith("stored-procedures"):  # VoltDB (drivers/voltdb.py SCHEMA_VARIANTS)
        out.append(
            "VoltDB: the district-keyed tables carry an added column *_wd = W_ID*10+D_ID "
            "(a district partition key, not in clause 1.3's layouts)"
            + ("; they are partitioned on it" if schema_variant.endswith("by district") else "")
        )
    if schema_variant == "denormalized":
        out.append(
            "denormalized schema: order lines embedded in their order document "
            "(clause 1.4 tables are not kept as separate tables)"
        )
    if schema_variant == "embedded":
        out.append(
            "embedded schema: orders (with their order lines) and history kept inside "
            "their customer document (clause 1.4 tables are not kept as separate tables)"
        )
    if measured_seconds < MIN_MEASURED_SECONDS:
        out.append(f"measured interval {measured_seconds:g} s, shorter than the 120 minutes of clause 5.5.1")
    return out
