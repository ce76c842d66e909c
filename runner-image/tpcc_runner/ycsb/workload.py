"""YCSB's CoreWorkload as a stream of operations, pure: which operation, which key, which fields
and values, how long a scan (site.ycsb.workloads.CoreWorkload's init, doInsert, doTransaction*
and nextKeynum, in that order of draws). A store executes them; the executor times them.

One CoreWorkload is shared by the client threads of a run (its counters are YCSB's shared
state); each thread draws with its own seeded random.Random.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

from tpcc_contract.ycsb.properties import OPERATIONS, Properties

from .generators import (
    AcknowledgedCounterGenerator,
    ConstantIntegerGenerator,
    CounterGenerator,
    DiscreteGenerator,
    ExponentialGenerator,
    HotspotIntegerGenerator,
    ScrambledZipfianGenerator,
    SequentialGenerator,
    SkewedLatestGenerator,
    UniformLongGenerator,
    ZipfianGenerator,
    build_key_name,
    java_int,
)

READ, UPDATE, INSERT, SCAN, READMODIFYWRITE = OPERATIONS
# What YCSB's random values are made of: printable ASCII (RandomByteIterator draws ' ' + 0..95).
_PRINTABLE = bytes(32 + b % 95 for b in range(256))


@dataclass(frozen=True)
class Operation:
    kind: str  # one of OPERATIONS
    keynum: int  # as this pod counts (CoreWorkload.insert_keynum: its key's)
    key: str
    fields: tuple[str, ...] | None = None  # fields to read; None: all of them
    values: dict[str, bytes] | None = None  # fields written (UPDATE, INSERT, READMODIFYWRITE)
    scan_length: int = 0  # records a SCAN reads from key on
    upsert: bool = False  # an INSERT that replaces the record if the key is there (TimeSeriesWorkload's)

    @property
    def written(self) -> dict[str, bytes]:
        """The fields an UPDATE, INSERT or READMODIFYWRITE writes."""
        if self.values is None:
            raise ValueError(f"a {self.kind} operation writes no fields")
        return self.values


def random_value(rng: random.Random, length: int) -> bytes:
    return rng.randbytes(length).translate(_PRINTABLE)


def java_string_hash(text: str) -> int:
    """String.hashCode (of ASCII text): s[0]*31^(n-1) + ... + s[n-1] in 32-bit two's complement."""
    h = 0
    for c in text.encode():
        h = (31 * h + c) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def deterministic_value(key: str, field: str, length: int) -> bytes:
    """CoreWorkload.buildDeterministicValue (dataintegrity=true): "key:field", then ":" and the
    hashCode of what is there so far (the ":" included) until it is long enough, cut to length."""
    text = f"{key}:{field}"
    while len(text) < length:
        text += ":"
        text += str(java_string_hash(text))
    return text[:length].encode()


def field_length_generator(p: Properties):
    if p.fieldlengthdistribution == "uniform":
        return UniformLongGenerator(p.minfieldlength, p.fieldlength)
    if p.fieldlengthdistribution == "zipfian":
        return ZipfianGenerator(p.minfieldlength, p.fieldlength)
    return ConstantIntegerGenerator(p.fieldlength)


def operation_chooser(p: Properties) -> DiscreteGenerator:
    """The operations with a proportion > 0, in CoreWorkload.createOperationGenerator's order."""
    return DiscreteGenerator([(share, op) for op, share in p.proportions().items() if share > 0])


def key_chooser(p: Properties, inserted: AcknowledgedCounterGenerator):
    first, last = p.insertstart, p.insertstart + p.records_to_load - 1
    if p.requestdistribution == "exponential":
        return ExponentialGenerator(p.exponential_percentile, p.recordcount * p.exponential_frac)
    if p.requestdistribution == "sequential":
        return SequentialGenerator(first, last)
    if p.requestdistribution == "zipfian":
        # sized for the keys the run's inserts will add (YCSB's fudge factor 2), so that the
        # popular keys stay the same as records are inserted
        expected_new_keys = int(p.operationcount * p.insertproportion * 2.0)
        return ScrambledZipfianGenerator(first, last + 1 + expected_new_keys)
    if p.requestdistribution == "latest":
        return SkewedLatestGenerator(inserted)
    if p.requestdistribution == "hotspot":
        return HotspotIntegerGenerator(first, last, p.hotspotdatafraction, p.hotspotopnfraction)
    return UniformLongGenerator(first, last)


def scan_length_generator(p: Properties):
    if p.scanlengthdistribution == "zipfian":
        return ZipfianGenerator(p.minscanlength, p.maxscanlength)
    return UniformLongGenerator(p.minscanlength, p.maxscanlength)


