#!/usr/bin/env bash
# Creates .venv with the runner and the operator installed (editable) and the test tools: exactly
# requirements.lock, every file checked against the lock's hashes (hack/lock.sh writes it).
# Cheap when nothing changed: the inputs' hash is kept in the venv, so hack/local-k8s.sh
# (its storage provisioner runs from this venv) and hack/demo.sh can call it every time.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
LOCK=$ROOT/requirements.lock
# the runner's C extension too: the editable install compiles it (setup.py)
want=$(cat "$ROOT/runner-image/pyproject.toml" "$ROOT/runner-image/contract/pyproject.toml" "$ROOT/operator/pyproject.toml" \
  "$LOCK" "$0" "$ROOT/runner-image/setup.py" "$ROOT/runner-image/tpcc_runner/ycsb/_voltloop.c" \
  | sha256sum | cut -c1-16)
stamp=$VENV/.tpcc-inputs
if [ -x "$VENV/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then exit 0; fi
t=$(date +%s)
if [ ! -x "$VENV/bin/python" ]; then python3 -m venv "$VENV"; fi
# The lock holds the whole closure (Apache Otava's without its dependencies: runner-image/pyproject.toml
# says why), so --no-deps: nothing comes in that the lock did not pin and hash, pip itself included.
"$VENV/bin/pip" install -q --disable-pip-version-check --require-hashes --no-deps -r "$LOCK"
# The local packages, editable (pip checks no hashes for those), built by the lock's setuptools
# rather than one fetched into an isolated build env; their dependencies are the lock's.
# (setuptools warns of every editable install, in-process now: silenced)
PYTHONWARNINGS="ignore:Editable installation" \
  "$VENV/bin/pip" install -q --no-deps --no-build-isolation -e "$ROOT/runner-image/contract" -e "$ROOT/runner-image" -e "$ROOT/operator"
echo "$want" >"$stamp"
log "python env ready: $VENV ($(( $(date +%s) - t )) s)"
