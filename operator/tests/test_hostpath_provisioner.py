"""hack/k8s/hostpath_provisioner.py's decisions: which claims get a volume, which volumes go."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from crd_schema import ROOT

_spec = importlib.util.spec_from_file_location("hostpath_provisioner", ROOT / "hack/k8s/hostpath_provisioner.py")
hp = sys.modules["hostpath_provisioner"] = importlib.util.module_from_spec(_spec)  # dataclasses look it up
_spec.loader.exec_module(hp)

CLASSES = {"local-hostpath"}


def claim(name="data-db-0", cls="local-hostpath", bound=False, uid="0123456789ab"):
    return hp.Claim("ns", name, uid, cls, "4Gi", ("ReadWriteOnce",), bound)


def test_an_unbound_claim_of_our_class_gets_one_volume_bound_to_it():
    plan = hp.decide(CLASSES, [claim(), claim("other", cls="fast"), claim("done", bound=True)], [])
    assert plan.create == [claim()] and plan.delete == []
    pv = hp.volume_manifest(claim(), Path("/v"))
    assert pv["spec"]["claimRef"] == {"namespace": "ns", "name": "data-db-0", "uid": "0123456789ab"}
    assert pv["spec"]["hostPath"]["path"] == "/v/ns-data-db-0-01234567"
    assert pv["spec"]["capacity"] == {"storage": "4Gi"} and pv["spec"]["storageClassName"] == "local-hostpath"
    # the volume exists but is not bound yet: not made twice
    made = hp.Volume(hp.volume_name(claim()), hp.PROVISIONER, "Available", "/v/x")
    assert hp.decide(CLASSES, [claim()], [made]).create == []


def test_only_our_released_volumes_are_deleted():
    ours = hp.Volume("pvc-1", hp.PROVISIONER, "Released", "/v/a")
    bound = hp.Volume("pvc-2", hp.PROVISIONER, "Bound", "/v/b")
    foreign = hp.Volume("pv-3", "other.dev/csi", "Released", "/v/c")
    assert hp.decide(CLASSES, [], [ours, bound, foreign]).delete == [ours]
