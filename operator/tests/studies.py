"""The four studies' results as their texts print them (../shared/studies/*.txt): for every
figure and table that reports a measured result, where it is, the knobs it varied and held, and
the numbers it prints, quoted as printed. test_study_knobs.py holds every manifest of
crds/samples/papers/ to this table (spec and annotations), checks each quote against the text
where the text is on the machine, and that every result is either a manifest or says which CRD
feature it needs.

RUNS: one entry per BenchmarkRun (metadata.name), with
  file     its manifest, under crds/samples/papers/
  figure   the bench.tpcc.dev/figure annotation (the study's own numbering)
  printed  the bench.tpcc.dev/paper-result annotation (numbers exactly as printed, with where)
  quotes   passages of the text the knobs and numbers come from (matched with whitespace collapsed)
  knobs    spec paths (dot-separated) and the value the text states; a path whose value the text
           does not give is not here (the manifest's header says what was chosen)
INVENTORY: every result figure/table per study, the runs that express it, and what cannot be
expressed today with the CRD feature it needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PAPER = {
    "vldb2019": "Kamsky, VLDB 2019",
    "sharded": "Panpaliya, SJSU 2020",
    "voltdb": "Schumacher, SJSU 2022",
    "fdb-ycsb": "Bakken, NTNU 2019",
}
TEXT = {
    "vldb2019": "kamsky-vldb2019-mongodb-tpcc.txt",
    "sharded": "panpaliya-2020-sharded-mongodb-tpcc.txt",
    "voltdb": "schumacher-2022-voltdb-tpcc.txt",
    "fdb-ycsb": "bakken-2019-foundationdb-vs-mongodb-ycsb.txt",
}


@dataclass(frozen=True)
class Run:
    name: str
    study: str
    file: str
    figure: str
    printed: str
    quotes: tuple[str, ...]
    knobs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Item:
    """One result figure or table of a study: the runs expressing it, and what they cannot."""

    study: str
    figure: str
    where: str
    runs: tuple[str, ...] = ()
    missing: str = ""  # what of it today's CRD cannot express, and the feature it needs


def _res(cpu: str, memory: str) -> dict[str, str]:
    p = "database.deploy.values.resources."
    return {p + "requests.cpu": cpu, p + "limits.cpu": cpu, p + "requests.memory": memory, p + "limits.memory": memory}


RUNS: list[Run] = []


def _run(*args, **kwargs) -> None:
    RUNS.append(Run(*args, **kwargs))


# ---- Kamsky, VLDB 2019 -------------------------------------------------------------------------
# §4.7: "M60 Atlas replica set with writeConcern "majority" for durability along with readConcern
# "snapshot" for most transactions, and committed reads equivalent (readConcern "majority", causal
# consistency true) for STOCK LEVEL"; §4.5.3 the "denormalized" option (order lines in orders);
# §4.5.1 its PyTPCC retries a TransientTransactionError "in a loop", waiting 0.1 s times the retry's
# number (the wait is its MongoDB driver's code, not the text's: retryWait pytpcc).
V = "vldb2019"
DURABLE = {
    "database.type": "mongodb",
    "database.deploy.replicas": 3,
    "workload.driverOptions.schema": "denormalized",
    "workload.driverOptions.write_concern": "majority",
    "workload.driverOptions.read_concern": "snapshot",
    "workload.driverOptions.stock_level_in_transaction": "false",
    "workload.driverOptions.causal": "true",
    "workload.retryWait": "pytpcc",
}
M50 = {**_res("8", "30Gi"), "cost.pricePerHour": 1.66}
M60 = {**_res("16", "60Gi"), "cost.pricePerHour": 3.29}
M80 = {**_res("32", "120Gi"), "cost.pricePerHour": 6.13}
Q_DURABLE = (
    'We report overall performance for M60 Atlas replica set with `writeConcern "majority"`',
    "we deployed a three node replica set in MongoDB Atlas",
    "M60 and M50 replica sets (60GB RAM 16 vCPUs and 30GBs RAM 8 vCPUs respectively)",
    "M60 60GBs 16 $3.29/hour",
    "we continue to retry in a loop on any such error",
)
_A1_M60 = (
    "100 wh: 4 5336, 8 9445, 16 14951, 32 22802, 48 28304, 64 31549, 96 34385; "
    "300 wh: 4 4988, 8 8546, 16 13391, 32 19797, 48 24570, 64 26585, 96 26666; "
    "500 wh: 4 4724, 8 7989, 16 11966, 32 16947, 48 19491, 64 21709, 96 22668; "
    "1000 wh: 4 4112, 8 6826, 16 10146, 32 13806, 48 15535, 64 16024, 96 16406"
)


def _a1_rows(instance: str, warehouses: int, pairs: str) -> tuple[str, ...]:
    """App. A.1 rows ("M60 100 4 5336 ...") of 'threads tpmC, threads tpmC' pairs."""
    return tuple(f"{instance} {warehouses} {p.strip()}" for p in pairs.split(","))


Q_A1_M60 = tuple(
    q for part in _A1_M60.split("; ") for q in _a1_rows("M60", int(part.split(" wh: ")[0]), part.split(" wh: ")[1])
)
_run(
    "mongodb-replicaset",
    V,
    "vldb2019/mongodb-replicaset.yaml",
    "App. A.1: best result, M60, 100 warehouses, 96 threads (durable settings, §4.7)",
    "34385 tpmC, 1285.54 ops/sec (App. A.1, row M60 100 96; App. A.2: batch and findAndModify true)",
    Q_DURABLE + ("M60 100 96 34385 1285.54", "true true 96 34385 1285.54"),
    {
        **DURABLE,
        **M60,
        "workload.warehouses": 100,
        "workload.clients": 96,
        "workload.driverOptions.batch_writes": "true",
        "workload.driverOptions.find_and_modify": "true",
    },
)
_run(
    "vldb2019-fig1",
    V,
    "vldb2019/fig1-threads-by-warehouses.yaml",
    "Fig. 1 / App. A.1: tpmC by threads on M60 per warehouse count, readPreference primary and nearest",
    "App. A.1, M60, threads tpmC: "
    + _A1_M60
    + '; primary vs nearest: "the difference is observed to be minimal" (§4.7)',
    Q_DURABLE + Q_A1_M60 + ('one with `readPreference "primary"` the other with `readPreference "nearest"`',),
    {
        **DURABLE,
        **M60,
        "sweep.warehouses": [100, 300, 500, 1000],
        "sweep.clients": [4, 8, 16, 32, 48, 64, 96],
        "sweep.matrix": [{"field": "workload.driverOptions.read_preference", "values": ["primary", "nearest"]}],
    },
)
_run(
    "vldb2019-fig2",
    V,
    "vldb2019/fig2-normalized-vs-denormalized.yaml",
    "Fig. 2: normalized vs denormalized schema (M60)",
    "no value printed (chart only); §4.5.3: the denormalized schema was smaller and embedding order lines "
    '"provided one of significant performance improvements"',
    Q_DURABLE + ("figure 2 compares performance using normalized vs denormalized schema",),
    {
        **{k: v for k, v in DURABLE.items() if k != "workload.driverOptions.schema"},
        **M60,
        "sweep.matrix": [{"field": "workload.driverOptions.schema", "values": ["normalized", "denormalized"]}],
    },
)
_run(
    "vldb2019-app-a2",
    V,
    "vldb2019/app-a2-batch-and-findandmodify.yaml",
    "App. A.2 / Fig. 3: batch writes and findAndModify on vs off, M60, 100 warehouses",
    "App. A.2, Batch findAndModify Threads tpmC: true true 64 31549; true true 96 34385; "
    "false false 64 26959; false false 96 30427",
    Q_DURABLE
    + (
        "true true 96 34385 1285.54",
        "false false 64 26959 1001.93",
        "false false 96 30427 1137.12",
        "true true 64 31549 1172.32",
    ),
    {
        **DURABLE,
        **M60,
        "workload.warehouses": 100,
        "sweep.clients": [64, 96],
        "sweep.matrix": [
            {"field": "workload.driverOptions.batch_writes", "values": ["true", "false"]},
            {
                "field": "workload.driverOptions.find_and_modify",
                "values": ["true", "false"],
                "pairedWith": "workload.driverOptions.batch_writes",
            },
        ],
    },
)
_A1_M50 = "10 11104, 20 16260, 30 19520, 40 21260, 50 23027, 60 24448, 64 25630"
_A1_M60_100 = _A1_M60.split("; ")[0].split(" wh: ")[1]
_A1_M80 = "64 46449, 84 50924, 94 52329"


def _matrix_res(cpus: list[str], memories: list[str]) -> list[dict]:
    """An instance type as four paired sweep.matrix axes: the cpu limit, and with it value for
    value the memory limit, the cpu request and the memory request."""
    p = "database.deploy.values.resources."
    first = {"field": p + "limits.cpu", "values": cpus}
    return [
        first,
        {"field": p + "limits.memory", "values": memories, "pairedWith": first["field"]},
        {"field": p + "requests.cpu", "values": cpus, "pairedWith": first["field"]},
        {"field": p + "requests.memory", "values": memories, "pairedWith": first["field"]},
    ]


_run(
    "vldb2019-fig4",
    V,
    "vldb2019/fig4-instance-types.yaml",
    "Fig. 4 / App. A.1: throughput by instance type (M50, M60, M80), 100 warehouses",
    f"App. A.1, 100 warehouses, threads tpmC: M50: {_A1_M50}; M60: {_A1_M60_100}; M80: {_A1_M80}; "
    "App. C: M50 $1.66/hour, M60 $3.29/hour, M80 $6.13/hour",
    Q_DURABLE
    + _a1_rows("M50", 100, _A1_M50)
    + _a1_rows("M60", 100, _A1_M60_100)
    + (
        "M80 100 64 46449 1733.35",
        "M80 100 84 50924 1892.72",
        "M80 100 94 52329 1945.06",
        "M50 30GBs 8 $1.66/hour",
        "M60 60GBs 16 $3.29/hour",
        "M80 120GBs 32 $6.13/hour",
        "120 GB RAM and 750 GB storage with 32 vCPUs",
        "three different instance types in Atlas: M50, M60 and M80",
    ),
    {
        **DURABLE,
        "workload.warehouses": 100,
        # every thread count A.1 prints for M50, M60 (100 warehouses) or M80, in order
        "sweep.clients": sorted(
            {int(p.split()[0]) for rows in (_A1_M50, _A1_M60_100, _A1_M80) for p in rows.split(", ")}
        ),
        # App. C's price of each type, with it
        "sweep.matrix": _matrix_res(["8", "16", "32"], ["30Gi", "60Gi", "120Gi"])
        + [
            {
                "field": "cost.pricePerHour",
                "values": ["1.66", "3.29", "6.13"],
                "pairedWith": "database.deploy.values.resources.limits.cpu",
            }
        ],
    },
)
_run(
    "vldb2019-app-d",
    V,
    "vldb2019/app-d-sample-run.yaml",
    "App. D: sample complete run output (M60 not stated; 100 warehouses, 96 threads, 300 s)",
    '"tpmc" : 29324.695419676675, "total" : 327852, "aborts" : 1480, NEW_ORDER "total" : 146626, '
    'SERVER "COMMIT" : 314583, "ABORT" : 26726 (App. D)',
    (
        '"tpmc" : 29324.695419676675',
        '"total" : 327852',
        '"aborts" : 1480',
        '"total" : 146626',
        '"COMMIT" : 314583',
        '"ABORT" : 26726',
        '"read_preference" : "nearest"',
        '"read_concern" : "majority"',
        '"batch_writes" : false',
        '"find_and_modify" : false',
        '"retry_writes" : false',
        '"threads" : 96',
        '"duration" : 300',
        '"warehouses" : 100',
        '"denorm" : true',
        '"causal" : true',
    ),
    {
        "database.type": "mongodb",
        "database.deploy.replicas": 3,
        "workload.warehouses": 100,
        "workload.clients": 96,
        "workload.durationSeconds": 300,
        "workload.driverOptions.schema": "denormalized",
        "workload.driverOptions.batch_writes": "false",
        "workload.driverOptions.find_and_modify": "false",
        "workload.driverOptions.write_concern": "majority",
        "workload.driverOptions.read_concern": "majority",
        "workload.driverOptions.read_preference": "nearest",
        "workload.driverOptions.causal": "true",
        "workload.driverOptions.retry_writes": "false",
    },
)

# ---- Panpaliya, SJSU 2020 ----------------------------------------------------------------------
# §7.1 an Atlas M40 cluster (16GB RAM, 80GB storage, 4 vCPU); §7.2 1, 3, 6 and 9 shards, 100
# warehouses, 10 minutes, clients raised until throughput saturated; Table 4 (its pytpcc):
# denormalize false is the referenced schema, the default. No shard key is stated.
S = "sharded"
M40 = {
    "database.type": "mongodb",
    "database.deploy.values.topology": "sharded",
    **_res("4", "16Gi"),
    "workload.durationSeconds": 600,
}
Q_M40 = (
    "MongoDB atlas M40 cluster as a server. M40 cluster tier comes with a server setup consisting of 16GB RAM, 80GB "
    "of storage, and 4 vCPU",
)
Q_FIG8 = Q_M40 + (
    "We performed this experiment on systems with 1, 3, 6, and 9 shards",
    "each cluster was populated with 100 warehouses data",
    "the benchmark was executed for 10 minutes by increasing the number of concurrent clients until throughput "
    "saturated",
    "orange line (read_concern = local, w:1) and gray line (read_concern = snapshot, w:1)",
    "yellow-line (read_concern = local, w: majority) and the blue line(read_concern = snapshot, w: majority)",
)
_run(
    "sharded-fig8",
    S,
    "sharded/fig8-consistency-by-shards.yaml",
    "Fig. 8 (§7.2): throughput saturation point by shards (1, 3, 6, 9), read_concern local and snapshot, w:1 and "
    "w: majority",
    "no value printed (chart only); §7.2: read concern matters little at w:1, much at w: majority; "
    '"An increase in the write concern value increased systems throughput"',
    Q_FIG8,
    {
        **M40,
        "workload.warehouses": 100,
        "sweep.saturation.minGainPercent": 3,
        "sweep.matrix": [
            {"field": "database.deploy.values.sharded.shards", "values": ["1", "3", "6", "9"]},
            {"field": "workload.driverOptions.read_concern", "values": ["local", "snapshot"]},
            {"field": "workload.driverOptions.write_concern", "values": ["1", "majority"]},
        ],
    },
)
Q_FIG9 = Q_M40 + (
    "We performed this experiment in an M40 sharded cluster with 3 shards and populated the database with 100 "
    "warehouses in both referenced and embedded schema design",
    "embedded schema improved throughput by approximately 12% as compared to the referenced schema",
    "The throughput of the system saturated at 350 concurrent clients",
)
_run(
    "sharded-fig9",
    S,
    "sharded/fig9-schema.yaml",
    "Fig. 9 (§7.3): referenced vs embedded schema, 3 shards, 100 warehouses",
    "embedded schema improved throughput by approximately 12% as compared to the referenced schema; "
    "saturated at 350 concurrent clients (§7.3)",
    Q_FIG9,
    {
        **M40,
        "database.deploy.values.sharded.shards": 3,
        "workload.warehouses": 100,
        "sweep.saturation.minGainPercent": 3,
        # the study's referenced schema is normalized here, its embedded schema embedded
        "sweep.matrix": [{"field": "workload.driverOptions.schema", "values": ["normalized", "embedded"]}],
    },
)
Q_FIG10 = Q_M40 + (
    "We varied the data size of the system in a 3 shard M40 cluster by changing the number of warehouses",
    "We start with a system having 1 warehouse and increase the number of warehouses till 500",
    "the throughput measured from an unsharded and sharded replica set while varying data size",
    "sharded replica set scaled throughput to 250 warehouses with 370 clients as compared to 100 warehouses of an "
    "unsharded replica set with 300 clients",
    "For a small data size (warehouse < 5), a sharded replica set exhibits less throughput",
)
_FIG10 = (
    "sharded replica set scaled throughput to 250 warehouses with 370 clients as compared to 100 warehouses of "
    "an unsharded replica set with 300 clients; warehouse < 5: sharded below unsharded (§7.4)"
)
_run(
    "sharded-fig10-sharded",
    S,
    "sharded/fig10-fig11-warehouses.yaml",
    "Figs 10 and 11 (§7.4): throughput and threads at saturation by warehouses, sharded (3 shards)",
    _FIG10,
    Q_FIG10,
    {**M40, "database.deploy.values.sharded.shards": 3},
)
_run(
    "sharded-fig10-unsharded",
    S,
    "sharded/fig10-fig11-warehouses.yaml",
    "Figs 10 and 11 (§7.4): throughput and threads at saturation by warehouses, unsharded replica set",
    _FIG10,
    Q_FIG10,
    {
        **{k: v for k, v in M40.items() if k != "database.deploy.values.topology"},
        "database.deploy.values.topology": "replicaset",
    },
)
Q_FIG12 = Q_M40 + (
    "We used this configuration option for the referenced schema in an M40 cluster with 100 warehouses",
    "FindAndModify option increases throughput for a sharded cluster saturating with 350 clients",
)
_run(
    "sharded-fig12",
    S,
    "sharded/fig12-findandmodify.yaml",
    "Fig. 12 (§7.5): findAndModify on vs off (find+update), referenced schema, 100 warehouses",
    "no value printed (chart only); §7.5: FindAndModify option increases throughput for a sharded cluster "
    "saturating with 350 clients",
    Q_FIG12,
    {
        **M40,
        "workload.warehouses": 100,
        "workload.driverOptions.schema": "normalized",
        "sweep.saturation.minGainPercent": 3,
        "sweep.matrix": [{"field": "workload.driverOptions.find_and_modify", "values": ["true", "false"]}],
    },
)
_run(
    "sharded-app-c",
    S,
    "sharded/app-c-sample-run.yaml",
    "App. C: sample benchmark output (200 client processes, read concern local, write concern majority)",
    "tpmc : 142 62.36 258 98995 34; total : 31 3106; NEW_ORDER : 1 42620; aborts : 543 (App. C, as extracted: "
    "the PDF's digits split by spaces)",
    (
        "--duration 300 --warehouses 100 --clientprocs 200",
        "tpmc : 142 62.36 258 98995 34",
        "total : 31 3106",
        "NEW_ORDER : 1 42620",
        "aborts : 543",
        "write_concern : majority",
        "read_concern : local",
        "batch_writes : True",
        "find_and_modify : False",
        "causal : False",
        "retry_writes : False",
        "read_preference : primary",
        "denorm : False",
        "threads : 2 00",
        "duration : 600. 016 62611 961 365",
    ),
    {
        **M40,
        "workload.warehouses": 100,
        "workload.clients": 200,
        "workload.driverOptions.schema": "normalized",
        "workload.driverOptions.read_concern": "local",
        "workload.driverOptions.write_concern": "majority",
        "workload.driverOptions.batch_writes": "true",
        "workload.driverOptions.find_and_modify": "false",
        "workload.driverOptions.causal": "false",
        "workload.driverOptions.retry_writes": "false",
        "workload.driverOptions.read_preference": "primary",
    },
)

# ---- Schumacher, SJSU 2022 ---------------------------------------------------------------------
# §4: c4.xlarge hosts (4 vCPUs, 7.5 GiB), "Unless explicitly stated otherwise the k factor is equal
# to one and the number of sites per host is equal to the number of virtual CPUs", 300 clients, the
# New Order generator's warehouses always equal (no remote lines). §5.1: with the Warehouse ID
# strategy "None of the transactions use multiple Warehouse IDs" (so no remote Payments either).
T = "voltdb"
C4X = {**_res("4", "7680Mi"), "database.deploy.values.sitesPerHost": 4}
VOLT = {
    "database.type": "voltdb",
    "database.deploy.kSafety": 1,
    "workload.remotePercent.newOrderLines": 0,
    "workload.remotePercent.payments": 0,
    "workload.driverOptions.partitioning": "warehouse",
}
Q_VOLT = (
    "Unless explicitly stated otherwise the k factor is equal to one and the number of sites per host is equal to "
    "the number of virtual CPUs",
    "four virtual CPUs, and 7.5 GiB of memory",
    "the customer's warehouse and the ordering warehouse are always equal",
    "Unless stated otherwise, 300 clients were simulated for all experiments",
    "None of the transactions use multiple Warehouse IDs",
)
_run(
    "voltdb-fig4",
    T,
    "voltdb/fig4-partitioning.yaml",
    "Fig. 4 (§5.1): partitioning on Warehouse ID and on District ID, 9 hosts, 5 warehouses, 300 clients",
    "Warehouse ID had 3.5 times greater throughput than the partition strategy where the tables were "
    "partitioned on the District ID (§5.1)",
    Q_VOLT
    + (
        "9 Hosts 5 Warehouses 300 Clients",
        "had 3.5 times greater throughput than the partition strategy",
        "the Warehouse table and the District table are replicated across all partitions",
    ),
    {
        **VOLT,
        **C4X,
        "database.deploy.replicas": 9,
        "workload.warehouses": 5,
        "workload.clients": 300,
        "sweep.clients": [300],
        "sweep.matrix": [{"field": "workload.driverOptions.partitioning", "values": ["warehouse", "d_id"]}],
    },
)
_run(
    "voltdb-fig5",
    T,
    "voltdb/fig5-delivery.yaml",
    "Fig. 5 (§5.2): original, modified and no Delivery, Warehouse ID and District ID partitioning, 9 hosts, "
    "5 warehouses, 300 clients",
    "Warehouse ID: modified Delivery no statistically significant change; no Delivery: throughput increased, "
    "compared to original Delivery, by 3.5 times. District ID: modified +21.93%, no Delivery +56.80% (§5.2)",
    Q_VOLT
    + (
        "9 Hosts 5 Warehouses 300 Clients",
        "the Order Status transaction is done 8% of the time instead of 4% of the time",
        "breaks the transaction up into ten separate transactions",
        "throughput increased, compared to original Delivery, by 3.5 times",
        "increased throughput of 21.93%",
        "by 56.80%",
    ),
    {
        **VOLT,
        **C4X,
        "database.deploy.replicas": 9,
        "workload.warehouses": 5,
        "workload.clients": 300,
        "sweep.clients": [300],
        # each strategy: the original Delivery (per-warehouse), the modified (per-district), no
        # Delivery (Order Status 8 %)
        "sweep.matrix": [
            {"field": "workload.driverOptions.partitioning", "values": ["warehouse", "d_id"]},
            {"field": "workload.mix", "values": ["45/43/4/4/4", "45/43/8/0/4"]},
            {"field": "workload.driverOptions.delivery", "values": ["per-warehouse", "per-district"]},
        ],
    },
)


def _paired(first: str, values: dict[str, list[str]]) -> list[dict]:
    """sweep.matrix axes: the first field's values, each other field's paired with it, value for value."""
    return [
        {"field": field, "values": v, **({"pairedWith": first} if field != first else {})}
        for field, v in values.items()
    ]


_LIMIT_CPU = "database.deploy.values.resources.limits.cpu"
_run(
    "voltdb-fig6",
    T,
    "voltdb/fig6-vertical-scaling.yaml",
    "Fig. 6 (§5.3): vertical scaling, c4.large, c4.xlarge, c4.2xlarge (2, 4, 8 vCPUs, sites per host = vCPUs), "
    "9 hosts, 27 warehouses, 300 clients",
    "From 2 virtual CPUs to 4 virtual CPUs throughput increased by around 145%. From 4 virtual CPUs to 8 "
    "virtual CPUs throughput increased by around 84% (§5.3)",
    Q_VOLT
    + (
        "9 Hosts 27 Warehouses 300 Clients",
        "The c4.large instance has two virtual CPUs and 3.75 GiB of memory",
        "the c4.2xlarge instance has eight virtual CPUs and 15 GiB of memory",
        "increased by around 145%",
        "increased by around 84%",
    ),
    {
        **VOLT,
        "database.deploy.replicas": 9,
        "workload.warehouses": 27,
        "workload.clients": 300,
        "sweep.clients": [300],
        # c4.large, c4.xlarge, c4.2xlarge: cpu, memory and sites per host = vCPUs, value for value
        "sweep.matrix": _paired(
            _LIMIT_CPU,
            {
                _LIMIT_CPU: ["2", "4", "8"],
                "database.deploy.values.resources.requests.cpu": ["2", "4", "8"],
                "database.deploy.values.resources.limits.memory": ["3840Mi", "7680Mi", "15Gi"],
                "database.deploy.values.resources.requests.memory": ["3840Mi", "7680Mi", "15Gi"],
                "database.deploy.values.sitesPerHost": ["2", "4", "8"],
            },
        ),
    },
)
_run(
    "voltdb-fig7",
    T,
    "voltdb/fig7-sample-run.yaml",
    "Fig. 7 (§5.4): a PyTPCC run that passed its consistency tests: 30 warehouses, 300 threads, 4 partitions, 600 s",
    "17226 tpmc, 172361 total NEW ORDER transactions, 600 duration(seconds), 384568 total number of "
    "transactions, 1738 total aborts ('tpmc': 17226.21565209026; Fig. 7)",
    Q_VOLT
    + (
        "TpmC for normalized, 300 threads, 4 partitions, and 30 Warehouses: 17226 tpmc, 172361 total NEW ORDER "
        "transactions, 600 duration(seconds)",
        "384568 total number of transactions, 1738 total aborts",
        "'tpmc': 17226.21565209026",
        "'partitions': 4",
        "There were never any failures of the consistency tests",
    ),
    {
        **VOLT,
        "database.deploy.values.sitesPerHost": 4,
        "workload.warehouses": 30,
        "workload.clients": 300,
        "workload.durationSeconds": 600,
    },
)
_run(
    "voltdb-fig8",
    T,
    "voltdb/fig8-horizontal-scaling.yaml",
    "Fig. 8 (§5.5): horizontal scaling, hosts added one at a time, 30 warehouses, 300 clients",
    "no value printed (chart only); §5.5: throughput went up with the number of hosts, each host adding two "
    "unique partitions",
    Q_VOLT
    + (
        "a single host was added to the database server one at a time",
        "30 Warehouses 300 Clients",
        "with each host added two unique partitions were created",
    ),
    {**VOLT, **C4X, "workload.warehouses": 30, "workload.clients": 300},
)
_LIMIT_MEMORY = "database.deploy.values.resources.limits.memory"
_FIG9_MEMORY = ["7680Mi", "15Gi", "31232Mi", "32Gi"]  # c4.xlarge, c4.2xlarge, d2.xlarge, r5a.xlarge
_FIG9_CPU = ["4", "8", "4", "4"]
_run(
    "voltdb-fig9",
    T,
    "voltdb/fig9-memory-scaling.yaml",
    "Fig. 9 (§5.6): memory scaling, c4.xlarge, c4.2xlarge, d2.xlarge, r5a.xlarge, 5 hosts, 300 clients, "
    "warehouses varied",
    "After 60 warehouses the c4.xlarge instance type is unable to store any more data and freezes all write "
    "operations to preserve the data within it. Once the amount of data exceeds 30 warehouses the instances with a "
    "larger amount of memory have a greater throughput (§5.6)",
    Q_VOLT
    + (
        "5 Hosts 300 Clients",
        "each instance type has respectively 7.5 GiB, 15 GiB, 30.5 GiB, and 32 GiB of memory",
        "the number of sites per host was set to 4",
        "After 60 warehouses the c4.xlarge instance type is unable to store any more data",
    ),
    {
        **VOLT,
        **_res("4", "7680Mi"),
        "database.deploy.values.sitesPerHost": 4,
        "database.deploy.replicas": 5,
        "workload.clients": 300,
        "sweep.warehouses": [10, 20, 30, 40, 50, 60, 70, 80],
        "sweep.oversizedLoads": "LeaveOut",
        # the four instance types: memory and cpu, limit and request, value for value
        "sweep.matrix": _paired(
            _LIMIT_MEMORY,
            {
                _LIMIT_MEMORY: _FIG9_MEMORY,
                "database.deploy.values.resources.requests.memory": _FIG9_MEMORY,
                _LIMIT_CPU: _FIG9_CPU,
                "database.deploy.values.resources.requests.cpu": _FIG9_CPU,
            },
        ),
    },
)
_run(
    "voltdb-fig10",
    T,
    "voltdb/fig10-k-factor.yaml",
    "Fig. 10 (§5.7): k factor 0, 1, 2 at 12 unique partitions (3, 6, 9 hosts x 4 sites / (1 + k)), 27 warehouses, "
    "300 clients",
    "k factor 0 has a 4% greater throughput; k factor 1 vs 2 not statistically significant (§5.7)",
    Q_VOLT
    + (
        "27 Warehouses 12 Unique partitions 300 Clients",
        "To hold the number of unique partitions steady the number of hosts within the database cluster is "
        "changed when the k factor is changed",
        "The number of sites per host was not changed",
        "k factor 0 has a 4% greater throughput",
    ),
    {
        **{k: v for k, v in VOLT.items() if k != "database.deploy.kSafety"},
        **C4X,
        "workload.warehouses": 27,
        "workload.clients": 300,
        "sweep.clients": [300],
        # (hosts x 4 sites) / (1 + k) = 12 unique partitions: 3 hosts k 0, 6 hosts k 1, 9 hosts k 2
        "sweep.matrix": _paired(
            "database.deploy.replicas",
            {"database.deploy.replicas": ["3", "6", "9"], "database.deploy.kSafety": ["0", "1", "2"]},
        ),
    },
)
_run(
    "voltdb-fig11",
    T,
    "voltdb/fig11-clients.yaml",
    "Fig. 11 (§5.8): tpmC vs clients, 9 hosts, 20 warehouses",
    "From 20 to 300 clients, throughput grew by around 47.87% with most of the growth coming from 20 to 140 "
    "clients. From 300 clients to 1000 clients, the throughput only grew by around 5.07% (§5.8)",
    Q_VOLT
    + (
        "9 Hosts 20 Warehouses",
        "From 20 to 300 clients, throughput grew by around 47.87% with most of the growth coming from 20 to 140 "
        "clients",
        "From 300 clients to 1000 clients, the throughput only grew by around 5.07%",
    ),
    {**VOLT, **C4X, "database.deploy.replicas": 9, "workload.warehouses": 20},
)
_run(
    "voltdb-tpmc-by-hosts",
    T,
    "voltdb/voltdb-tpmc-by-hosts.yaml",
    "not a figure of the study: Fig. 8's hosts crossed with Fig. 10's k factors (a variant)",
    "none: the study ran hosts at k=1 (Fig. 8) and k at 12 unique partitions (Fig. 10), not this cross",
    ("a single host was added to the database server one at a time", "27 Warehouses 12 Unique partitions"),
    {"database.type": "voltdb"},
)

# ---- Bakken, NTNU 2019 -------------------------------------------------------------------------
# §5.2.2: YCSB 0.15.0, FoundationDB 5.2.0, MongoDB 3.6.2 (Homebrew, `mongod`), Document Layer 1.6.3;
# "all 7 default workloads are performed in order, with the corresponding loading workload
# preceding each"; batchsize 100. App. B: one table per load and per run (B.1-B.56, 14 per
# configuration), 1000 records loaded (1474560 for TimeSeries A). No thread count is given (YCSB's
# default: one). The run tables of workload A repeat workload B's in every configuration (same
# throughput, 95 % reads): quoted as printed, with that said.
B = "fdb-ycsb"
YCSB_1000 = {
    "workload.kind": "ycsb",
    "workload.clients": 1,
    "workload.ycsb.recordCount": 1000,
    "workload.ycsb.batchSize": 100,
    "workload.ycsb.properties.operationcount": "1000",
}
Q_B = (
    "Version 0.15.0 of YCSB was used for all benchmarks",
    "all benchmarks were completed with the batchsize-parameter set to 100",
    "the other predefined workloads typically have 1000 operations",
)
# App. B throughputs as printed: config -> workload -> (load table, load ops/sec, run table, run ops/sec)
APP_B = {
    "b1": {
        "a": ("B.1", "1221.001221001221", "B.2", "687.757909215956"),
        "b": ("B.3", "1295.3367875647668", "B.4", "687.757909215956"),
        "c": ("B.5", "2105.2631578947367", "B.6", "108.23682216690118"),
        "d": ("B.7", "440.33465433729634", "B.8", "652.7415143603133"),
        "e": ("B.9", "2873.5632183908046", "B.10", "374.3916136278547"),
        "f": ("B.11", "2590.6735751295337", "B.12", "194.74196689386562"),
        "tsa": ("B.13", "12653.800276321323", "B.14", "8840.47327132164"),
    },
    "b2": {
        "a": ("B.15", "401.60642570281124", "B.16", "590.6674542232723"),
        "b": ("B.17", "406.00893219650834", "B.18", "590.6674542232723"),
        "c": ("B.19", "729.3946024799417", "B.20", "761.6146230007616"),
        "d": ("B.21", "733.6757153338225", "B.22", "770.4160246533128"),
        "e": ("B.23", "766.2835249042146", "B.24", "449.23629829290206"),
        "f": ("B.25", "651.8904823989569", "B.26", "587.5440658049354"),
        "tsa": ("B.27", "6187.674670381778", "B.28", "6428.935791736243"),
    },
    "b3": {
        "a": ("B.29", "175.65431231336729", "B.30", "480.07681228996637"),
        "b": ("B.31", "153.30369461904033", "B.32", "480.07681228996637"),
        "c": ("B.33", "159.4896331738437", "B.34", "800.0"),
        "d": ("B.35", "173.19016279875302", "B.36", "766.8711656441718"),
        "e": ("B.37", "182.2821728034998", "B.38", "564.9717514124294"),
        "f": ("B.39", "166.44474034620507", "B.40", "291.5451895043732"),
        "tsa": ("B.41", "208.9941645590934", "B.42", "241.69033753317063"),
    },
    "b4": {
        "a": ("B.43", "75.08071176514753", "B.44", "400.64102564102564"),
        "b": ("B.45", "110.60723371308484", "B.46", "400.64102564102564"),
        "c": ("B.47", "112.00716845878136", "B.48", "458.9261128958238"),
        "d": ("B.49", "111.07408641563923", "B.50", "379.9392097264438"),
        "e": ("B.51", "110.37527593818984", "B.52", "11.108395725489325"),
        "f": ("B.53", "112.00716845878136", "B.54", "144.52955629426216"),
        "tsa": ("B.55", "112.76842208867987", "B.56", "108.23056466054366"),
    },
}
_B_FIGS = {
    "a": "Figs 6.1-6.3",
    "b": "Figs 6.4-6.5",
    "c": "",
    "d": "",
    "e": "Fig. 6.6",
    "f": "",
    "tsa": "Fig. 6.7",
}
_B_CONF = {
    "b1": ("App. B.1", "FoundationDB 5.2.0 (YCSB's foundationdb binding)", "app-b1-foundationdb-ycsb.yaml", "fdb-b1"),
    "b2": ("App. B.2", "MongoDB 3.6.2 default", "app-b2-mongodb-ycsb.yaml", "fdb-b2-mongodb"),
    "b3": (
        "App. B.3",
        "MongoDB 3.6.2 w=majority&journal=true",
        "ycsb-mongodb-study.yaml",
        "fdb-b3-majority-journal",
    ),
    "b4": (
        "App. B.4",
        "FoundationDB Document Layer 1.6.3 (YCSB's mongodb binding)",
        "app-b4-document-layer-ycsb.yaml",
        "fdb-b4-document-layer",
    ),
}
_B_KNOBS = {
    "b1": {"database.type": "foundationdb"},
    "b2": {"database.type": "mongodb", "workload.driverOptions.upsert": "true"},
    "b3": {
        "database.type": "mongodb",
        "workload.driverOptions.upsert": "true",
        "workload.driverOptions.write_concern": "majority",
        "workload.driverOptions.journal": "true",
    },
    "b4": {"database.type": "mongodb", "workload.driverOptions.upsert": "true"},
}
_B_QUOTES = {
    "b1": ("Version 5.2.0 of FoundationDB was used for all benchmarks", "foundationdb.batchsize=100"),
    "b2": ("Version 3.6.2 of MongoDB was used for all benchmarks", "-p mongodb.upsert=true -p mongodb.batchsize=100"),
    "b3": (
        "Version 3.6.2 of MongoDB was used for all benchmarks",
        "mongodb.url='mongodb://localhost:27017/ycsb?w=w&journal=j'",
        "They should be replaced with majority and true, respectively",
    ),
    "b4": (
        "Version 1.6.3 of the FoundationDB Document Layer was used for all benchmarks",
        "It was configured to run on port 27017 when active",
    ),
}
_WORKLOAD_NAME = {"tsa": "TimeSeries workload A"}
for conf, tables in APP_B.items():
    section, what, file, prefix = _B_CONF[conf]
    for w, (lt, lv, rt, rv) in tables.items():
        figs = _B_FIGS[w]
        wname = _WORKLOAD_NAME.get(w, f"workload {w.upper()}")
        file_here = "ycsb-timeseries.yaml" if (conf, w) == ("b2", "tsa") else file
        repeat = ""
        if w == "a":
            repeat = f" (as printed: Table {rt} repeats workload B's run table, Table {tables['b'][2]})"
        knobs = {
            **YCSB_1000,
            **_B_KNOBS[conf],
            "workload.ycsb.workload": w,
        }
        if w == "tsa":
            knobs = {
                **{k: v for k, v in knobs.items() if k != "workload.ycsb.properties.operationcount"},
                "workload.ycsb.recordCount": 1474560,
            }
        _run(
            f"{prefix}-{w}",
            B,
            f"fdb-ycsb/{file_here}",
            f"{section}, Tables {lt}/{rt}{' (' + figs + ')' if figs else ''}: YCSB {wname}, {what}",
            f"load {lv} ops/sec (Table {lt}); run {rv} ops/sec (Table {rt}){repeat}",
            Q_B + _B_QUOTES[conf] + (f"[OVERALL] Throughput(ops/sec) {lv}", f"[OVERALL] Throughput(ops/sec) {rv}"),
            knobs,
        )
# App. D / ch. 9: the study's own tool, `python test.py -runners mongo3 mongo4 fdbdl -workloads a b c
# d e f -num_runs 100`; 1000 records, 10000 operations a run, transactions of 1000 operations for
# mongo4 and fdbdl; mongo4 with read and write concern "majority"; MongoDB 4.0.6, FoundationDB
# 6.0.15, Document Layer 1.6.3; "A single client communicating with a single server" (§10.3.1).
APP_D = {
    "d1": {
        "a": ("D.1", "1252.6299073170808"),
        "b": ("D.2", "1412.8697966400027"),
        "c": ("D.3", "1639.1385542137764"),
        "d": ("D.4", "1529.5349312440717"),
        "e": ("D.5", "427.68305420069817"),
        "f": ("D.6", "958.216859034014"),
    },
    "d2": {
        "a": ("D.7", "1878.4062323341034"),
        "b": ("D.8", "1965.0704536516198"),
        "c": ("D.9", "2382.916461794403"),
        "d": ("D.10", "2233.4299596830256"),
        "e": ("D.11", "1866.4601173433184"),
        "f": ("D.12", "1998.2113759907427"),
    },
    "d3": {
        "a": ("D.13", "1812.3950278193038"),
        "b": ("D.14", "1909.4877796973199"),
        "c": ("D.15", "1980.1329568761882"),
        "d": ("D.16", "1438.169203866449"),
        "e": ("D.17", "1522.7668499221984"),
        "f": ("D.18", "2197.176438141233"),
    },
}
_D_CONF = {
    "d1": (
        "App. D.1 / Fig. 9.8",
        "runner fdbdl (Document Layer 1.6.3 on FoundationDB 6.0.15, transactions of 1000 operations)",
        "app-d1-fig9-8-document-layer.yaml",
        "fdb-d1-fdbdl",
    ),
    "d2": (
        "App. D.2 / Fig. 9.9",
        "runner mongo3 (standard MongoDB 4.0.6)",
        "app-d2-fig9-9-mongodb-standard.yaml",
        "fdb-d2-mongo3",
    ),
    "d3": (
        "App. D.3 / Fig. 9.10",
        "runner mongo4 (MongoDB 4.0.6, transactions of 1000 operations, majority read and write concern)",
        "app-d3-fig9-10-mongodb-transactions.yaml",
        "fdb-d3-mongo4",
    ),
}
_D_FIG = {"a": "9.2", "b": "9.3", "c": "9.4", "d": "9.5", "e": "9.6", "f": "9.7"}
_D_KNOBS = {
    "d1": {"database.type": "mongodb", "workload.ycsb.operationsPerTransaction": 1000},
    "d2": {"database.type": "mongodb"},
    "d3": {
        "database.type": "mongodb",
        "workload.ycsb.operationsPerTransaction": 1000,
        "workload.driverOptions.read_concern": "majority",
        "workload.driverOptions.write_concern": "majority",
    },
}
Q_D = (
    "all workloads load 1000 records into the database on setup, and all workloads consist of 10000 operations",
    "all workloads use a batch size of 1000 operations for the transactional MongoDB configuration, and for "
    "FoundationDB Document Layer",
    "python test.py -runners mongo3 mongo4 fdbdl -workloads a b c d e f -num_runs 100",
    "A single client communicating with a single server",
    "Version 4.0.6 of MongoDB was used for all benchmarks",
    "Version 6.0.15 of FoundationDB was used for all benchmarks",
)
for conf, tables in APP_D.items():
    section, what, file, prefix = _D_CONF[conf]
    for w, (table, value) in tables.items():
        knobs = {
            "workload.kind": "ycsb",
            "workload.clients": 1,
            "workload.ycsb.recordCount": 1000,
            "workload.ycsb.properties.operationcount": "10000",
            "workload.ycsb.workload": w,
            **_D_KNOBS[conf],
        }
        if w not in ("d", "e"):  # a YCSB sweep refuses repetitions of inserting workloads
            knobs["sweep.repetitions"] = 100
        caption = (
            " (the table after D.2; its caption, D.3, is missing from the text)"
            if table == "D.3"
            else f" (Table {table})"
        )
        _run(
            f"{prefix}-{w}",
            B,
            f"fdb-ycsb/{file}",
            f"{section}, Table {table} (Figs 9.1, {_D_FIG[w]}): the study's tool, workload {w.upper()}, {what}",
            f"Average throughput {value}, Number of runs 100, Operations per run 10000{caption}",
            Q_D + (f"Average throughput {value}",),
            knobs,
        )

# ---- the inventory: every result figure and table, expressed or not ----------------------------
_B_TABLES = {conf: tuple(f"{_B_CONF[conf][3]}-{w}" for w in APP_B[conf]) for conf in APP_B}
INVENTORY: list[Item] = [
    Item(V, "Fig. 1", "§4.7; values in App. A.1 (M60 rows)", ("vldb2019-fig1",)),
    Item(
        V,
        "Fig. 2",
        "§4.7, §4.5.3",
        ("vldb2019-fig2",),
        "its warehouses and threads are not stated (chart only): the manifest uses 100 warehouses and A.1's M60 "
        "threads",
    ),
    Item(
        V,
        "Fig. 3",
        "§4.7, §4.5.5; App. A.2",
        ("vldb2019-app-a2",),
        'Fig. 3 varies findAndModify alone ("all other parameters being the same", the batch setting not '
        "stated, no value printed); the run pairs find_and_modify with batch_writes as A.2 prints them "
        "(true/true, false/false). Not a missing feature: the text does not say at which batch setting Fig. 3 "
        "was drawn (without pairedWith the matrix crosses the two)",
    ),
    Item(
        V,
        "Fig. 4",
        "§4.7; values in App. A.1 (M50, M80 and M60 rows at 100 warehouses), costs in App. C",
        ("vldb2019-fig4",),
    ),
    Item(V, "Table A.1", "App. A.1", ("vldb2019-fig4", "vldb2019-fig1")),
    Item(V, "Table A.2", "App. A.2", ("vldb2019-app-a2", "mongodb-replicaset")),
    Item(V, "App. D", "App. D", ("vldb2019-app-d",)),
    Item(
        S,
        "Fig. 8",
        "§7.2",
        ("sharded-fig8",),
        "the study's client steps are not stated: by 50 (by 25 the 16 ladders would be 304 cells, over a sweep's 200)",
    ),
    Item(
        S,
        "Fig. 9",
        "§7.3",
        ("sharded-fig9",),
    ),
    Item(S, "Fig. 10", "§7.4", ("sharded-fig10-sharded", "sharded-fig10-unsharded")),
    Item(S, "Fig. 11", "§7.4", ("sharded-fig10-sharded", "sharded-fig10-unsharded")),
    Item(
        S,
        "Fig. 12",
        "§7.5",
        ("sharded-fig12",),
    ),
    Item(S, "App. C", "App. C", ("sharded-app-c",)),
    Item(
        T,
        "Fig. 4",
        "§5.1",
        ("voltdb-fig4",),
    ),
    Item(
        T,
        "Fig. 5",
        "§5.2",
        ("voltdb-fig5",),
        "under each partitioning the crossed matrix's fourth cell, no Delivery per-district, repeats the "
        "no-Delivery bar: a paired axis's values are distinct, so mix and delivery cannot pair 3 to 3",
    ),
    Item(
        T,
        "Fig. 6",
        "§5.3",
        ("voltdb-fig6",),
    ),
    Item(T, "Fig. 7", "§5.4", ("voltdb-fig7",)),
    Item(T, "Fig. 8", "§5.5", ("voltdb-fig8",)),
    Item(
        T,
        "Fig. 9",
        "§5.6",
        ("voltdb-fig9",),
        "the warehouse counts are not printed (10-80 here); each count a type cannot hold by our capacity "
        "estimate is left out (oversizedLoads LeaveOut: c4.xlarge stops at 50, the study's after 60). The "
        "processors (Haswell c4/d2, AMD EPYC r5a) are the nodes', not the spec's",
    ),
    Item(
        T,
        "Fig. 10",
        "§5.7",
        ("voltdb-fig10",),
    ),
    Item(T, "Fig. 11", "§5.8", ("voltdb-fig11",)),
    Item(
        B,
        "Table 6.1 / Table A.1",
        "§6.1, App. A",
        (),
        "FoundationDB's own test framework (fdbserver -r multitest, tests/ReadRandom.txt: 10 reads a "
        "transaction, 2500 transactions/s targeted, 10 s): needs a workload kind that runs FoundationDB's "
        "native tests against database.external",
    ),
    Item(B, "Figs 6.1-6.7 / App. B.1 (Tables B.1-B.14)", "§6.2, App. B.1", _B_TABLES["b1"]),
    Item(B, "Figs 6.1-6.7 / App. B.2 (Tables B.15-B.28)", "§6.2, App. B.2", _B_TABLES["b2"]),
    Item(B, "Figs 6.1-6.7 / App. B.3 (Tables B.29-B.42)", "§6.2, App. B.3", _B_TABLES["b3"]),
    Item(B, "Figs 6.1-6.7 / App. B.4 (Tables B.43-B.56)", "§6.2, App. B.4", _B_TABLES["b4"]),
    Item(
        B,
        "Figs 9.1-9.8 / App. D.1 (Tables D.1-D.6)",
        "ch. 9, App. D.1",
        tuple(f"fdb-d1-fdbdl-{w}" for w in "abcdef"),
        "the tool's fdbdl runner used the Document Layer 1.6.3's explicit transactions (§8.1.2, [63]); the "
        "runner's MongoDB store uses MongoDB sessions' transactions, which that Document Layer does not offer "
        "(§3.7.2): needs a Document Layer transaction mode in the runner (not the CRD). Workloads D and E: "
        "one run, not 100 (repetitions of an inserting YCSB workload are refused)",
    ),
    Item(
        B,
        "Figs 9.1-9.7, 9.9 / App. D.2 (Tables D.7-D.12)",
        "ch. 9, App. D.2",
        tuple(f"fdb-d2-mongo3-{w}" for w in "abcdef"),
        "workloads D and E: one run, not 100 (a YCSB sweep refuses repetitions of workloads d and e; needs a "
        "fresh load or insert range per repetition)",
    ),
    Item(
        B,
        "Figs 9.1-9.7, 9.10 / App. D.3 (Tables D.13-D.18)",
        "ch. 9, App. D.3",
        tuple(f"fdb-d3-mongo4-{w}" for w in "abcdef"),
        "workloads D and E: one run, not 100 (as App. D.2)",
    ),
]
