"""BenchmarkRuns a new user might write that must be rejected at apply, each with what the
message names: checked offline against the CRD (test_crd.py) and against the real API server
(e2e/test_validation_e2e.py), so the two cannot drift apart."""

from __future__ import annotations

import json
from dataclasses import dataclass

VOLTDB = {"type": "voltdb"}
VOLTDB_K1 = {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}}
MONGO_RS = {"type": "mongodb", "deploy": {"replicas": 3}}
FOUNDATIONDB = {"type": "foundationdb", "external": {"endpoints": ["fdb:4500"]}}


@dataclass(frozen=True)
class Bad:
    id: str
    spec: dict
    field: str  # the field the message names
    says: str  # and what it says about it
    name: str = "bad"

    def manifest(self) -> dict:
        return {
            "apiVersion": "bench.tpcc.dev/v1alpha1",
            "kind": "BenchmarkRun",
            "metadata": {"name": self.name},
            "spec": self.spec,
        }

    def json(self) -> str:
        return json.dumps(self.manifest())


def _resources(**resources) -> dict:
    return {"database": VOLTDB, "runners": {"resources": resources}}


def _driver(db: dict, **options) -> dict:
    return {"database": db, "workload": {"driverOptions": options}}


def _matrix(db: dict, *axes: tuple[str, list], **sweep) -> dict:
    return {"database": db, "sweep": {"clients": [10], **sweep, "matrix": [{"field": f, "values": v} for f, v in axes]}}


def _faults(db: dict, *faults: dict, **workload) -> dict:
    return {"database": db, "workload": workload, "faults": list(faults)}


_PROPORTIONS = ("readproportion", "updateproportion", "insertproportion", "scanproportion", "readmodifywriteproportion")


def _ycsb(ycsb: dict) -> dict:
    return {"database": VOLTDB, "workload": {"kind": "ycsb", "ycsb": ycsb}}


