"""What a Step asks the timer to do before it records the step's status: one small frozen object
per action, carrying what the action needs (the startAt to write, the pods to kill, the result
to record). handlers.perform carries them out, each idempotent (deterministic names,
create-if-absent), so a crash between the actions and the status repeats them harmlessly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .. import faults, history


class _Named:
    name: ClassVar[str]  # what the logs and the retry warnings call the action


@dataclass(frozen=True)
class RetireOldGenerations(_Named):
    """A new generation supersedes older runs: their releases and objects go."""

    name = "retire-old-generations"


@dataclass(frozen=True)
class CreateRunObjects(_Named):
    """The runner RBAC and the run's (or sweep cell's) ConfigMaps."""

    name = "create-run-objects"


@dataclass(frozen=True)
class InstallDatabase(_Named):
    """helm upgrade --install of the run's release."""

    name = "install-database"


@dataclass(frozen=True)
class RetireDeployment(_Named):
    """A sweep's next deployment: helm uninstall of the run's other releases (the current one is
    not made yet), so the earlier deployment's pods and data are gone before it installs."""

    name = "retire-deployment"


@dataclass(frozen=True)
class CreateLoadJob(_Named):
    name = "create-load-job"


@dataclass(frozen=True)
class CreateRunJob(_Named):
    name = "create-run-job"


@dataclass(frozen=True)
class CreateMidcheckJob(_Named):
    """verify.duringRun: the consistency check half-way through the run."""

    name = "create-midcheck-job"


@dataclass(frozen=True)
class WriteStartAt(_Named):
    """Release the barrier: startAt into the start ConfigMap."""

    name = "write-start-at"
    start_at: str


@dataclass(frozen=True)
class CreateVerifyJob(_Named):
    """Durability: the verifier Job over the ledgers of every runner pod."""

    name = "create-verify-job"
    ledger_pods: dict[int, str]  # shard -> the pod's IP


@dataclass(frozen=True)
class ReleaseRunners(_Named):
    """ledgersVerified: the runner pods may exit."""

    name = "release-runners"


@dataclass(frozen=True)
class WriteDeliveries(_Named):
    """The run's Deliveries for condition 11 (deliveries.json) into the check ConfigMap."""

    name = "write-deliveries"
    deliveries: dict


@dataclass(frozen=True)
class CreateCheckJob(_Named):
    name = "create-check-job"
    earlier_cells: tuple[int, ...] = ()  # in a sweep: the cells measured before on the same load


@dataclass(frozen=True)
class CreateAcidJob(_Named):
    """spec.verify.acid: the ACID tests after the consistency check."""

    name = "create-acid-job"


@dataclass(frozen=True)
class CreateAnalysisJob(_Named):
    """Change points: history.json into the check ConfigMap, then the analyzer Job."""

    name = "create-analysis-job"
    analysis_input: list[dict]  # history.json: the comparable results, this run's last
    max_pvalue: float


@dataclass(frozen=True)
class KillPods(_Named):
    """Fault injection: kill the chosen database pod, or every pod at once (kill-all)."""

    name = "kill-pod"
    kills: tuple[faults.Kill, ...]


@dataclass(frozen=True)
class HealFaults(_Named):
    """The end of a timed fault (a pause: SIGCONT to the stopped process), at the end of its
    duration or of the run."""

    name = "heal-faults"
    heals: tuple[faults.Kill, ...]


@dataclass(frozen=True)
class WriteResult(_Named):
    """The finished run's (or sweep cell's) BenchmarkResult and its ConfigMap."""

    name = "write-result"
    result: history.ResultRecord


@dataclass(frozen=True)
class PruneResults(_Named):
    """The run's oldest BenchmarkResults beyond history.limit."""

    name = "prune-results"
    names: tuple[str, ...]  # BenchmarkResult names


@dataclass(frozen=True)
class CleanUp(_Named):
    """What cleanup.policy removes: the release, the Jobs, the runner RBAC."""

    name = "clean-up"


@dataclass(frozen=True)
class DeleteRun(_Named):
    """ttlSecondsAfterFinished elapsed: the BenchmarkRun itself."""

    name = "delete-run"


Action = (
    RetireOldGenerations
    | CreateRunObjects
    | InstallDatabase
    | RetireDeployment
    | CreateLoadJob
    | CreateRunJob
    | CreateMidcheckJob
    | WriteStartAt
    | CreateVerifyJob
    | ReleaseRunners
    | WriteDeliveries
    | CreateCheckJob
    | CreateAcidJob
    | CreateAnalysisJob
    | KillPods
    | HealFaults
    | WriteResult
    | PruneResults
    | CleanUp
    | DeleteRun
)
