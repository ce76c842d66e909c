#!/usr/bin/env bash
# Creates .venv with the runner and the operator installed (editable) and the test tools, every
# package at constraints.txt's version (TPCC_CONSTRAINTS=/dev/null: the newest allowed, to update it).
# Cheap when nothing changed: the inputs' hash is kept in the venv, so hack/local-k8s.sh
# (its storage provisioner runs from this venv) and hack/demo.sh can call it every time.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
CONSTRAINTS=${TPCC_CONSTRAINTS:-$ROOT/constraints.txt}
NO_DEPS=$ROOT/runner-image/requirements-no-deps.txt
# the runner's C extension too: the editable install compiles it (setup.py)
want=$(cat "$ROOT/runner-image/pyproject.toml" "$ROOT/operator/pyproject.toml" "$CONSTRAINTS" "$NO_DEPS" "$0" \
  "$ROOT/runner-image/setup.py" "$ROOT/runner-image/tpcc_runner/ycsb/_voltloop.c" \
  | sha256sum | cut -c1-16)
stamp=$VENV/.tpcc-inputs
if [ -x "$VENV/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then exit 0; fi
t=$(date +%s)
if [ ! -x "$VENV/bin/python" ]; then python3 -m venv "$VENV"; fi
"$VENV/bin/pip" install -q --upgrade pip >/dev/null
"$VENV/bin/pip" install -q -c "$CONSTRAINTS" -e "$ROOT/runner-image[test,foundationdb,changepoints]"
"$VENV/bin/pip" install -q -c "$CONSTRAINTS" -e "$ROOT/operator[test]"
# Apache Otava without its dependencies (why: runner-image/pyproject.toml)
"$VENV/bin/pip" install -q -c "$CONSTRAINTS" --no-deps -r "$NO_DEPS"
echo "$want" >"$stamp"
log "python env ready: $VENV ($(( $(date +%s) - t )) s)"
