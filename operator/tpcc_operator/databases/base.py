"""The one interface every database implements: what the operator must know of it to deploy it,
reach it, size it, inject faults into it and judge what losing a member means. A database's module
(voltdb.py, mongodb.py, foundationdb.py) is the only place that knows these things of it; the
registry (`databases.of`) is the only place that maps database.type to a module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ..capacity import Capacity, Costs, Unit
from ..runspec import CredentialsRef, Deploy, RunSpec

# database.deploy.antiAffinity -> the antiAffinity value of the charts the operator ships (each
# spreads a set's members over nodes by it)
CHART_ANTI_AFFINITY = {"preferred": "soft", "required": "hard", "none": "none"}


class Database:
    """Defaults fit a database of `replicas` interchangeable members that each serve clients."""

    name: ClassVar[str]  # database.type
    # the chart the operator ships for it (charts/<chart>); None: it runs only as database.external
    chart: ClassVar[str | None] = None
    client_port: ClassVar[int | None] = None  # what its chart's client Service and pods listen on
    # the container running the database process in the chart's pods: kill-process SIGKILLs the
    # pid the charts write to /tmp/database.pid in it; its OOM kills and restarts are read there
    container: ClassVar[str | None] = None
    # whether kill-primary takes the member the database names primary (else: a random ready member)
    has_primary: ClassVar[bool] = False
    costs: ClassVar[Costs | None] = None  # None: the operator does not deploy it, so never sizes it
    # driver options that shape what the load writes (a run must name the load's value): a sweep
    # axis over one loads the database again for each value, the load's reset dropping the last
    load_options: ClassVar[tuple[str, ...]] = ()

    def pod_count(self, deploy: Deploy) -> int:
        """How many pods a deploy runs when all are up (the readiness the operator waits for)."""
        return deploy.replicas

    def client_pods(self, release: str, deploy: Deploy) -> tuple[str, int]:
        """The StatefulSet whose pods the runners connect to, each by name, and how many."""
        return release, deploy.replicas

    def decided_values(self, deploy: Deploy) -> dict[str, Any]:
        """Chart values the spec decides beside replicas and podLabels (over the user's values):
        database.deploy.antiAffinity, when set, as the chart's antiAffinity."""
        if deploy.anti_affinity is None:
            return {}
        return {"antiAffinity": CHART_ANTI_AFFINITY[deploy.anti_affinity]}

    def refusal(self, spec: RunSpec) -> str | None:
        """Why the operator will not deploy this spec (checked before Helm runs)."""
        return None

    def load_values(self, spec: RunSpec) -> frozenset[str]:
        """The values a run gives the load_options: the driver option's, and each one a
        sweep.matrix axis over it loads (a sweep's capacity is its largest load's)."""
        options = spec.workload.driver_options or {}
        fields = {f"workload.driverOptions.{option}" for option in self.load_options}
        given = {str(options[option]) for option in self.load_options if option in options}
        axes = (spec.sweep.matrix if spec.sweep else None) or ()
        return frozenset(given | {v for axis in axes if axis.field in fields for v in axis.values})

    def capacity(
        self, deploy: Deploy, values: Mapping[str, Any], unit: Unit, load_values: frozenset[str] = frozenset()
    ) -> Capacity | None:
        """The most `unit`s a deploy holds, from its chart values over the chart's defaults, for
        a load with these load_values (load_values(spec)); None when the values bound nothing."""
        return None

    def credentials(self, spec: RunSpec) -> CredentialsRef | None:
        """The Secret holding the runner's database user: database.external's."""
        external = spec.database.external
        return external.credentials_secret_ref if external else None

    def loses_data_with_a_node(self, deploy: Deploy) -> str | None:
        """Why a deploy that lost one node after it was ready has lost its data (the run cannot
        go on), or None when a member's loss keeps every row (copies, a volume)."""
        return None

    def primary(self, endpoints: list[str], timeout_seconds: float) -> str | None:
        """The pod the database names primary, asked of its members (has_primary only)."""
        return None
