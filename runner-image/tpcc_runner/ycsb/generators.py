"""YCSB 0.17's generators (site.ycsb.generator, unchanged since 0.15 but for the package name),
ported line by line: the same arithmetic in the same order, so the same uniform draws give the
same values (runner-image/tests/test_ycsb_java.py compares them with YCSB's own jar).

The one difference is where randomness comes from. YCSB draws from ThreadLocalRandom, which
cannot be seeded; here every draw takes a `random.Random` (the client thread's, seeded from the
run's seed), so a run can be repeated. A generator's own state (a counter, the zipfian zeta
sum) is shared by the client threads as YCSB's is, behind a lock where YCSB synchronises.

Java's `Math.abs(rnd.nextLong()) % n` is drawn as `rng.getrandbits(63) % n`: the same values with
the same probabilities except that Java's also maps Long.MIN_VALUE (probability 2^-64) to a
negative number.
"""

from __future__ import annotations

import math
import random
import threading

MASK_64 = (1 << 64) - 1
FNV_OFFSET_BASIS_64 = 0xCBF29CE484222325
FNV_PRIME_64 = 1099511628211
ZIPFIAN_CONSTANT = 0.99
# ScrambledZipfianGenerator: the zeta sum of 10^10 items for constant 0.99, precomputed by YCSB
# (summing it takes hours); the generator draws over 0..ITEM_COUNT and hashes into the key range.
SCRAMBLED_ZETAN = 26.46902820178302
SCRAMBLED_ITEM_COUNT = 10_000_000_000
EXPONENTIAL_PERCENTILE_DEFAULT = 95.0
EXPONENTIAL_FRAC_DEFAULT = 0.8571428571  # 1/7 of the records get the percentile's share of draws
ACKNOWLEDGE_WINDOW = 1 << 20  # AcknowledgedCounterGenerator.WINDOW_SIZE


def _signed64(value: int) -> int:
    value &= MASK_64
    return value - (1 << 64) if value >= 1 << 63 else value


def fnvhash64(value: int) -> int:
    """site.ycsb.Utils.fnvhash64: FNV-1a over the 8 low-order-first bytes of a long, then
    Math.abs (which leaves Long.MIN_VALUE negative). Java takes the bytes with `val & 0xff` and
    an arithmetic `val >> 8`: the little-endian bytes of the long's two's complement, which
    to_bytes gives at once (0.9 -> 0.6 us a call; two calls per scrambled zipfian key)."""
    hashval = FNV_OFFSET_BASIS_64
    for octet in (value & MASK_64).to_bytes(8, "little"):
        hashval = ((hashval ^ octet) * FNV_PRIME_64) & MASK_64
    signed = _signed64(hashval)
    return signed if signed == -(1 << 63) else abs(signed)


def build_key_name(keynum: int, ordered: bool, zeropadding: int = 1) -> str:
    """CoreWorkload.buildKeyName: "user" + the key number (its FNV hash unless insertorder is
    ordered), left-padded with zeros to zeropadding digits."""
    value = str(keynum if ordered else fnvhash64(keynum))
    return "user" + "0" * (zeropadding - len(value)) + value


def java_int(value: float) -> int:
    """Number.intValue() of a Double: truncation, saturating at the int range (an exponential
    draw of u = 0 is infinite)."""
    if math.isnan(value):
        return 0
    if value >= 2**31 - 1:
        return 2**31 - 1
    if value <= -(2**31):
        return -(2**31)
    return int(value)


def _uniform_below(rng: random.Random, interval: int) -> int:
    return rng.getrandbits(63) % interval


class CounterGenerator:
    """Hands out countstart, countstart + 1, ... to all threads."""

    def __init__(self, countstart: int):
        self._next = countstart
        self._lock = threading.Lock()

    def next_value(self, rng: random.Random | None = None) -> int:
        with self._lock:
            value = self._next
            self._next += 1
        return value

    def last_value(self) -> int:
        return self._next - 1

    def upcoming(self) -> int:
        """The value next_value hands out next (for the compiled loop to go on from)."""
        return self._next


