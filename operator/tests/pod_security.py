"""The Pod Security Standards' `restricted` profile (which includes `baseline`) as a pure check of
a pod spec, written from https://kubernetes.io/docs/concepts/security/pod-security-standards/
(the controls as of Kubernetes 1.33; the PodSecurity admission plugin enforces the same on a
namespace labelled pod-security.kubernetes.io/enforce=restricted). `violations` names every
field that breaks a control; `pod_specs` finds the pod specs in rendered manifests.
"""

from __future__ import annotations

from collections.abc import Iterator

# baseline: capabilities a container may add
BASELINE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
# baseline: the "safe" sysctls
SAFE_SYSCTLS = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
    }
)
SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"})
APPARMOR_TYPES = frozenset({"RuntimeDefault", "Localhost"})
# restricted: a seccomp profile of one of these types, the container's or else the pod's
CONFINED = frozenset({"RuntimeDefault", "Localhost"})
# restricted: the only volume types
RESTRICTED_VOLUMES = frozenset(
    {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}
)
# the kinds whose spec holds a pod template, and where
TEMPLATE_PATHS = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}


def pod_specs(docs: list[dict]) -> Iterator[tuple[str, dict]]:
    """(Kind/name, pod spec) of every manifest that makes pods."""
    for doc in docs:
        path = TEMPLATE_PATHS.get(doc.get("kind", ""))
        if path is None:
            continue
        node = doc
        for key in path:
            node = node[key]
        yield f"{doc['kind']}/{doc['metadata']['name']}", node


def _containers(pod: dict) -> Iterator[tuple[str, dict]]:
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for i, c in enumerate(pod.get(field) or []):
            yield f"spec.{field}[{i}]({c.get('name', '')})", c


def violations(pod: dict) -> list[str]:
    """Every field of `pod` (a PodSpec) that breaks a baseline or restricted control."""
    out: list[str] = []
    psc = pod.get("securityContext") or {}
    containers = list(_containers(pod))

    # ---- baseline
    for host in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(host):
            out.append(f"spec.{host}: must be unset or false")
    contexts = [("spec.securityContext", psc)] + [
        (f"{p}.securityContext", c.get("securityContext") or {}) for p, c in containers
    ]
    for where, sc in contexts:
        if (sc.get("windowsOptions") or {}).get("hostProcess"):
            out.append(f"{where}.windowsOptions.hostProcess: must be unset or false")
        selinux = sc.get("seLinuxOptions") or {}
        if selinux.get("type", "") not in SELINUX_TYPES:
            out.append(f"{where}.seLinuxOptions.type: {selinux['type']!r} is not allowed")
        for key in ("user", "role"):
            if selinux.get(key):
                out.append(f"{where}.seLinuxOptions.{key}: must be unset")
        apparmor = sc.get("appArmorProfile")
        if apparmor and apparmor.get("type") not in APPARMOR_TYPES:
            out.append(f"{where}.appArmorProfile.type: {apparmor.get('type')!r} is not allowed")
        if (sc.get("seccompProfile") or {}).get("type") == "Unconfined":
            out.append(f"{where}.seccompProfile.type: Unconfined is not allowed")
        if sc.get("runAsUser") == 0:
            out.append(f"{where}.runAsUser: must not be 0")
    for path, c in containers:
        sc = c.get("securityContext") or {}
        if sc.get("privileged"):
            out.append(f"{path}.securityContext.privileged: must be unset or false")
        if sc.get("procMount", "Default") != "Default":
            out.append(f"{path}.securityContext.procMount: must be Default")
        for port in c.get("ports") or []:
            if port.get("hostPort"):
                out.append(f"{path}.ports: hostPort {port['hostPort']} is not allowed")
        # restricted: allowPrivilegeEscalation false, capabilities drop ALL, add NET_BIND_SERVICE only
        if sc.get("allowPrivilegeEscalation") is not False:
            out.append(f"{path}.securityContext.allowPrivilegeEscalation: must be false")
        caps = sc.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            out.append(f"{path}.securityContext.capabilities.drop: must include ALL")
        added = set(caps.get("add") or []) - {"NET_BIND_SERVICE"}
        if added:
            out.append(f"{path}.securityContext.capabilities.add: {sorted(added)} not allowed (only NET_BIND_SERVICE)")
        # restricted: runAsNonRoot true here or on the pod, never false here
        non_root = sc.get("runAsNonRoot")
        if non_root is False or (non_root is None and psc.get("runAsNonRoot") is not True):
            out.append(f"{path}.securityContext.runAsNonRoot: must be true (here or on the pod)")
        # restricted: seccomp RuntimeDefault or Localhost here or on the pod
        own = (sc.get("seccompProfile") or {}).get("type")
        if own not in CONFINED and (own is not None or (psc.get("seccompProfile") or {}).get("type") not in CONFINED):
            out.append(
                f"{path}.securityContext.seccompProfile.type: must be RuntimeDefault or Localhost (or the pod's)"
            )
    for sysctl in psc.get("sysctls") or []:
        if sysctl.get("name") not in SAFE_SYSCTLS:
            out.append(f"spec.securityContext.sysctls: {sysctl.get('name')} is not a safe sysctl")
    # apparmor through the (pre-1.30) annotations is judged by the admission plugin on metadata: not here

    # ---- restricted: volume types (hostPath is baseline's, and not in this list either)
    for v in pod.get("volumes") or []:
        kinds = set(v) - {"name"}
        if not kinds <= RESTRICTED_VOLUMES:
            out.append(f"spec.volumes[{v.get('name')}]: {sorted(kinds - RESTRICTED_VOLUMES)} not allowed")
    return out
