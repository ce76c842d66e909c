"""MongoDB (charts/mongodb): a replica set of `replicas` members, or sharded (a config-server set,
`shards` sets of `replicas` members, `mongos` routers); rows on each member's data volume."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubernetes.utils import parse_quantity

from ..capacity import HEADROOM, MIB, Capacity, Costs, Unit, value_at
from ..runspec import CredentialsRef, Deploy, RunSpec
from .base import Database


@dataclass(frozen=True)
class Topology:
    """What charts/mongodb runs for a deploy: one replica set of `replicas` members, or
    (sharded) a config-server set, `shards` sets of `replicas` members and `mongos` routers."""

    sharded: bool
    replicas: int
    shards: int = 0
    config_servers: int = 0
    mongos: int = 0

    @property
    def pods(self) -> int:
        return self.config_servers + self.shards * self.replicas + self.mongos if self.sharded else self.replicas


# charts/mongodb's defaults for topology: sharded (a test keeps them equal to its values.yaml)
SHARDED_DEFAULTS = {"shards": 2, "configServers": 3, "mongos": 2}


def topology(deploy: Deploy) -> Topology:
    values = deploy.values or {}  # the chart's values: its schema, not the CRD's, says their shape
    if values.get("topology", "replicaset") != "sharded":
        return Topology(False, deploy.replicas)
    sharded = values.get("sharded") or {}
    return Topology(
        True,
        deploy.replicas,
        sharded.get("shards", SHARDED_DEFAULTS["shards"]),
        sharded.get("configServers", SHARDED_DEFAULTS["configServers"]),
        (sharded.get("mongos") or {}).get("replicas", SHARDED_DEFAULTS["mongos"]),
    )


def primary_pod(hello: dict | None) -> str | None:
    """The pod name of the replica set's primary from a `hello` reply: the first DNS label of
    its `primary` host (the charts' members are <pod>.<headless service>...:port)."""
    if not hello:
        return None
    host = hello.get("primary")
    if not host and (hello.get("isWritablePrimary") or hello.get("ismaster")):
        host = hello.get("me")
    if not host:
        return None
    return host.rsplit(":", 1)[0].split(".", 1)[0] or None


class MongoDB(Database):
    name = "mongodb"
    chart = "mongodb"
    client_port = 27017
    container = "mongod"  # the test-server profile of charts/mongodb keeps the name
    has_primary = True
    load_options = ("schema",)  # normalized, denormalized, embedded: different collections
    # Printed by runner-image/bench/capacity.py on SecantusDB, the MongoDB wire server on
    # WiredTiger (mongod's storage engine): its data directory after a clean stop (checkpointed)
    # grew 238 MiB per warehouse; one document per YCSB record, 2,672 bytes for 10 x 100 (786 for
    # 10 x 10, 550 for 1 x 100). mongod's default snappy block compression stores less, so for
    # mongod these err on the safe side.
    costs = Costs(warehouse=238 * MIB, record=(314.7, 26.1, 2.1))

    def pod_count(self, deploy: Deploy) -> int:
        """Every member, and when sharded the config servers and routers."""
        return topology(deploy).pods

    def client_pods(self, release: str, deploy: Deploy) -> tuple[str, int]:
        """A sharded deploy is reached through its routers only, each by name: a transaction is
        pinned to one mongos, which a VIP balancing every connection anew would not keep."""
        shape = topology(deploy)
        return (f"{release}-mongos", shape.mongos) if shape.sharded else (release, deploy.replicas)

    def refusal(self, spec: RunSpec) -> str | None:
        # kill-node counts the pods of one replica set, and a mongos pod has no mongod to kill
        # (the CRD's schema cannot see inside deploy.values)
        if spec.faults and topology(spec.deploy).sharded:
            return (
                "spec.faults are not supported on a sharded mongodb (database.deploy.values.topology: "
                "sharded): inject them into a replica set (topology: replicaset)"
            )
        return None

    def capacity(
        self, deploy: Deploy, values: Mapping[str, Any], unit: Unit, load_values: frozenset[str] = frozenset()
    ) -> Capacity | None:
        """Each member of a replica set holds every warehouse in its data volume; a sharded
        deploy spreads them over its shards (hashed on the warehouse id). None when the data
        volume has no size."""
        persistent = value_at(values, "persistence", "enabled") is not False
        where = ("persistence", "size") if persistent else ("dataVolume", "sizeLimit")
        size = value_at(values, *where)
        if size is None:
            return None
        sharded = value_at(values, "topology") == "sharded"
        shards = int(value_at(values, "sharded", "shards") or 1) if sharded else 1
        per_member = int(int(parse_quantity(size)) * (1 - HEADROOM)) // unit.bytes(self.costs)
        over = f"{shards} shards x " if sharded else "every member holds all: "
        return Capacity(
            count=shards * per_member,
            unit=unit.name,
            basis=f"{over}{size} data volume ({'.'.join(where)}, {HEADROOM:.0%} kept free) / {unit.cost(self.costs)}",
            raise_=f"database.deploy.values.{'.'.join(where)}" + (", sharded.shards" if sharded else ""),
        )

    def credentials(self, spec: RunSpec) -> CredentialsRef | None:
        """A deployed replica set with auth: the chart's root user (auth.existingSecret and its
        keys; the chart's defaults username/password)."""
        if spec.database.external is not None:
            return super().credentials(spec)
        auth = (spec.deploy.values or {}).get("auth") or {}  # the chart's values
        if not auth.get("enabled"):
            return None
        return CredentialsRef(
            auth.get("existingSecret", ""), auth.get("usernameKey", "username"), auth.get("passwordKey", "password")
        )

    def primary(self, endpoints: list[str], timeout_seconds: float) -> str | None:
        """`hello` on each member until one names the primary; None if no member answers."""
        import pymongo  # the runner's dependency, in the operator image too

        for endpoint in endpoints:
            try:
                client: pymongo.MongoClient[dict[str, Any]]
                with pymongo.MongoClient(
                    endpoint,
                    directConnection=True,
                    serverSelectionTimeoutMS=int(timeout_seconds * 1000),
                    connectTimeoutMS=int(timeout_seconds * 1000),
                ) as client:
                    name = primary_pod(client.admin.command("hello"))
            except pymongo.errors.PyMongoError:
                continue
            if name:
                return name
        return None


MONGODB = MongoDB()
