"""YCSB 0.17's TimeSeriesWorkload (site.ycsb.workloads.TimeSeriesWorkload) as a stream of
operations, pure, in the shape CoreWorkload's stream has (workload.Operation), so the executor,
the stores and the ledger are those of CoreWorkload.

What YCSB does, and so what this does: fieldcount series keys of fieldlength characters,
tagcount tag keys, tag values, all from IncrementingPrintableStringGenerator (AAAA, AAAB, ...,
over A-Z a-z); a key with every combination of tag values is one time series. Each client
thread owns a slice of the keys (ThreadState: keys / threads each, the last thread the rest)
and writes one data point per series of its slice per timestamp, tag values counting up like
an odometer (last tag fastest), then the next key, then the next timestamp. A data point goes
through YCSB's DB interface as insert(table, key = the series key, values = {tag key: tag value,
timestampkey: 8-byte timestamp, valuekey: 8-byte value}); YCSB's generic bindings (MongoDB's:
_id = key) keep one record per series key, which each data point replaces: so here an INSERT is
an upsert (Operation.upsert), as YCSB's MongoDB binding with useUpsert does. An UPDATE writes a
data point of an earlier timestamp; READ and SCAN ask for the series key with fields that name a
time series and a time (`tag=value`, `YCSBTS=start[,end]`), which a generic store answers with
the record (found or not).

Where this differs from YCSB: draws come from the client thread's seeded random.Random, not
ThreadLocalRandom; the series keys and tag values are shuffled (randomtimeseriesorder) with one
fixed seed, so every client process and runner pod holds the same order and their threads'
slices are disjoint (YCSB shuffles once per client: two YCSB clients write each other's keys).
A runner pod I of N with T threads is threads I*T .. I*T+T-1 of N*T (fieldcount must be >= N*T).
An UPDATE on a thread's first timestamp writes that timestamp (YCSB: Random.nextInt(0) throws
and the client thread dies).
"""

from __future__ import annotations

import math
import random
import struct
import time

from tpcc_contract.ycsb.properties import Properties, PropertyError

from .generators import (
    HotspotIntegerGenerator,
    ScrambledZipfianGenerator,
    SequentialGenerator,
    UniformLongGenerator,
    ZipfianGenerator,
)
from .workload import INSERT, READ, SCAN, UPDATE, CoreWorkload, Operation, operation_chooser

# printableBasicAlphaASCIISet: the code points 0..127 Java calls upper or lower case letters
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
SHUFFLE_SEED = 20171  # any fixed value: every process and pod must shuffle alike
# TimeUnit -> (UnixEpochTimestampGenerator.getOffset's factor, the clock's unit in seconds)
UNITS = {"SECONDS": (1, 1), "MILLISECONDS": (1, 0.001), "MINUTES": (60, 1), "HOURS": (3600, 1), "DAYS": (86400, 1)}


def printable_strings(length: int, count: int) -> list[str]:
    """IncrementingPrintableStringGenerator(length).nextString() count times: an odometer over
    ALPHABET, last character fastest (validation keeps count within 52^length: no roll-over)."""
    out = []
    for n in range(count):
        digits = []
        for _ in range(length):
            n, digit = divmod(n, len(ALPHABET))
            digits.append(ALPHABET[digit])
        out.append("".join(reversed(digits)))
    return out


def shuffle_array(items: list, rng: random.Random) -> None:
    """Utils.shuffleArray: Fisher-Yates from the end, swapping i with a draw in 0..i."""
    for i in range(len(items) - 1, 0, -1):
        j = rng.randrange(i + 1)
        items[i], items[j] = items[j], items[i]


def encode_long(value: int) -> bytes:
    """NumericByteIterator(long).toArray(): Utils.longToBytes, 8 bytes big-endian."""
    return struct.pack(">q", value)


def encode_double(value: float) -> bytes:
    """NumericByteIterator(double).toArray(): the double's raw bits, big-endian."""
    return struct.pack(">d", value)


def java_next_int(rng: random.Random) -> int:
    """Random.nextInt(): a signed 32-bit integer, all equally likely."""
    return rng.getrandbits(32) - (1 << 31)


def key_chooser(p: Properties):
    """TimeSeriesWorkload.init's keychooser over the series keys 0..fieldcount-1."""
    last = p.fieldcount - 1
    if p.requestdistribution == "sequential":
        return SequentialGenerator(0, last)
    if p.requestdistribution == "zipfian":
        return ScrambledZipfianGenerator(0, last)
    if p.requestdistribution == "hotspot":
        return HotspotIntegerGenerator(0, last, p.hotspotdatafraction, p.hotspotopnfraction)
    return UniformLongGenerator(0, last)


