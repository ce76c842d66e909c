"""The runner's YCSB generators against YCSB's own (site.ycsb:core:0.17.0, run by ycsb_java/YcsbSamples.java).

YCSB draws from ThreadLocalRandom, which cannot be seeded, so distributions are compared as two
samples: a chi-square test of homogeneity on the key (or operation) counts, sparse keys pooled,
or Kolmogorov-Smirnov for the continuous exponential draws. A test fails below P_FLOOR, which a
correct port reaches by chance once in 10,000 comparisons; the controls show that the same tests
do tell a near miss (theta 0.95 for 0.99, a 25% hot set for 20%) apart. Where YCSB is
deterministic (FNV hash, key names, zeta sums, counters, property defaults) the outputs are
compared exactly. Every statistic is printed (pytest -s shows them)."""

from __future__ import annotations

import random
import struct
from collections import Counter

import pytest
from scipy import stats
from tpcc_runner.ycsb.generators import (
    SCRAMBLED_ITEM_COUNT,
    SCRAMBLED_ZETAN,
    ZIPFIAN_CONSTANT,
    AcknowledgedCounterGenerator,
    ExponentialGenerator,
    HotspotIntegerGenerator,
    ScrambledZipfianGenerator,
    SequentialGenerator,
    SkewedLatestGenerator,
    UniformLongGenerator,
    ZipfianGenerator,
    build_key_name,
    fnvhash64,
    zetastatic,
)
from tpcc_runner.ycsb.properties import PRESETS, Properties, resolve
from tpcc_runner.ycsb.workload import CoreWorkload
from ycsb_java import ycsb_java  # noqa: F401  (fixture)

pytestmark = pytest.mark.db  # needs a JDK and Maven Central's jar: the db stage
SAMPLES = 200_000
P_FLOOR = 1e-4
MIN_POOLED = 20  # keys seen fewer times than this (in both samples together) are pooled into one bin


def bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def chi_square(java: Counter, ours: Counter) -> tuple[float, int, float]:
    """Chi-square test that two samples come from one distribution: (statistic, dof, p)."""
    rows: list[tuple[int, int]] = []
    pooled = [0, 0]
    for value in set(java) | set(ours):
        a, b = java[value], ours[value]
        if a + b < MIN_POOLED:
            pooled[0] += a
            pooled[1] += b
        else:
            rows.append((a, b))
    if sum(pooled):
        rows.append((pooled[0], pooled[1]))
    result = stats.chi2_contingency(list(zip(*rows)), correction=False)
    return float(result.statistic), int(result.dof), float(result.pvalue)


def java_histogram(ycsb_java, spec: str, n: int = SAMPLES) -> Counter:
    return Counter({int(v): int(c) for v, c in (line.split() for line in ycsb_java("histogram", spec, n))})


def draws(generator, n: int = SAMPLES, seed: int = 7) -> Counter:
    rng = random.Random(seed)
    return Counter(generator.next_value(rng) for _ in range(n))


GENERATORS = {
    "uniform:0:999": lambda: UniformLongGenerator(0, 999),
    "zipfian:0:999": lambda: ZipfianGenerator(0, 999),
    "zipfian:1:100": lambda: ZipfianGenerator(1, 100),  # a zipfian field or scan length
    "scrambled:0:999": lambda: ScrambledZipfianGenerator(0, 999),
    "latest:1000": lambda: SkewedLatestGenerator(AcknowledgedCounterGenerator(1000)),
    "hotspot:0:999:0.2:0.8": lambda: HotspotIntegerGenerator(0, 999, 0.2, 0.8),
}


@pytest.mark.parametrize("spec", GENERATORS)
def test_key_distribution_is_ycsbs(ycsb_java, spec):
    statistic, dof, p = chi_square(java_histogram(ycsb_java, spec), draws(GENERATORS[spec]()))
    print(f"\n{spec}: chi2 {statistic:.1f} dof {dof} p {p:.4f} ({SAMPLES} draws each)")
    assert p > P_FLOOR


@pytest.mark.parametrize(
    ("spec", "near_miss"),
    [
        ("zipfian:0:999", lambda: ZipfianGenerator(0, 999, 0.95)),
        ("hotspot:0:999:0.2:0.8", lambda: HotspotIntegerGenerator(0, 999, 0.25, 0.8)),
        ("latest:1000", lambda: SkewedLatestGenerator(AcknowledgedCounterGenerator(1001))),
    ],
)
def test_the_comparison_tells_a_near_miss_apart(ycsb_java, spec, near_miss):
    statistic, dof, p = chi_square(java_histogram(ycsb_java, spec), draws(near_miss()))
    print(f"\n{spec} against a near miss: chi2 {statistic:.1f} dof {dof} p {p:.3g}")
    assert p < P_FLOOR


def test_exponential_draws_are_ycsbs(ycsb_java):
    spec = "exponential:95:857.1428571"
    java = [
        float(v) for line in ycsb_java("histogram", spec, SAMPLES) for v in [line.split()[0]] * int(line.split()[1])
    ]
    rng = random.Random(7)
    ours = ExponentialGenerator(95, 857.1428571)
    result = stats.ks_2samp(java, [ours.next_value(rng) for _ in range(SAMPLES)])
    near = ExponentialGenerator(95, 800)
    miss = stats.ks_2samp(java, [near.next_value(rng) for _ in range(SAMPLES)])
    print(f"\n{spec}: KS D {result.statistic:.5f} p {result.pvalue:.4f}; range 800 instead: p {miss.pvalue:.3g}")
    assert result.pvalue > P_FLOOR
    assert miss.pvalue < P_FLOOR


