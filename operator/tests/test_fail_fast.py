"""Fail fast: every permanent problem ends the run Failed within a tick or a short grace, with
a reason, a message that names the cause (the field, the image, the Secret) and a Warning;
transient errors are retried with backoff; cleanup errors never touch the verdict; deletion
gives up on a failing Helm after a bounded time."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest
from test_phases import RUN, Driver
from tpcc_operator import failures, handlers, kube_actions, plan, runner_jobs
from tpcc_operator.failures import PodState
from tpcc_operator.runspec import RunSpec
from tpcc_operator.stages.actions import (
    CleanUp,
    CreateLoadJob,
    CreateRunObjects,
    DeleteRun,
    InstallDatabase,
    RetireOldGenerations,
)
from tpcc_operator.stages.failing import action_failed
from tpcc_operator.stages.machine import JobState, Step, World, patched
from tpcc_operator.timestamps import rfc3339

GRACE = failures.STUCK_GRACE_SECONDS


def in_phase(spec, phase: str) -> Driver:
    d = Driver(spec)
    d.tick()  # Pending, with specHash and runGeneration
    d.status.update(phase=phase, stageStartTime=rfc3339(d.now))
    return d


def failed_with(d: Driver, reason: str) -> str:
    assert d.phase == "Failed" and d.status["reason"] == reason
    assert d.events[-1].type == "Warning" and d.events[-1].reason == reason
    assert d.condition("Ready")["status"] == "False" and d.condition("Stalled")["status"] == "True"
    return d.status["message"]


def test_a_garbage_quantity_fails_before_anything_is_created(spec_of):
    spec = spec_of(
        {"database": {"type": "voltdb"}, "runners": {"resources": {"requests": {"memory": "lots", "cpu": "500m"}}}}
    )
    d = Driver(spec)
    d.tick()
    d.tick()
    message = failed_with(d, "InvalidSpec")
    assert message.startswith("spec.runners.resources.requests.memory: 'lots' is not a Kubernetes quantity")
    assert "cpu" not in message
    assert CreateRunObjects() not in d.actions


@pytest.mark.parametrize("value", ["500m", "2", 2, "1Gi", "512Mi", "1.5", "1e3", "100k", ".5"])
def test_real_quantities_pass(spec_of, value):
    spec = spec_of({"database": {"type": "voltdb"}, "runners": {"resources": {"limits": {"cpu": value}}}})
    assert failures.spec_problems(spec) == []


@pytest.mark.parametrize("value", ["lots", "1GB", "Gi", "1.2.3", "-", ""])
def test_garbage_quantities_are_named(spec_of, value):
    spec = spec_of({"database": {"type": "voltdb"}, "runners": {"resources": {"limits": {"memory": value}}}})
    assert failures.spec_problems(spec) == [
        f"spec.runners.resources.limits.memory: {value!r} is not a Kubernetes quantity (e.g. 500m, 2, 512Mi, 1Gi)"
    ]


def test_a_loader_image_that_will_never_be_pulled_fails_after_the_grace(spec_of):
    spec = spec_of({"database": {"type": "voltdb"}, "runners": {"image": "local/nope:1", "imagePullPolicy": "Never"}})
    d = in_phase(spec, "Loading")
    never = 'Container image "local/nope:1" is not present with pull policy of Never'
    d.tick(
        World(
            load=JobState(exists=True),
            pods=[PodState("bench-g2-loader-x", GRACE - 5, "ErrImageNeverPull", never, "local/nope:1")],
        )
    )
    assert d.phase == "Loading"  # within the grace
    d.tick(
        World(
            load=JobState(exists=True),
            pods=[PodState("bench-g2-loader-x", GRACE + 1, "ErrImageNeverPull", never, "local/nope:1")],
        )
    )
    message = failed_with(d, "ImagePullFailed")
    assert message == f"pod bench-g2-loader-x: ErrImageNeverPull for image 'local/nope:1': {never}"
    assert d.condition("Loaded")["status"] == "False" and d.condition("Loaded")["reason"] == "ImagePullFailed"


@pytest.mark.parametrize("reason", ["InvalidImageName", "ErrImagePull", "ImagePullBackOff"])
def test_a_runner_image_error_fails_the_run(voltdb, reason):
    d = in_phase(voltdb, "Running")
    d.tick(World(runner=JobState(exists=True), pods=[PodState("bench-g2-runner-0", GRACE, reason, "", "UPPER:case")]))
    assert f"{reason} for image 'UPPER:case'" in failed_with(d, "ImagePullFailed")
    assert d.condition("RunCompleted")["status"] == "False"


def test_a_missing_credentials_secret_fails_the_run(spec_of):
    spec = spec_of(
        {
            "database": {
                "type": "mongodb",
                "external": {"endpoints": ["db:27017"], "credentialsSecretRef": {"name": "db-creds"}},
            }
        }
    )
    d = in_phase(spec, "Loading")
    d.tick(
        World(
            load=JobState(exists=True),
            pods=[PodState("bench-g2-loader-x", 40, "CreateContainerConfigError", 'secret "db-creds" not found')],
        )
    )
    assert 'secret "db-creds" not found' in failed_with(d, "ContainerConfigError")


def test_a_checker_that_cannot_start_fails_the_run(voltdb):
    d = in_phase(voltdb, "Verifying")
    d.tick(World(pods=[PodState("bench-g2-checker-x", 60, "ImagePullBackOff", "Back-off", "r/x:1")]))
    failed_with(d, "ImagePullFailed")
    assert d.condition("ConsistencyVerified")["status"] == "False"


def test_a_database_image_error_fails_deploying_but_a_restart_waits_for_the_timeout(voltdb):
    d = in_phase(voltdb, "Deploying")
    d.status["database"] = {"installed": True}
    # VoltDB pods may restart while the cluster forms: only the timeout judges that
    d.tick(World(pods=[PodState("bench-g2-0", 200, "CrashLoopBackOff", "back-off 40s")]))
    assert d.phase == "Deploying"
    d.tick(World(pods=[PodState("bench-g2-0", 25, "ErrImagePull", "not found", "local/voltdb:typo")]))
    assert "'local/voltdb:typo'" in failed_with(d, "ImagePullFailed")
    assert d.condition("DatabaseReady")["status"] == "False"


def test_pods_that_start_or_finish_are_not_stuck(voltdb):
    d = in_phase(voltdb, "Loading")
    d.tick(World(load=JobState(exists=True), pods=[PodState("a", 500), PodState("b", 500, "ContainerCreating")]))
    assert d.phase == "Loading"


def test_loading_has_a_timeout_from_the_workload_size(spec_of):
    small = spec_of({"database": {"type": "voltdb"}, "workload": {"warehouses": 1, "loadWorkers": 4}})
    big = spec_of({"database": {"type": "voltdb"}, "workload": {"warehouses": 40, "loadWorkers": 4}})
    assert runner_jobs.load_timeout(small) == 900 and runner_jobs.load_timeout(big) == 600 + 300 * 10
    set_ = spec_of({"database": {"type": "voltdb"}, "workload": {"loadTimeoutSeconds": 120}})
    assert runner_jobs.load_timeout(set_) == 120
    d = in_phase(small, "Loading")
    d.tick(World(load=JobState(exists=True)), after=899)
    assert d.phase == "Loading"
    d.tick(World(load=JobState(exists=True)), after=2)
    assert failed_with(d, "LoadTimedOut") == "not loaded after 900s"


# ---- errors of the actions ----------------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 403, 404, 422])
def test_4xx_answers_are_permanent(status):
    e = failures.api_error(status, "Invalid", 'Job.batch "x" is invalid: spec.template...: Invalid value', "Job x")
    assert e.permanent and e.message.startswith(f"Job x rejected by the API server ({status} Invalid): ")


@pytest.mark.parametrize("status", [0, 409, 429, 500, 503, 504])
def test_conflicts_throttling_and_server_errors_are_transient(status):
    assert not failures.api_error(status, "x", "y", "Job x").permanent


def test_a_rejected_load_job_fails_the_run_naming_the_field(voltdb):
    d = in_phase(voltdb, "Loading")
    error = failures.api_error(
        422,
        "Invalid",
        'Job.batch "bench-g2-loader" is invalid: spec.template.spec.containers[0].image: Required value',
        "Job bench-g2-loader",
    )
    step = action_failed(RUN, d.status, CreateLoadJob(), error, d.now)
    d.status = patched(d.status, step.status)
    d.events += step.events
    assert "containers[0].image: Required value" in failed_with(d, "Invalid")
    assert d.condition("Loaded")["status"] == "False"


def test_transient_errors_change_nothing_and_back_off(voltdb):
    d = in_phase(voltdb, "Loading")
    for error in (
        failures.api_error(503, "ServiceUnavailable", "etcd", "Job x"),
        failures.helm_error("helm upgrade: Kubernetes cluster unreachable: connection refused"),
    ):
        assert action_failed(RUN, d.status, CreateLoadJob(), error, d.now).status == {}
    delays = [failures.retry_delay(n) for n in range(8)]
    assert delays[:4] == [3, 6, 12, 24] and max(delays) == failures.MAX_BACKOFF_SECONDS


def test_an_unexpected_exception_is_retried_then_fails_the_run_in_its_own_words(voltdb, monkeypatch):
    """An exception none of the clients name (here a TypeError, as kubernetes 37's changed
    call_api signature raised inside install-database): retried with backoff, then the run fails
    with reason OperatorError and the exception's words, not at the phase's timeout under its
    reason (DatabaseNotReady)."""

    def broken(*_args, **_kwargs):
        raise TypeError("call_api() got an unexpected keyword argument 'response_type'")

    monkeypatch.setattr(handlers, "_perform_one", broken)
    monkeypatch.setattr(handlers, "settings", lambda: plan.Settings(Path(".")))
    spec = RunSpec.parse(voltdb)
    with pytest.raises(handlers.ActionFailed) as caught:
        handlers.perform(Step(actions=[InstallDatabase()]), RUN, spec, spec, logging.getLogger(__name__))
    error = caught.value.error
    assert (error.reason, error.permanent) == (failures.OPERATOR_ERROR, False)
    assert error.message == "install-database: TypeError: call_api() got an unexpected keyword argument 'response_type'"
    d = in_phase(voltdb, "Deploying")
    for attempt in range(failures.UNEXPECTED_RETRIES):
        assert action_failed(RUN, d.status, InstallDatabase(), failures.given_up(error, attempt), d.now).status == {}
    step = action_failed(RUN, d.status, InstallDatabase(), failures.given_up(error, failures.UNEXPECTED_RETRIES), d.now)
    d.status = patched(d.status, step.status)
    d.events += step.events
    assert failed_with(d, failures.OPERATOR_ERROR) == error.message
    # an error the clients do name keeps its own judgement however often it comes back
    transient = failures.api_error(503, "ServiceUnavailable", "etcd", "Job x")
    assert failures.given_up(transient, 50) == transient


def test_a_failed_helm_install_fails_the_run(voltdb):
    d = in_phase(voltdb, "Deploying")
    error = failures.helm_error('helm upgrade: release name "1bench-g2": invalid release name')
    assert error.permanent
    step = action_failed(RUN, d.status, InstallDatabase(), error, d.now)
    d.status = patched(d.status, step.status)
    d.events += step.events
    assert "invalid release name" in failed_with(d, "HelmFailed")
    assert d.condition("DatabaseReady")["status"] == "False"


def test_cleanup_failures_never_change_the_verdict(voltdb):
    d = Driver(voltdb)
    d.tick()
    d.status.update(phase="Succeeded", completionTime=rfc3339(d.now))
    d.tick()  # kstatus for Succeeded
    before = [dict(c) for c in d.status["conditions"]]
    for action in (CleanUp(), RetireOldGenerations(), DeleteRun()):
        step = action_failed(RUN, d.status, action, failures.helm_error("helm uninstall: forbidden"), d.now)
        assert step.status == {} and step.events == []
    assert d.status["conditions"] == before and d.condition("Ready")["status"] == "True"


def test_deletion_with_a_failing_helm_gives_up_in_bounded_time():
    runtime, attempt, waits = 0.0, 0, []
    while (delay := failures.deletion_retry(runtime, attempt)) is not None:
        waits.append(delay)
        runtime += delay + 5  # each attempt's helm call takes a while too
        attempt += 1
    assert waits[:3] == [3, 6, 12] and len(waits) >= 4
    assert runtime <= failures.DELETION_GIVE_UP_SECONDS + 5


def test_a_failing_helm_cli_raises_a_one_line_error(tmp_path, monkeypatch):
    """The real subprocess path with a helm that fails the way an unreachable cluster makes it."""
    helm = tmp_path / "helm"
    helm.write_text(
        "#!/bin/sh\necho 'Error: Kubernetes cluster unreachable: dial tcp 10.0.0.1:6443: "
        "connect: connection refused' >&2\nexit 1\n"
    )
    helm.chmod(helm.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(kube_actions, "HELM", os.fspath(helm))
    with pytest.raises(kube_actions.HelmError) as e:
        kube_actions.uninstall_releases("perf", "bench")
    assert str(e.value) == (
        "helm list: Error: Kubernetes cluster unreachable: dial tcp 10.0.0.1:6443: connect: connection refused"
    )
    assert not failures.helm_error(str(e.value)).permanent


@pytest.fixture
def voltdb(document_of):
    return document_of({"database": {"type": "voltdb"}, "workload": {"clients": 8}, "runners": {"parallelism": 2}})


# ---- pods the scheduler cannot place ---------------------------------------------------------

NODE = {"cpu": 2.0, "memory": 24e9}
NO_PROVISIONER = (
    "ExternalProvisioning: Waiting for a volume to be created either by the external provisioner "
    "'tpcc.dev/hostpath' or manually by the system administrator"
)
UNBOUND = "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims."


def claim(age: float, storage_class="local-hostpath", exists=True, phase="Pending", **kw) -> failures.ClaimState:
    return failures.ClaimState("data-bench-g2-0", phase, storage_class, exists, age, NO_PROVISIONER, **kw)


def unplaced(claims=(), unschedulable=UNBOUND, **requests) -> PodState:
    return PodState("bench-g2-0", 50, unschedulable=unschedulable, requests=requests, claims=tuple(claims))


def test_a_claim_no_provisioner_answers_fails_the_deploy_with_the_claims_words(spec_of):
    d = in_phase(spec_of({"database": {"type": "voltdb"}}), "Deploying")
    d.tick(World(pods=[unplaced([claim(failures.CLAIM_GRACE_SECONDS - 5)])], largest_node=NODE))
    assert d.phase == "Deploying"  # a provisioner may still answer
    assert "pod bench-g2-0 not scheduled yet (claims data-bench-g2-0 not bound yet)" in d.status["message"]
    assert UNBOUND in d.status["message"]
    d.tick(World(pods=[unplaced([claim(failures.CLAIM_GRACE_SECONDS + 1)])], largest_node=NODE))
    message = failed_with(d, "StorageUnavailable")
    assert "claim data-bench-g2-0: no volume after 46s from the provisioner of StorageClass 'local-hostpath'" in message
    assert NO_PROVISIONER in message and UNBOUND in message
    assert d.condition("DatabaseReady")["reason"] == "StorageUnavailable"


def test_a_missing_storage_class_fails_at_once():
    placed = failures.scheduling([unplaced([claim(1, "fast-ssd", exists=False)])], NODE)
    assert placed.permanent and placed.reason == "StorageUnavailable"
    assert "claim data-bench-g2-0: StorageClass 'fast-ssd' does not exist" in placed.message


def test_a_claim_without_class_and_without_default_fails_after_the_grace():
    assert not failures.scheduling([unplaced([claim(10, "")])], NODE).permanent
    placed = failures.scheduling([unplaced([claim(60, "")])], NODE)
    assert placed.permanent and "names no StorageClass, the cluster has no default one" in placed.message


def test_a_claim_that_waits_for_its_pod_is_no_storage_problem():
    """WaitForFirstConsumer: no volume until the pod has a node; the pod's own cause decides."""
    busy = "0/1 nodes are available: 1 Insufficient cpu."
    placed = failures.scheduling([unplaced([claim(300, waits_for_pod=True)], busy, cpu=1.0)], NODE)
    assert not placed.permanent and busy in placed.message