class EpochTimestamps:
    """UnixEpochTimestampGenerator: next_value() steps one interval; the first gives `start`, or
    with none the clock less one interval (YCSB's constructor steps back two, next steps one)."""

    def __init__(self, interval: int, units: str, start: int | None):
        self.step = interval * UNITS[units][0]
        if start is None:
            start = int(time.time() / UNITS[units][1]) - self.step
        self.current = start - self.step

    def offset(self, intervals: int) -> int:
        return intervals * self.step

    def next_value(self) -> int:
        self.current += self.step
        return self.current


class TimeSeriesWorkload:
    """What TimeSeriesWorkload.init builds, shared by a process's client threads; each thread
    draws its data points from its own SeriesThread (for_thread)."""

    def __init__(self, props: Properties, shard: tuple[int, int] = (0, 1)):
        self.props = props
        self.shard = shard
        self.cardinality = props.tag_cardinalities()
        self.keys = printable_strings(props.fieldlength, props.fieldcount)
        self.tag_keys = printable_strings(props.tagkeylength, props.tagcount)
        self.tag_values = printable_strings(props.tagvaluelength, max(self.cardinality))
        if props.randomtimeseriesorder:
            order = random.Random(SHUFFLE_SEED)
            shuffle_array(self.keys, order)
            shuffle_array(self.tag_values, order)
        self.total_cardinality = props.series_count()
        self.max_offsets = props.recordcount // self.total_cardinality + 1
        sizes = (props.fieldcount, *self.cardinality)
        # cumulativeCardinality: series per step of the key (index 0) and of each tag
        self.cumulative = [math.prod(sizes[i + 1 :]) for i in range(len(sizes))]
        self.first_incrementable = next((i for i, c in enumerate(self.cardinality) if c > 1), 0)
        self.operations = operation_chooser(props)
        self.key_chooser = key_chooser(props)
        self.scan_length = (
            ZipfianGenerator(1, props.maxscanlength)
            if props.scanlengthdistribution == "zipfian"
            else UniformLongGenerator(1, props.maxscanlength)
        )

    def for_thread(self, index: int, threads: int) -> SeriesThread:
        """Client thread `index` of this pod's `threads` (initThread)."""
        pod, pods = self.shard
        return SeriesThread(self, pod * threads + index, pods * threads)

    def first_key(self) -> str:
        """A series key the load writes whatever its threads (thread 0's first)."""
        return self.keys[0]

    def query_fields(self, rng: random.Random, start: int, scan: bool) -> tuple[str, ...]:
        """doTransactionRead's and doTransactionScan's fields: a time series (tag=value, or the tag
        key alone when grouped by it) and a time (YCSBTS=start, or start,end with querytimespan)."""
        p, delim = self.props, self.props.tagpairdelimiter
        fields = [
            key if p.groupbyfunction and p.groupbykeys[i] else key + delim + self.tag_values[rng.randrange(card)]
            for i, (key, card) in enumerate(zip(self.tag_keys, self.cardinality))
        ]
        if p.querytimespan > 0:
            span = (
                p.timestampinterval * rng.randrange(p.querytimespan // p.timestampinterval)
                if p.queryrandomtimespan
                else p.querytimespan
            )
            fields.append(f"{p.timestampkey}{delim}{start}{p.querytimespandelimiter}{start + span}")
        else:
            fields.append(f"{p.timestampkey}{delim}{start}")
        if p.groupbyfunction:
            fields.append(p.groupbykey + delim + p.groupbyfunction)
        if p.downsamplingfunction:  # 0.17's scan puts the delimiter between function and interval
            between = delim if scan else ""
            fields.append(f"{p.downsamplingkey}{delim}{p.downsamplingfunction}{between}{p.downsamplinginterval}")
        return tuple(sorted(fields))


class SeriesThread:
    """TimeSeriesWorkload.ThreadState with doInsert and doTransaction: the interface a client
    thread has of CoreWorkload (next_load_insert, next_operation, acknowledge_insert)."""

    def __init__(self, workload: TimeSeriesWorkload, thread_id: int, threads: int):
        p = workload.props
        if p.fieldcount < threads:
            raise PropertyError(
                f"property fieldcount ({p.fieldcount}: the series keys) must be >= the client threads of "
                f"all runner pods ({threads}): each thread writes its own keys"
            )
        self.w, self.props = workload, p
        per_thread = p.fieldcount // threads
        self.key_idx = self.key_start = per_thread * thread_id
        self.key_end = p.fieldcount if thread_id == threads - 1 else self.key_start + per_thread
        self.tag_idx = [0] * p.tagcount
        self.rollover = False
        self.timestamps = EpochTimestamps(p.timestampinterval, p.timestampunits, p.insertstart or None)
        self.start_timestamp = self.timestamps.next_value()
        self.query_offsets = UniformLongGenerator(0, workload.max_offsets - 2)

    def _timestamp(self, rng: random.Random, insert: bool, overall: int) -> int:
        p, now = self.props, self.timestamps.current
        if not insert:  # an update rewrites a point of an earlier timestamp
            delta = (now - self.start_timestamp) // p.timestampinterval
            return self.start_timestamp + (rng.randrange(delta) if delta > 0 else 0) * p.timestampinterval
        if p.delayedseries > 0 and overall / self.w.total_cardinality < p.delayedseries:
            return now - p.timestampinterval * (overall % p.delayedintervals)
        return now

    def _value(self, rng: random.Random) -> bytes:
        kind = self.props.valuetype
        if kind == "mixednumbers":
            kind = "integers" if rng.random() < 0.5 else "floats"
        return encode_long(java_next_int(rng)) if kind == "integers" else encode_double(rng.random() * 100000)

    def _point(self, rng: random.Random, insert: bool) -> tuple[int, dict[str, bytes]]:
        w, p = self.w, self.props
        values = {w.tag_keys[i]: w.tag_values[t].encode() for i, t in enumerate(self.tag_idx)}
        overall = self.key_idx * w.cumulative[0]
        if p.delayedseries > 0:
            overall += sum(t * w.cumulative[i + 1] for i, t in enumerate(self.tag_idx))
        values[p.timestampkey] = encode_long(self._timestamp(rng, insert, overall))
        values[p.valuekey] = self._value(rng)
        return self.key_idx, values

    def _advance(self) -> None:
        """The next series: tag values count up, last tag fastest; past the last combination the
        next key of the thread's slice, past its last key the next timestamp."""
        tag_rollover = False
        for i in range(len(self.w.cardinality) - 1, -1, -1):
            if self.w.cardinality[i] <= 1:
                tag_rollover = True
                continue
            if self.tag_idx[i] + 1 >= self.w.cardinality[i]:
                self.tag_idx[i] = 0
                tag_rollover = tag_rollover or i == self.w.first_incrementable
            else:
                tag_rollover = False
                self.tag_idx[i] += 1
                break
        if tag_rollover:
            if self.key_idx + 1 >= self.key_end:
                self.key_idx, self.rollover = self.key_start, True
            else:
                self.key_idx += 1

    def next_data_point(self, rng: random.Random, insert: bool) -> tuple[int, dict[str, bytes]]:
        """nextDataPoint: with sparsity, skip a random number of series before the one written."""
        bound = int(math.prod(self.w.cardinality) * self.props.sparsity)  # YCSB: nextInt(0) throws
        iterations = max(1, rng.randrange(bound) if bound > 0 else 1)
        while True:
            iterations -= 1
            if self.rollover:
                self.timestamps.next_value()
                self.rollover = False
            point = self._point(rng, insert) if iterations <= 0 else None
            self._advance()
            if point is not None:
                return point

    def _write(self, rng: random.Random, insert: bool) -> Operation:
        keynum, values = self.next_data_point(rng, insert)
        key = self.w.keys[keynum]
        if insert:
            return Operation(INSERT, keynum, key, values=values, upsert=True)
        return Operation(UPDATE, keynum, key, values=values)

    def next_load_insert(self, rng: random.Random) -> Operation:
        return self._write(rng, insert=True)

    def _query_start(self, offsets: int) -> int:
        return self.start_timestamp + self.timestamps.offset(offsets) if offsets > 0 else self.start_timestamp

    def next_operation(self, rng: random.Random) -> Operation:
        kind = self.w.operations.next_value(rng)
        if kind in (INSERT, UPDATE):
            return self._write(rng, insert=kind == INSERT)
        if kind == READ:
            keynum = self.w.key_chooser.next_value(rng)
            start = self._query_start(self.query_offsets.next_value(rng))
            return Operation(READ, keynum, self.w.keys[keynum], fields=self.w.query_fields(rng, start, scan=False))
        keynum = rng.randrange(len(self.w.keys))  # a scan's key is uniform whatever requestdistribution says
        length = self.w.scan_length.next_value(rng)
        start = self._query_start(rng.randrange(self.w.max_offsets - 1))
        fields = self.w.query_fields(rng, start, scan=True)
        return Operation(SCAN, keynum, self.w.keys[keynum], fields=fields, scan_length=length)

    def acknowledge_insert(self, op: Operation) -> None:
        """A data point's insert adds no key for later reads to wait for."""


def workload_for(props: Properties, shard: tuple[int, int] = (0, 1)) -> CoreWorkload | TimeSeriesWorkload:
    """The workload props.workload names, for a process's client threads (each takes its part with
    for_thread)."""
    return TimeSeriesWorkload(props, shard) if props.timeseries else CoreWorkload(props, shard)
