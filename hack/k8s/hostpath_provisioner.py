"""A dynamic provisioner for the local single-node cluster (hack/local-k8s.sh starts it on the
host): a PersistentVolumeClaim of StorageClass `local-hostpath` (the default class there) gets a
hostPath PersistentVolume in its own directory under --root; a Released volume of that class
is deleted, directory and all. What a cloud's CSI driver does, for one machine, so the charts'
volumeClaimTemplates work here as on a real cluster.

  hostpath_provisioner.py --root DIR [--interval 2] [--once] [--ready-file FILE]

--ready-file is touched after every pass that reached the API server, so the script that
started the provisioner can tell a working one from one that only started (hack/local-k8s.sh).

Directories are mode 0777: the kubelet applies no fsGroup to hostPath volumes, and the database
pods run as non-root users of their own.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import kubernetes
from kubernetes.client.rest import ApiException

PROVISIONER = "tpcc.dev/hostpath"
STORAGE_CLASS = "local-hostpath"
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
log = logging.getLogger("hostpath-provisioner")


@dataclass(frozen=True)
class Claim:
    namespace: str
    name: str
    uid: str
    storage_class: str
    size: str
    access_modes: tuple[str, ...]
    bound: bool  # has a volume (spec.volumeName)


@dataclass(frozen=True)
class Volume:
    name: str
    provisioned_by: str
    phase: str
    path: str


@dataclass(frozen=True)
class Plan:
    create: list[Claim]
    delete: list[Volume]


def volume_name(claim: Claim) -> str:
    return f"pvc-{claim.uid}"


def decide(classes: set[str], claims: list[Claim], volumes: list[Volume]) -> Plan:
    """Volumes to make for unbound claims of our classes that have none yet, and our volumes
    whose claim is gone (Released) or that failed to be reclaimed."""
    existing = {v.name for v in volumes}
    create = [c for c in claims if c.storage_class in classes and not c.bound and volume_name(c) not in existing]
    delete = [v for v in volumes if v.provisioned_by == PROVISIONER and v.phase in ("Released", "Failed")]
    return Plan(create, delete)


def volume_manifest(claim: Claim, root: Path) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": volume_name(claim), "annotations": {PROVISIONED_BY: PROVISIONER}},
        "spec": {
            "capacity": {"storage": claim.size},
            "accessModes": list(claim.access_modes),
            "persistentVolumeReclaimPolicy": "Delete",
            "storageClassName": claim.storage_class,
            "claimRef": {"namespace": claim.namespace, "name": claim.name, "uid": claim.uid},
            "hostPath": {"path": str(root / f"{claim.namespace}-{claim.name}-{claim.uid[:8]}"), "type": "Directory"},
        },
    }


def observe(core, storage) -> tuple[set[str], list[Claim], list[Volume]]:
    classes = {sc.metadata.name for sc in storage.list_storage_class().items if sc.provisioner == PROVISIONER}
    claims = [
        Claim(
            c.metadata.namespace,
            c.metadata.name,
            c.metadata.uid,
            c.spec.storage_class_name or "",
            (c.spec.resources.requests or {}).get("storage", "1Gi"),
            tuple(c.spec.access_modes or ["ReadWriteOnce"]),
            bool(c.spec.volume_name),
        )
        for c in core.list_persistent_volume_claim_for_all_namespaces().items
    ]
    volumes = [
        Volume(
            v.metadata.name,
            (v.metadata.annotations or {}).get(PROVISIONED_BY, ""),
            v.status.phase or "",
            v.spec.host_path.path if v.spec.host_path else "",
        )
        for v in core.list_persistent_volume().items
    ]
    return classes, claims, volumes


def act(core, plan: Plan, root: Path) -> None:
    for claim in plan.create:
        manifest = volume_manifest(claim, root)
        path = Path(manifest["spec"]["hostPath"]["path"])
        path.mkdir(parents=True, exist_ok=True)
        path.chmod(0o777)
        try:
            core.create_persistent_volume(manifest)
            log.info(
                "created %s (%s) for %s/%s at %s", volume_name(claim), claim.size, claim.namespace, claim.name, path
            )
        except ApiException as e:
            if e.status != 409:
                raise
    for volume in plan.delete:
        path = Path(volume.path)
        if path.is_relative_to(root):  # never remove anything outside our root
            shutil.rmtree(path, ignore_errors=True)
        try:
            core.delete_persistent_volume(volume.name)
            log.info("deleted %s and %s", volume.name, path)
        except ApiException as e:
            if e.status != 404:
                raise


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--root", type=Path, required=True)
    p.add_argument("--interval", type=float, default=2.0)
    p.add_argument("--once", action="store_true")
    p.add_argument("--ready-file", type=Path)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    kubernetes.config.load_kube_config(os.environ.get("KUBECONFIG"))
    core, storage = kubernetes.client.CoreV1Api(), kubernetes.client.StorageV1Api()
    root = args.root.resolve()
    root.mkdir(parents=True, exist_ok=True)
    while True:
        try:
            act(core, decide(*observe(core, storage)), root)
            if args.ready_file:
                args.ready_file.touch()
        except (ApiException, OSError, kubernetes.config.ConfigException) as e:
            log.warning("%s", str(e).splitlines()[0])
        if args.once:
            return 0
        time.sleep(args.interval)


if __name__ == "__main__":
    raise SystemExit(main())