BAD = [
    # run names Helm cannot use
    Bad("name-leading-digit", {"database": VOLTDB}, "metadata.name", "start with a lowercase letter", name="1run"),
    Bad("name-with-dots", {"database": VOLTDB}, "metadata.name", "no dots", name="bench.v2"),
    # resource quantities and their bounds
    Bad("memory-lots", _resources(limits={"memory": "lots"}), "spec.runners.resources.limits.memory", "should match"),
    Bad("cpu-negative", _resources(requests={"cpu": "-1"}), "spec.runners.resources.requests.cpu", "should match"),
    Bad(
        "memory-two-dots",
        _resources(limits={"memory": "1.5.5Gi"}),
        "spec.runners.resources.limits.memory",
        "should match",
    ),
    Bad("cost-free", {"database": VOLTDB, "cost": {"pricePerHour": 0}}, "spec.cost.pricePerHour", "greater than 0"),
    Bad(
        "cost-currency-lowercase",
        {"database": VOLTDB, "cost": {"pricePerHour": 1.5, "currency": "usd"}},
        "spec.cost.currency",
        "should match",
    ),
    Bad(
        "cost-without-price",
        {"database": VOLTDB, "cost": {"currency": "EUR"}},
        "spec.cost.pricePerHour",
        "Required value",
    ),
    Bad(
        "cost-axis-free",
        _matrix(VOLTDB, ("cost.pricePerHour", ["1.66", "0"])),
        "spec.sweep.matrix[0]",
        "sweep.matrix cost.pricePerHour: values are prices per hour, decimal numbers above 0",
    ),
    Bad("cpu-over-bound", _resources(limits={"cpu": 100}), "spec.runners.resources.limits.cpu", "at most 64"),
    Bad(
        "memory-over-bound",
        _resources(limits={"memory": "1Ti"}),
        "spec.runners.resources.limits.memory",
        "at most 256Gi",
    ),
    Bad(
        "request-over-limit",
        _resources(requests={"memory": "4Gi"}, limits={"memory": "1Gi"}),
        "runners.resources.requests",
        "must not exceed runners.resources.limits",
    ),
    Bad("unknown-resource", _resources(limits={"gpu": 1}), "gpu", "unknown field"),
    # image references
    Bad(
        "image-with-space",
        {"database": VOLTDB, "runners": {"image": "local/tpcc runner:dev"}},
        "spec.runners.image",
        "should match",
    ),
    Bad(
        "image-url",
        {"database": VOLTDB, "runners": {"image": "https://registry.example/tpcc:1"}},
        "spec.runners.image",
        "should match",
    ),
    Bad(
        "image-empty-tag",
        {"database": VOLTDB, "runners": {"image": "tpcc-runner:"}},
        "spec.runners.image",
        "should match",
    ),
    Bad(
        "image-uppercase-path",
        {"database": VOLTDB, "runners": {"image": "registry.example/TPCC:1"}},
        "spec.runners.image",
        "should match",
    ),
    # driver options per database
    Bad(
        "voltdb-mongodb-option",
        _driver(VOLTDB, schema="normalized"),
        "workload.driverOptions for voltdb",
        "only call_timeout, load_timeout",
    ),
    Bad(
        "voltdb-unknown-option",
        _driver(VOLTDB, turbo="true"),
        "workload.driverOptions for voltdb",
        "only call_timeout, load_timeout",
    ),
    Bad(
        "voltdb-delivery-value",
        _driver(VOLTDB, delivery="per-order"),
        "workload.driverOptions for voltdb",
        "delivery is per-warehouse or per-district",
    ),
    Bad(
        "voltdb-delivery-case",
        _driver(VOLTDB, delivery="Per-District"),
        "workload.driverOptions for voltdb",
        "delivery is per-warehouse or per-district",
    ),
    Bad(
        "voltdb-partitioning-value",
        _driver(VOLTDB, partitioning="w_id"),
        "workload.driverOptions for voltdb",
        "partitioning is warehouse, district or d_id",
    ),
    Bad(
        "mongodb-partitioning-option",
        _driver(MONGO_RS, partitioning="district"),
        "workload.driverOptions for mongodb",
        "only schema",
    ),
    Bad(
        "mongodb-delivery-option",
        _driver(MONGO_RS, delivery="per-district"),
        "workload.driverOptions for mongodb",
        "only schema",
    ),
    Bad(
        "mongodb-voltdb-option",
        _driver(MONGO_RS, call_timeout="5"),
        "workload.driverOptions for mongodb",
        "only schema",
    ),
    Bad(
        "mongodb-inline-password",
        _driver(MONGO_RS, password="hunter2"),
        "workload.driverOptions for mongodb",
        "only schema",
    ),
    Bad(
        "mongodb-schema-value",
        _driver(MONGO_RS, schema="flat"),
        "workload.driverOptions for mongodb",
        "schema is denormalized|embedded|normalized",
    ),
    Bad(
        "mongodb-write-concern-zero",
        _driver(MONGO_RS, write_concern="0"),
        "workload.driverOptions for mongodb",
        "write_concern majority or a number",
    ),
    Bad(
        "mongodb-read-preference-value",
        _driver(MONGO_RS, read_preference="any"),
        "workload.driverOptions for mongodb",
        "read_preference primary|",
    ),
    Bad(
        "mongodb-retry-writes-yes",
        _driver(MONGO_RS, retry_writes="yes"),
        "workload.driverOptions for mongodb",
        "retry_writes, journal",
    ),
    Bad(
        "mongodb-transactions-off",
        _driver(MONGO_RS, transactions="off"),
        "workload.driverOptions for mongodb",
        'stock_level_in_transaction are "true" or "false"',
    ),
    Bad(
        "mongodb-uri-credentials",
        _driver(MONGO_RS, uri="mongodb://admin:hunter2@db:27017/"),
        "workload.driverOptions.uri",
        "credentialsSecretRef",
    ),
    Bad(
        "foundationdb-cluster-file",
        _driver(FOUNDATIONDB, cluster_id="bench:abc", cluster_file="/etc/fdb.cluster"),
        "workload.driverOptions for foundationdb",
        "only api_version",
    ),
    Bad(
        "foundationdb-without-cluster-id",
        {"database": FOUNDATIONDB},
        "workload.driverOptions.cluster_id",
        "is required for foundationdb",
    ),
    Bad(
        "foundationdb-cluster-id-not-description-colon-id",
        _driver(FOUNDATIONDB, cluster_id="abc@10.0.0.1:4500"),
        "workload.driverOptions.cluster_id",
        "DESCRIPTION:ID",
    ),
    Bad(
        "driver-option-not-string",
        _driver(VOLTDB, call_timeout=5),
        "spec.workload.driverOptions.call_timeout",
        "must be",
    ),
    # warehouses: the schema's bound (what a deployed database holds is the operator's: capacity.py)
    Bad(
        "warehouses-billion",
        {
            "database": {"type": "voltdb", "external": {"endpoints": ["db:21212"]}},
            "workload": {"warehouses": 1000000000},
        },
        "spec.workload.warehouses",
        "less than or equal to 100000",
    ),
    # change points judge a run only while their new level is recent: at least the run itself
    Bad(
        "changepoints-recent-zero",
        {"database": VOLTDB, "regression": {"changePoints": {"recentResults": 0}}},
        "spec.regression.changePoints.recentResults",
        "greater than or equal to 1",
    ),
    # faults
    Bad(
        "fault-after-run",
        _faults(VOLTDB_K1, {"action": "kill-node", "afterSeconds": 400}, durationSeconds=300),
        "workload.durationSeconds",
        "every injection of a fault",
    ),
    Bad(
        "fault-repeats-after-run",
        _faults(
            VOLTDB_K1, {"action": "kill-node", "afterSeconds": 60, "everySeconds": 60, "count": 5}, durationSeconds=300
        ),
        "workload.durationSeconds",
        "every injection of a fault",
    ),
    Bad(
        "fault-single-node",
        _faults(VOLTDB, {"action": "kill-node"}),
        "database.deploy.replicas >= 2",
        "allowDataLoss: true",
    ),
    Bad(
        "fault-voltdb-k0",
        _faults({"type": "voltdb", "deploy": {"replicas": 3}}, {"action": "kill-random-member"}),
        "kSafety >= 1",
        "allowDataLoss: true",
    ),
    Bad(
        "fault-mongodb-one-member",
        _faults({"type": "mongodb", "deploy": {"replicas": 1}}, {"action": "kill-primary"}),
        "database.deploy.replicas >= 2",
        "allowDataLoss: true",
    ),
    # a process kill keeps the volume, but a VoltDB CE node's data lives in memory (no command log)
    Bad(
        "fault-voltdb-kill-process-single-node",
        _faults(VOLTDB, {"action": "kill-node", "method": "kill-process"}),
        "kSafety >= 1",
        "no command log",
    ),
    Bad(
        "fault-unknown-method",
        _faults(MONGO_RS, {"action": "kill-primary", "method": "pause"}),
        "spec.faults[0].method",
        "Unsupported value",
    ),
    # a pause lasts durationSeconds, inside the measured interval
    Bad(
        "pause-without-duration",
        _faults(VOLTDB_K1, {"action": "pause"}),
        "durationSeconds",
        "a pause, partition or slow-network needs durationSeconds",
    ),
    Bad(
        "pause-outlasts-run",
        _faults(VOLTDB_K1, {"action": "pause", "afterSeconds": 60, "durationSeconds": 300}, durationSeconds=300),
        "workload.durationSeconds",
        "a pause, partition or slow-network must be over before the measured interval ends",
    ),
    Bad(
        "kill-with-duration",
        _faults(VOLTDB_K1, {"action": "kill-node", "durationSeconds": 30}),
        "durationSeconds",
        "the kill actions take none",
    ),
    Bad(
        "pause-victim-index-outside",
        _faults(VOLTDB_K1, {"action": "pause", "victim": "pod-index", "podIndex": 3, "durationSeconds": 30}),
        "podIndex",
        "victim pod-index",
    ),
    Bad(
        "pause-voltdb-k0",
        _faults({"type": "voltdb", "deploy": {"replicas": 3}}, {"action": "pause", "durationSeconds": 30}),
        "kSafety >= 1",
        "allowDataLoss: true",
    ),
    # a partition needs others to be cut off from
    Bad(
        "partition-single-node",
        _faults(
            {"type": "mongodb", "deploy": {"replicas": 1}},
            {"action": "partition", "durationSeconds": 20, "allowDataLoss": True},
        ),
        "database.deploy.replicas >= 2",
        "a partition cuts a member off from the others",
    ),
    Bad(
        "partition-without-duration",
        _faults(VOLTDB_K1, {"action": "partition"}),
        "durationSeconds",
        "a pause, partition or slow-network needs durationSeconds",
    ),
    # a slow network: on a member with others, inside the window, something to do to the packets
    Bad(
        "slow-network-single-node",
        _faults(
            {"type": "mongodb", "deploy": {"replicas": 1}},
            {"action": "slow-network", "durationSeconds": 20, "delayMs": 100, "allowDataLoss": True},
        ),
        "database.deploy.replicas >= 2",
        "a slow-network slows what it says to them",
    ),
    Bad(
        "slow-network-outlasts-run",
        _faults(
            VOLTDB_K1,
            {"action": "slow-network", "afterSeconds": 60, "durationSeconds": 300, "delayMs": 100},
            durationSeconds=300,
        ),
        "workload.durationSeconds",
        "a pause, partition or slow-network must be over before the measured interval ends",
    ),
    # a node-loss lasts durationSeconds too, inside the measured interval
    Bad(
        "node-loss-without-duration",
        _faults(VOLTDB_K1, {"action": "node-loss"}),
        "durationSeconds",
        "and so do a chaos experiment and a node-loss (or forGood true)",
    ),
    Bad(
        "node-loss-not-for-good",
        _faults(VOLTDB_K1, {"action": "node-loss", "forGood": False}),
        "durationSeconds",
        "and so do a chaos experiment and a node-loss (or forGood true)",
    ),
    # forGood is a node-loss's, in place of its durationSeconds, and once
    Bad(
        "for-good-pause",
        _faults(VOLTDB_K1, {"action": "pause", "durationSeconds": 20, "forGood": True}),
        "spec.faults[0]",
        "forGood is a node-loss's, in place of durationSeconds, and once (count 1)",
    ),
    Bad(
        "node-loss-for-good-with-duration",
        _faults(VOLTDB_K1, {"action": "node-loss", "durationSeconds": 20, "forGood": True}),
        "spec.faults[0]",
        "forGood is a node-loss's, in place of durationSeconds, and once (count 1)",
    ),
    Bad(
        "node-loss-for-good-twice",
        _faults(VOLTDB_K1, {"action": "node-loss", "forGood": True, "count": 2, "everySeconds": 10}),
        "spec.faults[0]",
        "forGood is a node-loss's, in place of durationSeconds, and once (count 1)",
    ),
    Bad(
        "node-loss-outlasts-run",
        _faults(VOLTDB_K1, {"action": "node-loss", "afterSeconds": 60, "durationSeconds": 300}, durationSeconds=300),
        "workload.durationSeconds",
        "must be over before the measured interval ends (a node-loss too)",
    ),
    Bad(
        "slow-network-does-nothing",
        _faults(VOLTDB_K1, {"action": "slow-network", "durationSeconds": 20, "jitterMs": 0}),
        "spec.faults[0]",
        "a slow-network needs a delayMs or a lossPercent above 0",
    ),
    Bad(
        "slow-network-jitter-beyond-delay",
        _faults(VOLTDB_K1, {"action": "slow-network", "durationSeconds": 20, "delayMs": 50, "jitterMs": 80}),
        "spec.faults[0]",
        "jitterMs varies delayMs either way, so it needs a delayMs at least as large",
    ),
    Bad(
        "slow-network-loss-above-all",
        _faults(VOLTDB_K1, {"action": "slow-network", "durationSeconds": 20, "lossPercent": 150}),
        "spec.faults[0].lossPercent",
        "less than or equal to 100",
    ),
    Bad(
        "delay-on-a-kill",
        _faults(VOLTDB_K1, {"action": "kill-node", "delayMs": 100}),
        "spec.faults[0]",
        "delayMs, jitterMs and lossPercent are a slow-network's",
    ),
    Bad(
        "split-on-a-pause",
        _faults(VOLTDB_K1, {"action": "pause", "durationSeconds": 20, "split": "halves"}),
        "spec.faults[0]",
        "split is a partition's",
    ),
    Bad(
        "halves-with-a-victim",
        _faults(
            VOLTDB_K1,
            {"action": "partition", "durationSeconds": 20, "split": "halves", "victim": "pod-index", "podIndex": 1},
        ),
        "spec.faults[0]",
        "a partition with split halves chooses its pods at random",
    ),
    Bad(
        "runners-side-on-a-pause",
        _faults(VOLTDB_K1, {"action": "pause", "durationSeconds": 20, "runners": "cut-off-side"}),
        "spec.faults[0]",
        "runners is a partition's",
    ),
    Bad(
        "chaos-without-its-experiment",
        _faults(VOLTDB_K1, {"action": "chaos", "durationSeconds": 20}),
        "spec.faults[0]",
        "chaos (the Chaos Mesh experiment's kind and spec) is what a chaos fault injects",
    ),
    Bad(
        "chaos-experiment-on-a-pause",
        _faults(VOLTDB_K1, {"action": "pause", "durationSeconds": 20, "chaos": {"kind": "PodChaos"}}),
        "spec.faults[0]",
        "chaos (the Chaos Mesh experiment's kind and spec) is what a chaos fault injects",
    ),
    Bad(
        "chaos-without-duration",
        _faults(VOLTDB_K1, {"action": "chaos", "chaos": {"kind": "PodChaos", "spec": {"action": "pod-kill"}}}),
        "spec",
        "and so do a chaos experiment and a node-loss (or forGood true)",
    ),
    Bad(
        "chaos-with-its-own-selector",
        _faults(
            VOLTDB_K1,
            {
                "action": "chaos",
                "durationSeconds": 20,
                "chaos": {
                    "kind": "PodChaos",
                    "spec": {"action": "pod-kill", "selector": {"namespaces": ["kube-system"]}},
                },
            },
        ),
        "spec.faults[0].chaos",
        "chaos.spec.selector is the operator's",
    ),
    Bad(
        "chaos-with-its-own-duration",
        _faults(
            VOLTDB_K1,
            {"action": "chaos", "durationSeconds": 20, "chaos": {"kind": "PodChaos", "spec": {"duration": "30s"}}},
        ),
        "spec.faults[0].chaos",
        "chaos.spec.duration is left out",
    ),
    Bad(
        "chaos-kind-not-a-pod-experiment",
        _faults(VOLTDB_K1, {"action": "chaos", "durationSeconds": 20, "chaos": {"kind": "AWSChaos"}}),
        "spec.faults[0].chaos.kind",
        "Unsupported value",
    ),
    Bad(
        "chaos-with-a-victim",
        _faults(
            VOLTDB_K1,
            {"action": "chaos", "durationSeconds": 20, "victim": "pod-index", "chaos": {"kind": "PodChaos"}},
        ),
        "spec.faults[0]",
        "a chaos fault's experiment chooses its pods by its own spec.mode",
    ),
    Bad(
        "fault-external",
        _faults({"type": "voltdb", "external": {"endpoints": ["db:21212"]}}, {"action": "kill-node"}),
        "database.external",
        "faults are injected only into a database the operator deploys",
    ),
    Bad(
        "fault-count-huge",
        _faults(VOLTDB_K1, {"action": "kill-node", "count": 1000}),
        "spec.faults[0].count",
        "less than or equal to 100",
    ),
    Bad(
        "fault-unknown-action",
        _faults(VOLTDB_K1, {"action": "kill-everything"}),
        "spec.faults[0].action",
        "Unsupported value",
    ),
    # mutually exclusive and other bounds
    Bad(
        "deploy-and-external",
        {"database": {"type": "mongodb", "deploy": {}, "external": {"endpoints": ["db:27017"]}}},
        "database.deploy and database.external",
        "mutually exclusive",
    ),
    Bad(
        "load-workers-huge",
        {"database": VOLTDB, "workload": {"loadWorkers": 1000}},
        "spec.workload.loadWorkers",
        "less than or equal to 64",
    ),
    Bad("duration-field-name", {"database": VOLTDB, "workload": {"duration": 60}}, "duration", "unknown field"),
    Bad(
        "duration-over-a-week",
        {"database": VOLTDB, "workload": {"durationSeconds": 10000000}},
        "spec.workload.durationSeconds",
        "less than or equal to 604800",
    ),
    # sweeps
    Bad(
        "sweep-empty", {"database": VOLTDB, "sweep": {"repetitions": 2}}, "sweep", "a list of warehouses or of clients"
    ),
    Bad(
        "sweep-warehouses-twice",
        {"database": VOLTDB, "sweep": {"warehouses": [1, 2, 1]}},
        "sweep.warehouses",
        "distinct values",
    ),
    Bad(
        "sweep-clients-below-the-pods",
        {"database": VOLTDB, "runners": {"parallelism": 4}, "workload": {"clients": 4}, "sweep": {"clients": [3, 8]}},
        "spec",
        "every sweep.clients value must be at least runners.parallelism",
    ),
    Bad(
        "clients-below-the-pods",
        {"database": VOLTDB, "runners": {"parallelism": 4}, "workload": {"clients": 3}},
        "spec",
        "workload.clients must be at least runners.parallelism",
    ),
    Bad(
        "sweep-too-many-cells",
        {"database": VOLTDB, "sweep": {"warehouses": [1, 2, 3], "clients": list(range(1, 11)), "repetitions": 7}},
        "sweep",
        "at most 200 cells",
    ),
    # sweep.matrix: only fields that leave the database's shape alone, values of the field's type
    # sweep.matrix over the database's shape: replicas, kSafety, resources (a deployment each)
    Bad(
        "sweep-matrix-over-chart-values",
        _matrix(VOLTDB, ("database.deploy.values.heap", ["1g", "2g"])),
        "spec.sweep.matrix[0]",
        "database.deploy.values.heap changes the database (its deployment, its load or where the data is) in a way",
    ),
    Bad(
        "sweep-matrix-over-the-chart",
        _matrix(VOLTDB, ("database.deploy.chart", ["a", "b"])),
        "spec.sweep.matrix[0]",
        "database.deploy.chart changes the database",
    ),
    Bad(
        "sweep-matrix-replicas-zero",
        _matrix(VOLTDB, ("database.deploy.replicas", ["0", "1"])),
        "spec.sweep.matrix[0]",
        "database.deploy.replicas: values are node counts",
    ),
    Bad(
        "sweep-matrix-ksafety-not-a-number",
        _matrix(VOLTDB_K1, ("database.deploy.kSafety", ["one"])),
        "spec.sweep.matrix[0]",
        "database.deploy.kSafety: values are whole numbers",
    ),
    Bad(
        "sweep-matrix-resources-not-a-quantity",
        _matrix(VOLTDB, ("database.deploy.values.resources.limits.cpu", ["1", "two"])),
        "spec.sweep.matrix[0]",
        "database.deploy.values.resources.limits.cpu: values are quantities",
    ),
    Bad(
        "sweep-matrix-ksafety-on-mongodb",
        _matrix(MONGO_RS, ("database.deploy.kSafety", ["0", "1"])),
        "spec",
        "a sweep.matrix over database.deploy.kSafety needs database.type voltdb",
    ),
    Bad(
        "sweep-matrix-replicas-of-an-external-database",
        _matrix({"type": "voltdb", "external": {"endpoints": ["db:21212"]}}, ("database.deploy.replicas", ["1", "2"])),
        "spec",
        "a sweep.matrix field database.deploy.* deploys the database once per value",
    ),
    Bad(
        "sweep-matrix-replicas-with-faults",
        {**_matrix(VOLTDB_K1, ("database.deploy.replicas", ["2", "3"])), "faults": [{"action": "kill-node"}]},
        "spec",
        "a sweep.matrix field database.deploy.* deploys the database once per value",
    ),
    Bad(
        "sweep-matrix-replicas-all-below-ksafety",
        _matrix(VOLTDB_K1, ("database.deploy.replicas", ["1"])),
        "spec",
        "has no combination with kSafety below replicas",
    ),
    Bad(
        "sweep-matrix-ksafety-all-above-replicas",
        _matrix(VOLTDB_K1, ("database.deploy.kSafety", ["3", "4"])),
        "spec",
        "has no combination with kSafety below replicas",
    ),
    Bad(
        "sweep-matrix-no-deployable-combination",
        _matrix(VOLTDB, ("database.deploy.replicas", ["1", "2"]), ("database.deploy.kSafety", ["2", "3"])),
        "spec",
        "has no combination with kSafety below replicas",
    ),
    Bad(
        "sweep-matrix-too-many-deployments",
        _matrix(
            VOLTDB,
            ("database.deploy.replicas", ["1", "2", "3", "4", "5", "6"]),
            ("database.deploy.values.resources.limits.cpu", ["1", "2", "4"]),
        ),
        "spec.sweep",
        "a sweep deploys the database at most 16 times",
    ),
    Bad(
        "sweep-matrix-schema-unknown",
        _matrix(MONGO_RS, ("workload.driverOptions.schema", ["normalized", "flat"])),
        "spec.sweep.matrix[0]",
        "workload.driverOptions.schema: values are denormalized, embedded or normalized",
    ),
    Bad(
        "sweep-matrix-partitioning-unknown",
        _matrix(VOLTDB, ("workload.driverOptions.partitioning", ["warehouse", "item"])),
        "spec.sweep.matrix[0]",
        "workload.driverOptions.partitioning: values are warehouse, district or d_id",
    ),
    Bad(
        "sweep-matrix-partitioning-on-mongodb",
        _matrix(MONGO_RS, ("workload.driverOptions.partitioning", ["warehouse", "d_id"])),
        "spec",
        "must be a driver option of the run's database.type that a sweep varies",
    ),
    Bad(
        "sweep-matrix-over-warehouses",
        _matrix(VOLTDB, ("workload.warehouses", ["1", "2"])),
        "spec.sweep.matrix[0]",
        "workload.warehouses changes the database",
    ),
    Bad(
        "sweep-matrix-field-not-allowed",
        _matrix(VOLTDB, ("workload.durationSeconds", ["60", "120"])),
        "spec.sweep.matrix[0]",
        "workload.durationSeconds is not one a sweep varies",
    ),
    Bad(
        "sweep-matrix-option-of-another-database",
        _matrix(VOLTDB, ("workload.driverOptions.read_concern", ["local"])),
        "spec",
        "sweep.matrix field workload.driverOptions.<key> must be a driver option of the run's database.type",
    ),
    Bad(
        "sweep-matrix-percent-not-a-number",
        _matrix(VOLTDB, ("workload.remotePercent.newOrderLines", ["0", "ten"])),
        "spec.sweep.matrix[0]",
        "workload.remotePercent.newOrderLines: values are percents",
    ),
    Bad(
        "sweep-matrix-percent-over-100",
        _matrix(VOLTDB, ("workload.remotePercent.payments", ["150"])),
        "spec.sweep.matrix[0]",
        "workload.remotePercent.payments: values are percents",
    ),
    Bad(
        "sweep-matrix-values-not-strings",
        _matrix(VOLTDB, ("workload.remotePercent.payments", [0, 15])),
        "spec.sweep.matrix[0].values[0]",
        "string",
    ),
    Bad(
        "sweep-matrix-boolean-option",
        _matrix(MONGO_RS, ("workload.driverOptions.causal", ["yes", "no"])),
        "spec.sweep.matrix[0]",
        'workload.driverOptions.causal: values are "true" or "false"',
    ),
    Bad(
        "sweep-matrix-read-concern",
        _matrix(MONGO_RS, ("workload.driverOptions.read_concern", ["linearizable"])),
        "spec.sweep.matrix[0]",
        "read_concern majority|local|snapshot",
    ),
    Bad(
        "sweep-matrix-pacing",
        _matrix(VOLTDB, ("workload.pacing", ["none", "fast"])),
        "spec.sweep.matrix[0]",
        "workload.pacing: values are none or spec",
    ),
    Bad(
        "retry-wait-unknown",
        {"database": MONGO_RS, "workload": {"retryWait": "immediately"}},
        "spec.workload.retryWait",
        "Unsupported value",
    ),
    Bad(
        "sweep-matrix-retry-wait",
        _matrix(VOLTDB, ("workload.retryWait", ["backoff", "immediate"])),
        "spec.sweep.matrix[0]",
        "workload.retryWait: values are backoff or pytpcc",
    ),
    Bad(
        "target-tps-zero",
        {"database": VOLTDB, "workload": {"targetTransactionsPerSecond": 0}},
        "spec.workload.targetTransactionsPerSecond",
        "should be greater than or equal to 1",
    ),
    Bad(
        "target-tps-with-spec-pacing",
        {"database": VOLTDB, "workload": {"targetTransactionsPerSecond": 100, "pacing": "spec"}},
        "spec.workload",
        "workload.targetTransactionsPerSecond and pacing spec both set the terminals' pace",
    ),
    Bad(
        "target-tps-ycsb",
        {"database": VOLTDB, "workload": {"kind": "ycsb", "targetTransactionsPerSecond": 100}},
        "spec",
        "a YCSB run's limit is workload.ycsb.targetOpsPerSecond",
    ),
    Bad(
        "target-tps-saturation",
        {
            "database": VOLTDB,
            "workload": {"targetTransactionsPerSecond": 100},
            "sweep": {"saturation": {"startClients": 1, "maxClients": 8, "factor": 2}},
        },
        "spec",
        "a sweep.saturation (which drives the database to its limit)",
    ),
    Bad(
        "target-tps-matrix-pacing",
        {**_matrix(VOLTDB, ("workload.pacing", ["none", "spec"])), "workload": {"targetTransactionsPerSecond": 100}},
        "spec",
        "or a sweep.matrix over workload.pacing cannot vary it",
    ),
    Bad(
        "sweep-matrix-target-tps-not-a-number",
        _matrix(VOLTDB, ("workload.targetTransactionsPerSecond", ["100", "fast"])),
        "spec.sweep.matrix[0]",
        "values are transactions a second, whole numbers 1-999999",
    ),
    Bad(
        "sweep-matrix-target-tps-with-spec-pacing",
        {**_matrix(VOLTDB, ("workload.targetTransactionsPerSecond", ["100", "200"])), "workload": {"pacing": "spec"}},
        "spec",
        "a sweep.matrix over workload.targetTransactionsPerSecond sets the terminals' rate",
    ),
    Bad(
        "sweep-matrix-target-tps-and-pacing",
        _matrix(VOLTDB, ("workload.targetTransactionsPerSecond", ["100"]), ("workload.pacing", ["none", "spec"])),
        "spec",
        "not with workload.pacing spec, a sweep.matrix over workload.pacing or a sweep.saturation",
    ),
    Bad(
        "sweep-matrix-values-twice",
        _matrix(VOLTDB, ("workload.pacing", ["none", "none"])),
        "spec.sweep.matrix[0]",
        "workload.pacing: values must be distinct",
    ),
    Bad(
        "sweep-matrix-field-twice",
        _matrix(VOLTDB, ("workload.pacing", ["none"]), ("workload.pacing", ["spec"])),
        "spec.sweep",
        "must name each field once",
    ),
    Bad(
        "sweep-matrix-too-many-cells",
        _matrix(
            MONGO_RS,
            ("workload.driverOptions.read_concern", ["local", "snapshot"]),
            ("workload.remotePercent.payments", [str(p) for p in range(0, 100, 10)]),
            clients=[10, 20, 30],
            repetitions=5,
        ),
        "spec.sweep",
        "at most 200 cells (warehouses x clients x each sweep.matrix axis's values x repetitions",
    ),
    Bad(
        "sweep-matrix-mix-not-100",
        _matrix(VOLTDB, ("workload.mix", ["45/43/4/4/4", "50/43/4/4/4"])),
        "spec.sweep.matrix[0]",
        "workload.mix: values are the five percentages",
    ),
    Bad(
        "sweep-matrix-mix-four-parts",
        _matrix(VOLTDB, ("workload.mix", ["49/43/4/4"])),
        "spec.sweep.matrix[0]",
        "workload.mix: values are the five percentages",
    ),
    # sweep.saturation
    Bad(
        "saturation-step-and-factor",
        {"database": VOLTDB, "sweep": {"saturation": {"startClients": 1, "maxClients": 8, "step": 1, "factor": 2}}},
        "spec.sweep.saturation",
        "needs one of step (clients added) or factor",
    ),
    Bad(
        "saturation-neither-step-nor-factor",
        {"database": VOLTDB, "sweep": {"saturation": {"startClients": 1, "maxClients": 8}}},
        "spec.sweep.saturation",
        "needs one of step (clients added) or factor",
    ),
    Bad(
        "saturation-max-under-start",
        {"database": VOLTDB, "sweep": {"saturation": {"startClients": 8, "maxClients": 4, "factor": 2}}},
        "spec.sweep.saturation",
        "sweep.saturation.maxClients must be at least sweep.saturation.startClients",
    ),
    Bad(
        "saturation-too-many-steps",
        {"database": VOLTDB, "sweep": {"saturation": {"startClients": 1, "maxClients": 100, "step": 1}}},
        "spec.sweep.saturation",
        "at most 20 steps",
    ),
    Bad(
        "saturation-with-clients",
        {
            "database": VOLTDB,
            "sweep": {"clients": [1, 2], "saturation": {"startClients": 1, "maxClients": 8, "factor": 2}},
        },
        "spec.sweep",
        "sweep.saturation chooses the clients itself; leave sweep.clients out",
    ),
    Bad(
        "saturation-start-below-the-pods",
        {
            "database": VOLTDB,
            "runners": {"parallelism": 2},
            "sweep": {"saturation": {"startClients": 1, "maxClients": 8, "factor": 2}},
        },
        "spec",
        "sweep.saturation.startClients must be at least runners.parallelism",
    ),
    Bad(
        "saturation-limit-of-unknown-type",
        {
            "database": VOLTDB,
            "sweep": {
                "saturation": {"startClients": 1, "maxClients": 8, "factor": 2, "p90LimitsMs": {"NEWORDER": 100}}
            },
        },
        "spec.sweep.saturation.p90LimitsMs",
        "keys are NEW_ORDER, PAYMENT",
    ),
    Bad(
        "saturation-too-many-cells",
        {
            "database": VOLTDB,
            "sweep": {
                "warehouses": [1, 2, 3, 4, 5, 6, 7, 8],
                "repetitions": 2,
                "saturation": {"startClients": 1, "maxClients": 8, "factor": 2},
            },
        },
        "spec.sweep",
        "up to 14 with a factor",
    ),
    # the loss of the whole system
    Bad(
        "kill-all-without-allow-data-loss",
        {"database": VOLTDB_K1, "faults": [{"action": "kill-all"}]},
        "spec",
        "set allowDataLoss: true on it",
    ),
    # YCSB
    Bad(
        "ycsb-e-without-operation-count",
        {"database": VOLTDB, "workload": {"kind": "ycsb", "ycsb": {"workload": "e"}}},
        "workload.ycsb.properties.operationcount",
        "needs an operationcount > 0",
    ),
    Bad(
        "ycsb-block-on-tpcc",
        {"database": VOLTDB, "workload": {"ycsb": {"workload": "a"}}},
        "spec.workload",
        "workload.ycsb is for workload.kind ycsb",
    ),
    Bad(
        "ycsb-unknown-preset",
        {"database": VOLTDB, "workload": {"kind": "ycsb", "ycsb": {"workload": "g"}}},
        "spec.workload.ycsb.workload",
        "Unsupported value",
    ),
    Bad(
        "scale-down-zero",
        {"database": VOLTDB, "workload": {"scaleDown": 0}},
        "spec.workload.scaleDown",
        "greater than or equal to 1",
    ),
    Bad(
        "ycsb-scaled-down",
        {"database": VOLTDB, "workload": {"kind": "ycsb", "scaleDown": 10}},
        "spec",
        "workload.scaleDown divides TPC-C's rows per warehouse",
    ),
    Bad(
        "ycsb-with-acid",
        {"database": VOLTDB, "workload": {"kind": "ycsb"}, "verify": {"acid": {"enabled": True}}},
        "spec",
        "workload.kind ycsb runs without ACID tests",
    ),
    Bad(
        "ycsb-sweep-over-warehouses",
        {"database": VOLTDB, "workload": {"kind": "ycsb"}, "sweep": {"warehouses": [1, 2]}},
        "spec",
        "a sweep with workload.kind ycsb varies the clients only",
    ),
    Bad(
        "ycsb-sweep-inserting",
        {
            "database": VOLTDB,
            "workload": {"kind": "ycsb", "ycsb": {"workload": "d", "properties": {"operationcount": "1000"}}},
            "sweep": {"clients": [1, 2]},
        },
        "spec",
        "a sweep with workload.kind ycsb varies the clients only",
    ),
    Bad(
        "ycsb-saturation-p90-limits",
        {
            "database": VOLTDB,
            "workload": {"kind": "ycsb"},
            "sweep": {
                "saturation": {"startClients": 1, "maxClients": 8, "factor": 2, "p90LimitsMs": {"NEW_ORDER": 100}}
            },
        },
        "spec",
        "a workload.kind ycsb search is judged on operations per second alone",
    ),
    Bad(
        "ycsb-unknown-property",
        _ycsb({"properties": {"readproportoin": "0.9"}}),
        "spec.workload.ycsb.properties",
        "a name that is not a CoreWorkload property the runner",
    ),
    Bad(
        "ycsb-property-the-spec-sets",
        _ycsb({"properties": {"recordcount": "1000000000"}}),
        "spec.workload.ycsb.properties",
        "are set by fields of the spec, not here (recordcount: workload.ycsb.recordCount",
    ),
    Bad(
        "ycsb-proportion-not-a-number",
        _ycsb({"properties": {"readproportion": "most"}}),
        "spec.workload.ycsb.properties",
        "scanproportion and readmodifywriteproportion are decimal numbers >= 0",
    ),
    Bad(
        "ycsb-preset-proportions-over-one",
        _ycsb({"workload": "b", "properties": {"readproportion": "0.99"}}),
        "spec.workload.ycsb",
        "workload.ycsb.properties: readproportion + updateproportion + insertproportion",
    ),
    Bad(
        "ycsb-all-five-proportions-under-one",
        _ycsb({"properties": {p: "0.1" for p in _PROPORTIONS}}),
        "spec.workload.ycsb",
        "scanproportion + readmodifywriteproportion must be 1",
    ),
    Bad(
        "ycsb-unknown-request-distribution",
        _ycsb({"properties": {"requestdistribution": "gaussian"}}),
        "spec.workload.ycsb.properties",
        "workload.ycsb.properties.requestdistribution: gaussian is not one of",
    ),
    Bad(
        "ycsb-histogram-field-lengths",
        _ycsb({"properties": {"fieldlengthdistribution": "histogram"}}),
        "spec.workload.ycsb.properties",
        "workload.ycsb.properties.fieldlengthdistribution: histogram is not one of",
    ),
    Bad(
        "ycsb-latest-scan-lengths",
        _ycsb({"properties": {"scanlengthdistribution": "latest"}}),
        "spec.workload.ycsb.properties",
        "workload.ycsb.properties.scanlengthdistribution: latest is not one of",
    ),
    # ACID tests
    Bad(
        "acid-unknown-test",
        {"database": VOLTDB, "verify": {"acid": {"enabled": True, "tests": ["isolation10"]}}},
        "spec.verify.acid.tests[0]",
        "Unsupported value",
    ),
    # consistency checks after the load and during the run
    Bad(
        "ycsb-consistency-during-run",
        {"database": VOLTDB, "workload": {"kind": "ycsb"}, "verify": {"duringRun": True}},
        "spec",
        "workload.kind ycsb has none",
    ),
    Bad(
        "consistency-during-a-fault",
        {"database": VOLTDB_K1, "verify": {"duringRun": True}, "faults": [{"action": "kill-node"}]},
        "spec",
        "verify.duringRun cannot be combined with faults",
    ),
]
