"""status.placement: the node each of a run's pods ran on, so a result says whether the database's
members had nodes of their own and whether the runners sat beside them (a runner beside a member
takes its CPU; a fault on a node takes both). The database's members are recorded when it becomes
ready, the runner pods when the barrier is released: a sweep's later deployment or cell records
its own. The charts spread the members (database.deploy.antiAffinity), runner_jobs keeps the
runner pods off their nodes where it can; this module only records where they went.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .failures import PodState
from .jsonmodel import JsonModel


@dataclass(frozen=True, kw_only=True)
class PodNode(JsonModel):
    pod: str
    node: str  # "": not yet placed by the scheduler when recorded


@dataclass(frozen=True, kw_only=True)
class Placement(JsonModel):
    database: tuple[PodNode, ...] | None = None  # None: an external database, or not yet ready
    runners: tuple[PodNode, ...] | None = None  # None: the barrier not yet released

    @property
    def shared_nodes(self) -> tuple[str, ...]:
        """The nodes that held both a database member and a runner pod."""
        members = {p.node for p in self.database or () if p.node}
        return tuple(sorted(members & {p.node for p in self.runners or ()}))


def pods_on(pods: Iterable[PodState]) -> tuple[PodNode, ...]:
    """Each pod (as kube reads them) and its node, in the order of the pods' names."""
    return tuple(PodNode(pod=p.name, node=p.node) for p in sorted(pods, key=lambda p: p.name))


def with_database(members: Iterable[PodState]) -> Placement:
    """status.placement once the database is ready: its members' nodes (runner pods recorded
    against earlier members, a sweep's earlier deployment's, are dropped)."""
    return Placement(database=pods_on(members))


def with_runners(status: Mapping, runners: Iterable[PodState]) -> Placement:
    """status.placement once the barrier is released: the runner pods' nodes, beside the members
    recorded."""
    recorded = Placement.in_status(status, "placement") or Placement()
    return Placement(database=recorded.database, runners=pods_on(runners))
