#!/usr/bin/env python3
"""Build a docker-archive image tarball (importable with `ctr -n k8s.io images import`) from a
rootfs directory, with no registry and no container engine. One layer; file owners are kept
(numeric ids) so a non-root image user can own its home directory.
usage: mkimage.py NAME:TAG ROOTFS_DIR OUT.tar [--entrypoint JSON] [--cmd JSON] [--env K=V ...]
                  [--user UID[:GID]] [--workdir DIR] [--label K=V ...]"""

import argparse
import hashlib
import io
import json
import os
import tarfile
import tempfile

p = argparse.ArgumentParser()
p.add_argument("ref")
p.add_argument("rootfs")
p.add_argument("out")
p.add_argument("--entrypoint", default="null")
p.add_argument("--cmd", default="null")
p.add_argument("--env", action="append", default=[])
p.add_argument("--user", default="")
p.add_argument("--workdir", default="/")
p.add_argument("--label", action="append", default=[])
a = p.parse_args()
tmp = tempfile.NamedTemporaryFile(dir=os.path.dirname(os.path.abspath(a.out)), delete=False)
with tarfile.open(fileobj=tmp, mode="w", format=tarfile.PAX_FORMAT) as t:
    for root, dirs, files in os.walk(a.rootfs):
        dirs.sort()
        for n in sorted(dirs) + sorted(files):
            full = os.path.join(root, n)
            ti = t.gettarinfo(full, os.path.relpath(full, a.rootfs))
            if ti is None:  # sockets
                continue
            ti.uname = ti.gname = ""  # numeric owners: the host's user names mean nothing in the image
            ti.mtime = 0  # same rootfs, same layer digest
            if ti.isfile():
                with open(full, "rb") as f:
                    t.addfile(ti, f)
            else:
                t.addfile(ti)
tmp.close()
h = hashlib.sha256()
with open(tmp.name, "rb") as f:
    for chunk in iter(lambda: f.read(1 << 20), b""):
        h.update(chunk)
diff = "sha256:" + h.hexdigest()
env = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
env = [e for e in env if not any(x.startswith("PATH=") for x in a.env)] + a.env
config = {
    "Env": env,
    "Entrypoint": json.loads(a.entrypoint),
    "Cmd": json.loads(a.cmd),
    "WorkingDir": a.workdir,
    "Labels": dict(x.split("=", 1) for x in a.label),
}
if a.user:
    config["User"] = a.user
cfg = {
    "architecture": "amd64",
    "os": "linux",
    "created": "1970-01-01T00:00:00Z",
    "config": config,
    "rootfs": {"type": "layers", "diff_ids": [diff]},
    "history": [{"created": "1970-01-01T00:00:00Z", "created_by": "mkimage.py"}],
}
cb = json.dumps(cfg).encode()
cname = hashlib.sha256(cb).hexdigest() + ".json"
lname = diff[7:] + "/layer.tar"
man = json.dumps([{"Config": cname, "RepoTags": [a.ref], "Layers": [lname]}]).encode()


def add(t, name, data):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    t.addfile(ti, io.BytesIO(data))


with tarfile.open(a.out + ".part", "w") as t:
    add(t, cname, cb)
    t.add(tmp.name, lname)
    add(t, "manifest.json", man)
os.unlink(tmp.name)
os.replace(a.out + ".part", a.out)
print(a.out, a.ref, diff)