def _java_workload(ycsb_java, props: dict[str, str], n: int) -> tuple[Counter, Counter]:
    ops, keys = Counter(), Counter()
    for line in ycsb_java("workload", n, *(f"{k}={v}" for k, v in props.items())):
        kind, value, count = line.split()
        (ops if kind == "op" else keys)[value if kind == "op" else int(value)] = int(count)
    return ops, keys


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_preset_operation_mix_and_keys_are_ycsbs(ycsb_java, preset):
    """CoreWorkload.init with YCSB's workloadX file's properties (recordcount raised to 10,000)
    against ours: the operation chooser's mix and nextKeynum's key distribution."""
    n, overrides = 100_000, {"recordcount": "10000"}
    java_ops, java_keys = _java_workload(ycsb_java, {**PRESETS[preset], **overrides}, n)
    workload = CoreWorkload(resolve(preset, overrides))
    rng = random.Random(11)
    our_ops = Counter(workload.operations.next_value(rng) for _ in range(n))
    our_keys = Counter(workload.next_keynum(rng) for _ in range(n))
    mix = {op: f"{java_ops[op] / n:.4f}/{our_ops[op] / n:.4f}" for op in sorted(set(java_ops) | set(our_ops))}
    assert set(java_ops) == set(our_ops)
    line = f"\nworkload {preset}: mix (YCSB/ours) {mix}"
    if len(java_ops) > 1:
        statistic, dof, p = chi_square(java_ops, our_ops)
        line += f"; mix chi2 {statistic:.2f} dof {dof} p {p:.4f}"
        assert p > P_FLOOR
    statistic, dof, p = chi_square(java_keys, our_keys)
    print(f"{line}; keys chi2 {statistic:.1f} dof {dof} p {p:.4f}")
    assert p > P_FLOOR


def test_fnv_hash_and_key_names_are_ycsbs(ycsb_java):
    numbers = [0, 1, 2, 255, 256, 12345, 2**31 - 1, 2**31, 2**40 + 7, 2**63 - 1, -1, -(2**63)]
    assert [int(v) for v in ycsb_java("fnv", *numbers)] == [fnvhash64(n) for n in numbers]
    keynums = [0, 1, 2, 999, 123456789, 10**12]
    for order in ("hashed", "ordered"):
        for padding in (1, 20, 25):
            java = ycsb_java("keys", f"insertorder={order}", f"zeropadding={padding}", "--", *keynums)
            assert java == [build_key_name(k, order == "ordered", padding) for k in keynums], (order, padding)


@pytest.mark.parametrize(("n", "theta"), [(2, 0.99), (1000, 0.99), (100_000, 0.99), (1000, 0.5)])
def test_zeta_sums_are_ycsbs_bit_for_bit(ycsb_java, n, theta):
    assert int(ycsb_java("zeta", n, theta)[0]) == bits(zetastatic(n, theta))


@pytest.mark.parametrize(("items", "grown_to"), [(1000, 1500), (100, 100_000)])
def test_incrementally_grown_zeta_is_ycsbs(ycsb_java, items, grown_to):
    ours = ZipfianGenerator.of_items(items)
    ours.next_long(random.Random(1), grown_to)
    assert int(ycsb_java("zeta-grown", items, grown_to)[0]) == bits(ours.zetan)


def test_acknowledged_counter_advances_as_ycsbs(ycsb_java):
    order = sorted(range(10, 60), key=lambda v: (v * 37) % 50)  # acknowledged out of order
    ours = AcknowledgedCounterGenerator(10)
    expected = []
    for value in order:
        ours.acknowledge(value)
        expected.append(ours.last_value())
    assert [int(v) for v in ycsb_java("acknowledge", 10, *order)] == expected
    assert expected[-1] == 59


def test_sequential_is_ycsbs(ycsb_java):
    ours = SequentialGenerator(5, 14)
    assert [int(v) for v in ycsb_java("sequence", "sequential:5:14", 35)] == [ours.next_value() for _ in range(35)]


def test_constants_and_property_defaults_are_ycsbs(ycsb_java):
    java = dict(line.split(" ", 1) for line in ycsb_java("defaults"))
    assert int(java.pop("ZETAN")) == bits(SCRAMBLED_ZETAN)
    assert int(java.pop("ITEM_COUNT")) == SCRAMBLED_ITEM_COUNT
    assert int(java.pop("ZIPFIAN_CONSTANT")) == bits(ZIPFIAN_CONSTANT)
    ours = Properties().to_ycsb()
    # read by YCSB but not offered here: a histogram file of field lengths
    java.pop("fieldlengthhistogram")
    assert set(java) <= set(ours)
    for name, text in java.items():
        value = ours[name]
        parsed = (
            text == "true"
            if isinstance(value, bool)
            else type(value)(float(text) if isinstance(value, float) else text)
        )
        assert parsed == value, name
