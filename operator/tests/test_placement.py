"""Where a run's pods go (issue 41 §1): database.deploy.antiAffinity reaches the chart as its
antiAffinity value, the pods of the runner image prefer nodes without a member of the run's
database, and status.placement records the node each member and each runner pod was on."""

from __future__ import annotations

import pytest
from test_phases import RUN, Driver
from test_plan import SETTINGS
from tpcc_operator import failures, plan, runner_jobs
from tpcc_operator.placement import Placement, PodNode
from tpcc_operator.stages.machine import JobState, World


def deployed(spec_of, database: str, **deploy):
    return spec_of({"database": {"type": database, "deploy": {"replicas": 3, **deploy}}, "runners": {"parallelism": 2}})


@pytest.mark.parametrize("database", ["voltdb", "mongodb"])
@pytest.mark.parametrize("asked, chart_value", [("preferred", "soft"), ("required", "hard"), ("none", "none")])
def test_the_spec_s_anti_affinity_becomes_the_chart_s_over_the_user_s_values(spec_of, database, asked, chart_value):
    spec = deployed(spec_of, database, antiAffinity=asked, values={"antiAffinity": "bogus"})
    assert plan.helm_release(RUN, spec, SETTINGS).values["antiAffinity"] == chart_value


@pytest.mark.parametrize("database", ["voltdb", "mongodb"])
def test_without_it_the_chart_s_values_decide(spec_of, database):
    assert "antiAffinity" not in plan.helm_release(RUN, deployed(spec_of, database), SETTINGS).values
    spec = deployed(spec_of, database, values={"antiAffinity": "hard"})
    assert plan.helm_release(RUN, spec, SETTINGS).values["antiAffinity"] == "hard"


def test_the_voltdb_release_keeps_its_kfactor_beside_it(spec_of):
    values = plan.helm_release(RUN, deployed(spec_of, "voltdb", kSafety=1, antiAffinity="required"), SETTINGS).values
    assert (values["kfactor"], values["antiAffinity"]) == (1, "hard")


def test_every_pod_of_the_runner_image_prefers_nodes_without_a_database_member(spec_of):
    spec = deployed(spec_of, "voltdb")
    database_labels = plan.helm_release(RUN, spec, SETTINGS).values["podLabels"]
    for job in (
        runner_jobs.load_job(RUN, spec, SETTINGS),
        runner_jobs.run_job(RUN, spec, SETTINGS),
        runner_jobs.check_job(RUN, spec, SETTINGS),
    ):
        anti = job["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
        (preferred,) = anti.pop("preferredDuringSchedulingIgnoredDuringExecution")
        assert anti == {}  # never required: a cluster of one node still runs them
        assert preferred["weight"] == 100
        term = preferred["podAffinityTerm"]
        assert term["topologyKey"] == "kubernetes.io/hostname"
        # the term selects the pods of this run's release: labels the chart gives every member
        assert term["labelSelector"]["matchLabels"].items() <= database_labels.items()
        assert term["labelSelector"]["matchLabels"][plan.LABEL_GENERATION] == str(RUN.generation)


def test_an_external_database_s_runners_go_anywhere(spec_of):
    spec = spec_of({"database": {"type": "voltdb", "external": {"endpoints": ["voltdb.example:21212"]}}})
    assert "affinity" not in runner_jobs.run_job(RUN, spec, SETTINGS)["spec"]["template"]["spec"]


def pod(name: str, node: str) -> failures.PodState:
    return failures.PodState(name, 10.0, node=node)


MEMBERS = [pod("bench-g2-2", "node-3"), pod("bench-g2-0", "node-1"), pod("bench-g2-1", "node-2")]


def test_status_records_the_members_nodes_when_ready_and_the_runners_at_the_barrier(document_of):
    d = Driver(document_of({"database": {"type": "voltdb", "deploy": {"replicas": 3}}, "runners": {"parallelism": 2}}))
    d.tick(), d.tick(), d.tick()  # Pending, Deploying, installed
    d.tick(World(database_ready=2, pods=MEMBERS))
    assert "placement" not in d.status  # not ready yet: nothing recorded
    d.tick(World(database_ready=3, pods=MEMBERS))
    members = (PodNode(pod="bench-g2-0", node="node-1"), PodNode(pod="bench-g2-1", node="node-2"))
    members += (PodNode(pod="bench-g2-2", node="node-3"),)
    assert d.phase == "Loading" and Placement.in_status(d.status, "placement") == Placement(database=members)
    d.tick(World())
    d.tick(World(load=JobState(exists=True, succeeded=True)))
    assert d.phase == "Running"
    runners = [pod("bench-g2-runner-1-b", "node-4"), pod("bench-g2-runner-0-a", "node-2")]
    d.tick(World(runner=JobState(exists=True), runners_ready=1, pods=runners))
    assert Placement.in_status(d.status, "placement").runners is None  # the barrier holds
    d.tick(World(runner=JobState(exists=True), runners_ready=2, pods=runners))
    placed = Placement.in_status(d.status, "placement")
    assert placed.database == members
    assert placed.runners == (
        PodNode(pod="bench-g2-runner-0-a", node="node-2"),
        PodNode(pod="bench-g2-runner-1-b", node="node-4"),
    )
    assert placed.shared_nodes == ("node-2",)
    (ready,) = [e for e in d.events if e.reason == "RunnersReady"]
    assert "beside database members on node-2" in ready.message
    assert d.status["placement"]["runners"][1] == {"pod": "bench-g2-runner-1-b", "node": "node-4"}


def test_runners_on_nodes_of_their_own_are_not_called_beside_the_database():
    placed = Placement(database=(PodNode(pod="db-0", node="n1"),), runners=(PodNode(pod="r-0", node="n2"),))
    assert placed.shared_nodes == ()
    # a pod the scheduler had not placed shares no node
    unplaced = Placement(database=(PodNode(pod="db-0", node=""),), runners=(PodNode(pod="r-0", node=""),))
    assert unplaced.shared_nodes == ()
