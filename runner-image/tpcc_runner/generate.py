"""Initial database population (clause 4.3.3.1), split into load units.

A unit is the smallest piece a driver loads and records as done (see Driver.load_unit), so
a load can be split across workers and resumed. Every unit is generated from its own seed
(derived from the load seed and the unit key), so re-generating a unit after a crash yields
the same rows.

The rows are exactly those TpccRandom over random.Random(unit seed) draws, but made faster:
LoadRandom replays that same Mersenne Twister stream from numpy, in blocks, and cuts the
random strings (most of what a load draws) out of characters computed for the whole block
at once, instead of one random() call per character."""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import random
import string
from collections.abc import Iterator

from .workload import ALPHANUMERIC, CConstants, Scale, TpccRandom, last_name

ITEM_CHUNK = 10_000
STOCK_CHUNK = 10_000


def unit_keys(warehouses: int, scale: Scale) -> Iterator[str]:
    """All units of a load, in the order they are handed out: generated one at a time, so a
    loader's memory does not grow with the warehouse count. Consecutive units are of
    different warehouses, so parallel workers keep a database's warehouse partitions
    (VoltDB's, one transaction at a time each) busy together rather than queue on one."""
    yield from (f"item:{c}" for c in range(_chunks(scale.items, ITEM_CHUNK)))
    yield from (f"warehouse:{w}" for w in range(1, warehouses + 1))
    for c in range(_chunks(scale.items, STOCK_CHUNK)):
        yield from (f"stock:{w}:{c}" for w in range(1, warehouses + 1))
    for d in range(1, scale.districts + 1):
        yield from (f"district:{w}:{d}" for w in range(1, warehouses + 1))


def unit_count(warehouses: int, scale: Scale) -> int:
    """len(list(unit_keys(...))), without making the list."""
    return _chunks(scale.items, ITEM_CHUNK) + warehouses * (1 + _chunks(scale.items, STOCK_CHUNK) + scale.districts)


def _chunks(n: int, size: int) -> int:
    return (n + size - 1) // size