def test_a_request_larger_than_any_node_fails_and_a_busy_node_waits(spec_of):
    busy = "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: ..."
    d = in_phase(spec_of({"database": {"type": "voltdb"}}), "Loading")
    d.tick(World(load=JobState(exists=True), pods=[unplaced(unschedulable=busy, cpu=1.5)], largest_node=NODE))
    assert d.phase == "Loading"
    assert d.status["message"].startswith(f"since {d.status['stageStartTime']}: waiting for load job bench-g2-loader")
    assert f"pod bench-g2-0 not scheduled yet; the scheduler: {busy}" in d.status["message"]
    d.tick(World(load=JobState(exists=True), pods=[unplaced(unschedulable=busy, cpu=64.0)], largest_node=NODE))
    message = failed_with(d, "Unschedulable")
    assert message.startswith("pod bench-g2-0 requests cpu 64, more than any node can allocate (largest: 2)")
    assert busy in message
    assert d.condition("Loaded")["reason"] == "Unschedulable"


def test_without_node_facts_no_request_is_judged_too_large():
    """The operator may lack the RBAC to list nodes: unknown never fails a run."""
    placed = failures.scheduling([unplaced(unschedulable="Insufficient memory", memory=1e15)], {})
    assert not placed.permanent


def test_scheduled_pods_and_bound_claims_are_no_problem():
    assert failures.scheduling([PodState("a", 5), unplaced([claim(500, phase="Bound")], "")], NODE) is None


REQUESTS_ABOVE_LIMITS = (
    'create Pod bench-g2-0 in StatefulSet bench-g2 failed error: Pod "bench-g2-0" is invalid: '
    'spec.containers[0].resources.requests: Invalid value: "64": must be less than or equal '
    "to cpu limit of 2"
)


def test_a_pod_the_api_server_refuses_to_create_fails_the_deploy_in_its_words(spec_of):
    d = in_phase(spec_of({"database": {"type": "voltdb"}}), "Deploying")
    d.tick(World(failed_creates=[REQUESTS_ABOVE_LIMITS]))
    message = failed_with(d, "PodRefused")
    assert message == f"the cluster refuses to create the run's pods: {REQUESTS_ABOVE_LIMITS}"
    assert d.condition("DatabaseReady")["reason"] == "PodRefused"


def test_an_exceeded_quota_waits_but_a_forbidding_policy_does_not():
    quota = 'Error creating: pods "bench-g2-loader-x" is forbidden: exceeded quota: compute, requested: cpu=1'
    assert failures.creation_refused([quota]) is None
    policy = 'Error creating: pods "bench-g2-loader-x" is forbidden: violates PodSecurity "restricted:latest"'
    assert failures.creation_refused([quota, policy]).endswith(policy)