class AcknowledgedCounterGenerator(CounterGenerator):
    """A counter whose last_value is the highest value below which every value handed out has
    been acknowledged (inserted): readers never pick a key whose insert is still under way."""

    def __init__(self, countstart: int):
        super().__init__(countstart)
        self._window = bytearray(ACKNOWLEDGE_WINDOW)
        self._limit = countstart - 1
        self._window_lock = threading.Lock()

    def last_value(self) -> int:
        return self._limit

    def acknowledge(self, value: int) -> None:
        slot = value & (ACKNOWLEDGE_WINDOW - 1)
        if self._window[slot]:
            raise RuntimeError("Too many unacknowledged insertion keys.")
        self._window[slot] = 1
        if self._window_lock.acquire(blocking=False):  # YCSB's tryLock: another thread advances it
            try:
                before_first = self._limit & (ACKNOWLEDGE_WINDOW - 1)
                index = self._limit + 1
                while index != before_first:
                    slot = index & (ACKNOWLEDGE_WINDOW - 1)
                    if not self._window[slot]:
                        break
                    self._window[slot] = 0
                    index += 1
                self._limit = index - 1
            finally:
                self._window_lock.release()


class ConstantIntegerGenerator:
    def __init__(self, value: int):
        self.value = value

    def next_value(self, rng: random.Random) -> int:
        return self.value


class UniformLongGenerator:
    """Uniform over lb..ub inclusive."""

    def __init__(self, lb: int, ub: int):
        self.lb, self.ub = lb, ub
        self.interval = ub - lb + 1

    def next_value(self, rng: random.Random) -> int:
        return _uniform_below(rng, self.interval) + self.lb


def zetastatic(n: int, theta: float, start: int = 0, initial_sum: float = 0.0) -> float:
    """ZipfianGenerator.zetastatic: sum of 1 / (i + 1)^theta for i in start..n-1, added to
    initial_sum (the incremental form extends a sum already computed up to start)."""
    total = initial_sum
    for i in range(start, n):
        total += 1 / math.pow(i + 1, theta)
    return total


class ZipfianGenerator:
    """Gray et al.'s zipfian over min..max (item min most popular), constant theta. Asked for a
    larger item count than it was built with (SkewedLatest as records are inserted) it extends
    its zeta sum incrementally, as YCSB does."""

    def __init__(
        self, min_value: int, max_value: int, zipfian_constant: float = ZIPFIAN_CONSTANT, zetan: float | None = None
    ):
        self.items = max_value - min_value + 1
        self.base = min_value
        self.theta = zipfian_constant
        self.zeta2theta = zetastatic(2, self.theta)
        self.alpha = 1.0 / (1.0 - self.theta)
        self.zetan = zetastatic(self.items, self.theta) if zetan is None else zetan
        self.countforzeta = self.items
        self.eta = self._eta()
        self._lock = threading.Lock()

    @classmethod
    def of_items(cls, items: int, zipfian_constant: float = ZIPFIAN_CONSTANT) -> ZipfianGenerator:
        return cls(0, items - 1, zipfian_constant)

    def _eta(self) -> float:
        return (1 - math.pow(2.0 / self.items, 1 - self.theta)) / (1 - self.zeta2theta / self.zetan)

    def next_long(self, rng: random.Random, itemcount: int) -> int:
        if itemcount > self.countforzeta:
            with self._lock:
                if itemcount > self.countforzeta:
                    self.zetan = zetastatic(itemcount, self.theta, self.countforzeta, self.zetan)
                    self.countforzeta = itemcount
                    self.eta = self._eta()
        # YCSB leaves a shrinking item count alone unless allowitemcountdecrease, which it never sets
        u = rng.random()
        uz = u * self.zetan
        if uz < 1.0:
            return self.base
        if uz < 1.0 + math.pow(0.5, self.theta):
            return self.base + 1
        return self.base + int(itemcount * math.pow(self.eta * u - self.eta + 1, self.alpha))

    def next_value(self, rng: random.Random) -> int:
        return self.next_long(rng, self.items)