class CoreWorkload:
    """shard (I, N): runner pod I of N. Its run inserts keynums recordcount + I, + I + N, + I + 2N,
    ... (insert_keynum): each pod has its own interleaved slice of the keys after the load, as
    YCSB's parallel clients get theirs with insertstart/insertcount, and with hashed insertorder
    the slices are spread over the key space alike. The pod counts its inserts as one YCSB client
    does (keynums recordcount, recordcount + 1, ...), so its reads and updates choose among the
    loaded records and the inserts it has seen acknowledged, never another pod's unfinished one.

    A pod's client processes (pool.py) each have a CoreWorkload: process j of P in pod I of N is
    shard (I + j*N, N*P). Its keynums recordcount + I + (j + k*P)*N are the pod's own (I mod N,
    whatever P another pod has), j's among them; it reads only loaded records and its own
    acknowledged inserts, as a pod does."""

    def __init__(self, props: Properties, shard: tuple[int, int] = (0, 1)):
        self.props = props
        self.shard = shard
        self.fields = props.field_names()
        self.ordered = props.insertorder == "ordered"
        self.field_length = field_length_generator(props)
        self.load_keys = CounterGenerator(props.insertstart)
        self.operations = operation_chooser(props)
        # the run's inserts continue after the loaded records; reads see only acknowledged ones
        self.inserted = AcknowledgedCounterGenerator(props.recordcount)
        self.key_chooser = key_chooser(props, self.inserted)
        self.field_chooser = UniformLongGenerator(0, props.fieldcount - 1)
        self.scan_length = scan_length_generator(props)

    def key_name(self, keynum: int) -> str:
        return build_key_name(keynum, self.ordered, self.props.zeropadding)

    def for_thread(self, index: int, threads: int) -> CoreWorkload:
        """What client thread `index` draws from: CoreWorkload's state is shared by them all."""
        return self

    def first_key(self) -> str:
        """The first record the load writes."""
        return self.key_name(self.props.insertstart)

    def insert_keynum(self, counted: int) -> int:
        """The keynum this pod writes for the run's counted keynum (identity for one pod and for
        the loaded records)."""
        if counted < self.props.recordcount:
            return counted
        index, pods = self.shard
        return self.props.recordcount + (counted - self.props.recordcount) * pods + index

    def _run_key(self, counted: int) -> tuple[int, str]:
        return counted, self.key_name(self.insert_keynum(counted))

    def _value(self, rng: random.Random, key: str, field: str) -> bytes:
        length = self.field_length.next_value(rng)
        return deterministic_value(key, field, length) if self.props.dataintegrity else random_value(rng, length)

    def _all_values(self, rng: random.Random, key: str) -> dict[str, bytes]:
        return {f: self._value(rng, key, f) for f in self.fields}

    def _one_value(self, rng: random.Random, key: str) -> dict[str, bytes]:
        field = self.fields[self.field_chooser.next_value(rng)]
        return {field: self._value(rng, key, field)}

    def _written(self, rng: random.Random, key: str) -> dict[str, bytes]:
        return self._all_values(rng, key) if self.props.writeallfields else self._one_value(rng, key)

    def intact(self, key: str, fields: tuple[str, ...] | None, record: Mapping[str, bytes]) -> bool:
        """dataintegrity's check of a read (CoreWorkload.verifyRow): every field asked for (all of
        them for None) is there and holds the value derived from key and field. Stricter than
        YCSB's, which checks only the fields that came back."""
        wanted = self.fields if fields is None else fields
        return set(record) == set(wanted) and all(
            value == deterministic_value(key, f, self.props.fieldlength) for f, value in record.items()
        )

    def _read_fields(self, rng: random.Random) -> tuple[str, ...] | None:
        return None if self.props.readallfields else (self.fields[self.field_chooser.next_value(rng)],)

    def next_load_insert(self, rng: random.Random) -> Operation:
        """doInsert: the next record of the load (keys insertstart, insertstart + 1, ...)."""
        keynum = self.load_keys.next_value()
        key = self.key_name(keynum)
        return Operation(INSERT, keynum, key, values=self._all_values(rng, key))

    def next_keynum(self, rng: random.Random) -> int:
        """A key of a record already acknowledged as inserted."""
        if isinstance(self.key_chooser, ExponentialGenerator):
            while True:
                keynum = self.inserted.last_value() - java_int(self.key_chooser.next_value(rng))
                if keynum >= 0:
                    return keynum
        while True:
            keynum = self.key_chooser.next_value(rng)
            if keynum <= self.inserted.last_value():
                return keynum

    def next_operation(self, rng: random.Random) -> Operation:
        """doTransaction: the next operation of the run. An INSERT's key must be acknowledged
        (acknowledge_insert) once it is done, failed or not, as YCSB does in a finally."""
        kind = self.operations.next_value(rng)
        if kind == INSERT:
            keynum, key = self._run_key(self.inserted.next_value())
            return Operation(INSERT, keynum, key, values=self._all_values(rng, key))
        keynum, key = self._run_key(self.next_keynum(rng))
        if kind == READ:
            return Operation(READ, keynum, key, fields=self._read_fields(rng))
        if kind == UPDATE:
            return Operation(UPDATE, keynum, key, values=self._written(rng, key))
        if kind == SCAN:
            length = self.scan_length.next_value(rng)
            return Operation(SCAN, keynum, key, fields=self._read_fields(rng), scan_length=length)
        fields = self._read_fields(rng)
        return Operation(READMODIFYWRITE, keynum, key, fields=fields, values=self._written(rng, key))

    def acknowledge_insert(self, op: Operation) -> None:
        self.inserted.acknowledge(op.keynum)
