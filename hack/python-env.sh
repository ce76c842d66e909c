#!/usr/bin/env bash
# Creates .venv with the runner and the operator installed (editable) and the test tools.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
if [ ! -x "$VENV/bin/python" ]; then python3 -m venv "$VENV"; fi
"$VENV/bin/pip" install -q --upgrade pip >/dev/null
"$VENV/bin/pip" install -q -e "$ROOT/runner-image[test,foundationdb,changepoints]"
if [ -f "$ROOT/operator/pyproject.toml" ]; then "$VENV/bin/pip" install -q -e "$ROOT/operator[test]"; fi
# Apache Otava without its dependencies (why: runner-image/pyproject.toml)
"$VENV/bin/pip" install -q --no-deps "$(grep -o 'apache-otava==[^"]*' "$ROOT/runner-image/pyproject.toml")"
log "python env ready: $VENV"