class ScrambledZipfianGenerator:
    """Zipfian popularity spread over min..max by hashing: a zipfian draw over 10^10 items,
    FNV-hashed into the range, so the popular keys are scattered rather than all at the start."""

    def __init__(self, min_value: int, max_value: int, zipfian_constant: float = ZIPFIAN_CONSTANT):
        self.min, self.max = min_value, max_value
        self.itemcount = max_value - min_value + 1
        zetan = SCRAMBLED_ZETAN if zipfian_constant == ZIPFIAN_CONSTANT else None
        # YCSB's own off-by-one: 0..ITEM_COUNT is ITEM_COUNT + 1 items, with the zeta of ITEM_COUNT
        self.gen = ZipfianGenerator(0, SCRAMBLED_ITEM_COUNT, zipfian_constant, zetan)

    def next_value(self, rng: random.Random) -> int:
        return self.min + fnvhash64(self.gen.next_value(rng)) % self.itemcount


class SkewedLatestGenerator:
    """Zipfian by recency: the most recently inserted record (the basis counter's last value)
    is the most popular."""

    def __init__(self, basis: CounterGenerator):
        self.basis = basis
        self.zipfian = ZipfianGenerator.of_items(basis.last_value())

    def next_value(self, rng: random.Random) -> int:
        last = self.basis.last_value()
        return last - self.zipfian.next_long(rng, last)


class HotspotIntegerGenerator:
    """hotopnfraction of the draws fall uniformly on the first hotsetfraction of lb..ub, the rest
    uniformly on the others."""

    def __init__(self, lower: int, upper: int, hotset_fraction: float, hot_opn_fraction: float):
        if lower > upper:
            lower, upper = upper, lower
        self.lower = lower
        interval = upper - lower + 1
        self.hot_interval = int(interval * hotset_fraction)
        self.cold_interval = interval - self.hot_interval
        self.hot_opn_fraction = hot_opn_fraction
        if (hot_opn_fraction > 0 and self.hot_interval == 0) or (hot_opn_fraction < 1 and self.cold_interval == 0):
            raise ValueError(
                f"hotspot: {interval} keys with hotspotdatafraction {hotset_fraction} leave the hot "
                f"or the cold set empty while hotspotopnfraction {hot_opn_fraction} draws from it"
            )

    def next_value(self, rng: random.Random) -> int:
        if rng.random() < self.hot_opn_fraction:
            return self.lower + _uniform_below(rng, self.hot_interval)
        return self.lower + self.hot_interval + _uniform_below(rng, self.cold_interval)


class SequentialGenerator:
    """countstart, countstart + 1, ..., countend, then from countstart again (shared)."""

    def __init__(self, countstart: int, countend: int):
        self.countstart = countstart
        self.interval = countend - countstart + 1
        self._counter = CounterGenerator(0)

    def next_value(self, rng: random.Random | None = None) -> int:
        return self.countstart + self._counter.next_value() % self.interval

    def upcoming(self) -> int:
        """The count next_value takes next (for the compiled loop to go on from)."""
        return self._counter.upcoming()


class ExponentialGenerator:
    """Exponentially distributed, with percentile% of the draws below `range_`."""

    def __init__(self, percentile: float, range_: float):
        self.gamma = -math.log(1.0 - percentile / 100.0) / range_

    def next_value(self, rng: random.Random) -> float:
        u = rng.random()
        return math.inf if u == 0.0 else -math.log(u) / self.gamma


class DiscreteGenerator:
    """Picks a value with probability proportional to its weight, in the order they were added
    (CoreWorkload's operation chooser)."""

    def __init__(self, weighted: list[tuple[float, str]]):
        total = sum(w for w, _ in weighted)
        # each value's probability, as YCSB divides on every draw (the same doubles, once)
        self.shares = [(weight / total, value) for weight, value in weighted]

    def next_value(self, rng: random.Random) -> str:
        val = rng.random()
        for pw, value in self.shares:
            if val < pw:
                return value
            val -= pw
        raise AssertionError("DiscreteGenerator: no value chosen")  # unreachable while weights sum > 0