def unit_seed(load_seed: int, key: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{load_seed}:{key}".encode()).digest()[:8], "big")


# the pick i of choices(ALPHANUMERIC) as the byte i, translated to its character
_ALPHANUMERIC_OF_PICK = bytes.maketrans(bytes(range(len(ALPHANUMERIC))), ALPHANUMERIC.encode())


def _pick(a: int, b: int, n: int) -> int:
    """The index random.Random's choices(population of n) picks with the 32-bit words a, b:
    floor(random() * n), with random()'s and choices' own float operations."""
    return math.floor(((a >> 5) * 67108864.0 + (b >> 6)) * (1.0 / 9007199254740992.0) * n)


class _ReplayedStream:
    """random.Random(seed)'s MT19937 output, drawn from numpy in blocks of 32-bit words, with
    the methods TpccRandom uses answered exactly as random.Random (CPython 3.x) answers them:
    randint and shuffle take getrandbits(k) = word >> (32 - k) and reject values past the
    range; choices takes floor(random() * n), random() being two words (a >> 5, b >> 6)."""

    BLOCK_WORDS = 1 << 18
    # words a run of same-length strings is given for its rejected randint draws: far more
    # than a run ever meets (each is rejected with probability 1/2)
    REJECTION_ROOM = 64

    def __init__(self, seed: int):
        # numpy only here: `tpcc run`, which imports this module, never pays for it
        import numpy as np

        self._np = np
        key = random.Random(seed).getstate()[1]
        self._bits = np.random.MT19937()
        self._bits.state = {
            "bit_generator": "MT19937",
            "state": {"key": np.array(key[:624], dtype=np.uint32), "pos": key[624]},
        }
        self._block = np.empty(0, dtype=np.uint32)
        self._pos = 0
        self._refill(0)

    def _refill(self, words_needed: int) -> None:
        """A new block: the unread words of the last one, then at least words_needed more."""
        np = self._np
        fresh = self._bits.random_raw(max(self.BLOCK_WORDS, words_needed)).astype(np.uint32)
        self._block = np.concatenate([self._block[self._pos :] if self._block.size else self._block, fresh])
        self._words = self._block.data  # the block's words as a memoryview (format "I")
        self._pos, self._end = 0, len(self._block)
        self._halves: tuple[str, str] | None = None

    def _alphanumerics(self) -> tuple[str, str]:
        """For every word position p of the block, the character choices(ALPHANUMERIC) would
        pick with the random() made of words p and p + 1: a string of k characters from
        position p is then every other character from p, which is k consecutive characters
        of one of the two halves returned, the even positions' and the odd positions' (a
        str slice, not a bytes slice with a step and its decoding).

        choices picks floor(random() * 62), random() being ((a >> 5) * 2**26 + (b >> 6)) * 2**-53
        for the words a, b: floor(31 * (a >> 5) / 2**26 + 31 * (b >> 6) / 2**52), whose second
        term is under 31 / 2**26. So the top bits of 31 * (a >> 5) (under 2**32: uint32
        arithmetic, ten times faster than the floats) are the pick, except where its low 26
        bits are within 32 of the next multiple of 2**26 (about one position in two million):
        there CPython's float formula decides."""
        np = self._np
        block = self._block
        scaled = block[:-1] >> 5
        scaled *= 31
        picks = (scaled >> 26).astype(np.uint8)
        scaled <<= 6  # the low 26 bits, at the top
        for p in np.flatnonzero(scaled >= 0xFFFFF800).tolist():
            picks[p] = _pick(int(block[p]), int(block[p + 1]), len(ALPHANUMERIC))
        chars = picks.tobytes().translate(_ALPHANUMERIC_OF_PICK)
        self._halves = (chars[0::2].decode(), chars[1::2].decode())
        return self._halves

    def randint(self, low: int, high: int) -> int:
        n = high - low + 1
        shift = 32 - n.bit_length()
        words, pos, end = self._words, self._pos, self._end
        while pos < end:
            r = words[pos] >> shift
            pos += 1
            if r < n:
                self._pos = pos
                return low + r
        self._pos = pos
        self._refill(1)
        return self.randint(low, high)

    def a_string(self, low: int, high: int) -> str:
        """alphanumeric(randint(low, high)) in one call (most of a load's strings)."""
        n = high - low + 1
        shift = 32 - n.bit_length()
        words, pos, end = self._words, self._pos, self._end
        while pos < end:
            r = words[pos] >> shift
            pos += 1
            if r < n:
                stop = pos + 2 * (low + r)
                if stop >= end:  # the last word of a block starts no pair: as _take_pairs
                    self._pos = pos
                    return self.alphanumeric(low + r)
                self._pos = stop
                return (self._halves or self._alphanumerics())[pos & 1][pos >> 1 : (pos >> 1) + low + r]
        self._pos = pos
        self._refill(1)
        return self.a_string(low, high)

    def choices(self, alphabet: str, k: int) -> str:
        """ "".join(random.choices(alphabet, k=k))."""
        if alphabet == ALPHANUMERIC:
            return self.alphanumeric(k)
        start = self._take_pairs(k)
        # other alphabets are short strings (digits, states): one character at a time
        words, n = self._words, len(alphabet)
        return "".join([alphabet[_pick(words[p], words[p + 1], n)] for p in range(start, self._pos, 2)])

    def alphanumeric(self, k: int) -> str:
        """choices(ALPHANUMERIC, k), the load's hot path."""
        start = self._take_pairs(k)
        return (self._halves or self._alphanumerics())[start & 1][start >> 1 : (start >> 1) + k]

    def same_length_alphanumerics(self, count: int, k: int) -> list[str]:
        """count times alphanumeric(randint(k, k)), inline (a stock row's ten S_DIST_xx were
        most of a load's Python calls): randint(k, k) takes the first word whose top bit is
        0. Drawn from a block with room for them, else one at a time (the same words)."""
        room = count * (2 * k + self.REJECTION_ROOM)
        if self._end - self._pos < room:
            self._refill(room)
        words, pos, end = self._words, self._pos, self._end
        halves = self._halves or self._alphanumerics()
        strings = []
        for _ in range(count):
            while pos < end and words[pos] >> 31:
                pos += 1
            start = pos + 1
            pos = start + 2 * k
            if pos >= end:  # past the block: nothing taken yet, so draw them the slow way
                return [self._string(k) for _ in range(count)]
            strings.append(halves[start & 1][start >> 1 : (start >> 1) + k])
        self._pos = pos
        return strings

    def order_line_draws(self, count: int, items: int, amounts: bool) -> list[tuple[int, float, str]]:
        """TpccRandom.order_line_draws inline (an order line was a load's most frequent row):
        randint(1, items), randint(1, 999_999) / 100 if amounts, alphanumeric(randint(24, 24))
        a line. Drawn from a block with room for them, else one call at a time (the same words)."""
        room = count * (2 * 24 + 3 * self.REJECTION_ROOM)
        if self._end - self._pos < room:
            self._refill(room)
        words, pos, end = self._words, self._pos, self._end
        halves = self._halves or self._alphanumerics()
        item_shift, amount_shift = 32 - items.bit_length(), 32 - (999_999).bit_length()
        draws = []
        for _ in range(count):
            while pos < end and words[pos] >> item_shift >= items:
                pos += 1
            i_id = 1 + (words[pos] >> item_shift) if pos < end else 0
            pos += 1
            amount = 0.0
            if amounts:
                while pos < end and words[pos] >> amount_shift >= 999_999:
                    pos += 1
                amount = (1 + (words[pos] >> amount_shift)) / 100 if pos < end else 0.0
                pos += 1
            while pos < end and words[pos] >> 31:
                pos += 1
            start = pos + 1
            pos = start + 48
            if pos >= end:  # past the block: nothing taken yet, so draw them the slow way
                return [
                    (self.randint(1, items), self.randint(1, 999_999) / 100 if amounts else 0.0, self._string(24))
                    for _ in range(count)
                ]
            draws.append((i_id, amount, halves[start & 1][start >> 1 : (start >> 1) + 24]))
        self._pos = pos
        return draws

    def _string(self, k: int) -> str:
        """alphanumeric(randint(k, k)), one call at a time: the inline draws' fallback."""
        return self.alphanumeric(self.randint(k, k))

    def _take_pairs(self, k: int) -> int:
        """The position of k pairs of words, consumed."""
        start = self._pos
        if start + 2 * k >= self._end:  # the last word of a block starts no pair
            self._refill(2 * k + 1)
            start = 0
        self._pos = start + 2 * k
        return start

    def shuffle(self, x: list) -> None:
        for i in reversed(range(1, len(x))):
            j = self.randint(0, i)
            x[i], x[j] = x[j], x[i]


class LoadRandom(TpccRandom):
    """TpccRandom(seed, constants)'s draws, from a _ReplayedStream."""

    def __init__(self, seed: int, constants: CConstants):
        self.stream = _ReplayedStream(seed)
        # TpccRandom's own draws go through number (overridden below) and the load's shuffle
        # through rng.shuffle, which the stream answers as random.Random does; the draws that
        # use Random.choices are overridden below too
        self.rng = self.stream  # type: ignore[assignment]
        self.c = constants

    def number(self, low: int, high: int) -> int:
        return self.stream.randint(low, high)

    def money(self, low_cents: int, high_cents: int) -> float:
        return self.stream.randint(low_cents, high_cents) / 100

    def a_string(self, low: int, high: int) -> str:
        return self.stream.a_string(low, high)

    def n_string(self, low: int, high: int) -> str:
        return self.stream.choices(string.digits, self.stream.randint(low, high))

    def a_strings(self, count: int, length: int) -> list[str]:
        return self.stream.same_length_alphanumerics(count, length)

    def order_line_draws(self, count: int, items: int, amounts: bool) -> list[tuple[int, float, str]]:
        return self.stream.order_line_draws(count, items, amounts)

    def state(self) -> str:
        return self.stream.choices(string.ascii_uppercase, 2)


def generate_unit(
    key: str, scale: Scale, constants: CConstants, load_seed: int, now: dt.datetime
) -> dict[str, list[tuple]]:
    r = LoadRandom(unit_seed(load_seed, key), constants)
    kind, *ids = key.split(":")
    args = [int(i) for i in ids]
    if kind == "item":
        return {"item": list(_items(r, scale, *args))}
    if kind == "warehouse":
        return _warehouse(r, scale, *args)
    if kind == "stock":
        return {"stock": list(_stock(r, scale, *args))}
    if kind == "district":
        w_id, d_id = args
        return _district(r, scale, w_id, d_id, now=now)
    raise ValueError(f"unknown load unit {key!r}")


def unit_rows(tables: dict[str, list[tuple]]) -> int:
    return sum(len(rows) for rows in tables.values())


def _address(r: TpccRandom) -> tuple:
    return (r.a_string(10, 20), r.a_string(10, 20), r.a_string(10, 20), r.state(), r.zip_code())


def _items(r: TpccRandom, scale: Scale, chunk: int) -> Iterator[tuple]:
    first = chunk * ITEM_CHUNK + 1
    for i_id in range(first, min(first + ITEM_CHUNK, scale.items + 1)):
        yield (i_id, r.number(1, 10_000), r.a_string(14, 24), r.money(100, 10_000), r.data_with_original())


def _warehouse(r: TpccRandom, scale: Scale, w_id: int) -> dict[str, list[tuple]]:
    # YTD = the initial $10.00 history payment of every customer (300,000.00 and 30,000.00
    # at the spec's size), so clauses 3.3.2.8-9 hold for a scaled-down load too.
    d_ytd = 10.0 * scale.customers_per_district
    warehouse = (w_id, r.a_string(6, 10), *_address(r), r.fraction(0, 2000, 10_000), d_ytd * scale.districts)
    districts = [
        (d_id, w_id, r.a_string(6, 10), *_address(r), r.fraction(0, 2000, 10_000), d_ytd, scale.orders_per_district + 1)
        for d_id in range(1, scale.districts + 1)
    ]
    return {"warehouse": [warehouse], "district": districts}


def _stock(r: TpccRandom, scale: Scale, w_id: int, chunk: int) -> Iterator[tuple]:
    first = chunk * STOCK_CHUNK + 1
    for i_id in range(first, min(first + STOCK_CHUNK, scale.items + 1)):
        yield (i_id, w_id, r.number(10, 100), *r.a_strings(10, 24), 0, 0, 0, r.data_with_original())


def _customer_last_name(r: TpccRandom, scale: Scale, c_id: int) -> str:
    """Clause 4.3.2.3: the first 1,000 customers get every name once, the rest NURand."""
    if c_id <= 1000:
        return last_name(c_id - 1)
    return last_name(r.nurand(255, 0, 999, r.c.c_last))


def _district(r: TpccRandom, scale: Scale, w_id: int, d_id: int, now: dt.datetime) -> dict[str, list[tuple]]:
    customers, history = [], []
    for c_id in range(1, scale.customers_per_district + 1):
        credit = "BC" if r.number(1, 10) == 1 else "GC"
        customers.append(
            (
                c_id,
                d_id,
                w_id,
                r.a_string(8, 16),
                "OE",
                _customer_last_name(r, scale, c_id),
                *_address(r),
                r.n_string(16, 16),
                now,
                credit,
                50_000.0,
                r.fraction(0, 5000, 10_000),
                -10.0,
                10.0,
                1,
                0,
                r.a_string(300, 500),
            )
        )
        history.append((c_id, d_id, w_id, d_id, w_id, now, 10.0, r.a_string(12, 24)))
    # O_C_ID: a random permutation of the customer ids (clause 4.3.3.1)
    order_customers = list(range(1, scale.customers_per_district + 1))
    r.rng.shuffle(order_customers)
    orders, lines, new_orders = [], [], []
    undelivered_from = scale.first_undelivered_o_id
    for o_id in range(1, scale.orders_per_district + 1):
        delivered = o_id < undelivered_from
        ol_cnt = r.number(5, 15)
        orders.append(
            (o_id, d_id, w_id, order_customers[o_id - 1], now, r.number(1, 10) if delivered else None, ol_cnt, 1)
        )
        delivery_d = now if delivered else None
        lines += [
            (o_id, d_id, w_id, ol_number, i_id, w_id, delivery_d, 5, amount, dist_info)
            for ol_number, (i_id, amount, dist_info) in enumerate(
                r.order_line_draws(ol_cnt, scale.items, not delivered), 1
            )
        ]
        if not delivered:
            new_orders.append((o_id, d_id, w_id))
    return {"customer": customers, "history": history, "orders": orders, "order_line": lines, "new_order": new_orders}
