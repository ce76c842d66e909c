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
from tpcc_contract.ycsb.properties import PRESETS, Properties, resolve
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
from tpcc_runner.ycsb.timeseries import TimeSeriesWorkload
from tpcc_runner.ycsb.workload import INSERT, READ, UPDATE, CoreWorkload, Operation
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


@pytest.mark.parametrize("preset", [p for p in sorted(PRESETS) if "workload" not in PRESETS[p]])
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


# TimeSeriesWorkload: 7 series keys over 3 threads (the last takes 3), tag cardinalities 1, 2, 3,
# a fixed first timestamp, the default 10 % of series delayed by up to 5 intervals
TS = {
    "workload": "site.ycsb.workloads.TimeSeriesWorkload",
    "fieldcount": "7",
    "fieldlength": "3",
    "tagcount": "3",
    "tagcardinality": "1,2,3",
    "tagkeylength": "2",
    "tagvaluelength": "2",
    "insertstart": "1700000000",
    "recordcount": "4200",
    "randomtimeseriesorder": "false",
}


def _line(thread: int, op: Operation, props: Properties) -> str:
    """An operation as YcsbSamples' RecordingDB prints the DB call it makes."""
    if op.kind in (INSERT, UPDATE):
        values = op.written
        tags = ";".join(
            f"{k}={v.decode()}" for k, v in sorted(values.items()) if k not in (props.timestampkey, props.valuekey)
        )
        timestamp = struct.unpack(">q", values[props.timestampkey])[0]
        kind = "i" if props.valuetype == "integers" else "f"
        return f"{thread} {'I' if op.kind == INSERT else 'U'} {op.key} {tags} {timestamp} {kind}"
    fields = ";".join(sorted(op.fields or ()))
    return f"{thread} R {op.key} {fields}" if op.kind == READ else f"{thread} S {op.key} {op.scan_length} {fields}"


def _ours_timeseries(given: dict[str, str], loads: int, runs: int, threads: int) -> list[str]:
    props = resolve(None, {**given, "threadcount": str(threads)})
    lines = []
    for phase in ("load", "run"):
        workload = TimeSeriesWorkload(props)
        for t in range(threads):
            series, rng = workload.for_thread(t, threads), random.Random(f"{phase}{t}")
            for _ in range(loads if phase == "load" else runs):
                op = series.next_load_insert(rng) if phase == "load" else series.next_operation(rng)
                lines.append(_line(t, op, props))
    return lines


def _java_timeseries(ycsb_java, given: dict[str, str], loads: int, runs: int, threads: int) -> list[str]:
    return ycsb_java("timeseries", loads, runs, threads, *(f"{k}={v}" for k, v in given.items() if k != "workload"))


@pytest.mark.parametrize("valuetype", ["floats", "integers"])
def test_timeseries_load_is_ycsbs_line_for_line(ycsb_java, valuetype):
    """Keys, tag odometer, thread slices, timestamps and delayed series are deterministic in
    YCSB: the DB calls of a load are compared exactly."""
    given = {**TS, "valuetype": valuetype, "readproportion": "0", "updateproportion": "0", "insertproportion": "1"}
    java = _java_timeseries(ycsb_java, given, 200, 0, 3)
    assert java == _ours_timeseries(given, 200, 0, 3)
    assert len(java) == 600 and any(line.split()[4] != "1700000000" for line in java[:6])


def test_timeseries_shuffled_keys_are_ycsbs_keys(ycsb_java):
    """randomtimeseriesorder (the default) shuffles with ThreadLocalRandom in YCSB: the same keys,
    each thread the same number of them, the same number of tag value combinations."""
    given = {
        **TS,
        "randomtimeseriesorder": "true",
        "readproportion": "0",
        "updateproportion": "0",
        "insertproportion": "1",
    }

    def slices(lines):
        keys: dict[str, set[str]] = {}
        for line in lines:
            thread, _, key, tags = line.split()[:4]
            keys.setdefault(thread, set()).add(key)
        return sorted(len(v) for v in keys.values()), set().union(*keys.values())

    java, ours = _java_timeseries(ycsb_java, given, 200, 0, 3), _ours_timeseries(given, 200, 0, 3)
    assert slices(java) == slices(ours)
    # the tag values a series key takes are a draw of the shuffle: their number is not
    assert len({line.split()[3] for line in java}) == len({line.split()[3] for line in ours}) == 6


def test_timeseries_run_is_ycsbs(ycsb_java):
    """A run's operation mix, which series key and tag values a read asks for (zipfian keys), at
    which time (an offset among recordcount / series - 1, a span of querytimespan) and scan
    lengths, which series the inserts write, by chi-square."""
    n = 60_000
    given = {
        **TS,
        "readproportion": "0.3",
        "updateproportion": "0.1",
        "insertproportion": "0.5",
        "scanproportion": "0.1",
        "requestdistribution": "zipfian",
        "querytimespan": "3600",
        "maxscanlength": "50",
    }
    # YCSB's update before the thread's second timestamp throws (X) before the odometer moves;
    # ours writes the first timestamp: the inserts after are shifted, so compared by counts
    java = [line.split() for line in _java_timeseries(ycsb_java, given, 0, n, 1)]
    ours = [line.split() for line in _ours_timeseries(given, 0, n, 1)]
    assert 0 < sum(f[1] == "X" for f in java) < 42  # 7 keys x 6 tag combinations a timestamp
    samples = {
        "mix": lambda fs: Counter("U" if f[1] == "X" else f[1] for f in fs),
        "insert keys and tags": lambda fs: Counter(f"{f[2]} {f[3]}" for f in fs if f[1] == "I"),
        "read keys": lambda fs: Counter(f[2] for f in fs if f[1] == "R"),
        "read fields": lambda fs: Counter(field for f in fs if f[1] == "R" for field in f[3].split(";")),
        "scan keys": lambda fs: Counter(f[2] for f in fs if f[1] == "S"),
        "scan lengths": lambda fs: Counter(f[3] for f in fs if f[1] == "S"),
    }
    for name, sample in samples.items():
        statistic, dof, p = chi_square(sample(java), sample(ours))
        print(f"\ntimeseries {name}: chi2 {statistic:.1f} dof {dof} p {p:.4f}")
        assert p > P_FLOOR, name
    uniform = [line.split() for line in _ours_timeseries({**given, "requestdistribution": "uniform"}, 0, n, 1)]
    statistic, dof, p = chi_square(samples["read keys"](java), samples["read keys"](uniform))
    print(f"timeseries read keys against uniform ones: chi2 {statistic:.1f} dof {dof} p {p:.3g}")
    assert p < P_FLOOR
    inserts = sum(f[1] == "I" for f in ours)
    assert all(1700000000 <= int(f[4]) < 1700000000 + 60 * inserts for f in ours if f[1] == "U")
