#!/usr/bin/env bash
# Creates .venv with the runner and the operator installed (editable) and the test tools.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
if [ ! -x "$VENV/bin/python" ]; then python3 -m venv "$VENV"; fi
"$VENV/bin/pip" install -q --upgrade pip >/dev/null
"$VENV/bin/pip" install -q -e "$ROOT/runner-image[test,foundationdb]"
if [ -f "$ROOT/operator/pyproject.toml" ]; then "$VENV/bin/pip" install -q -e "$ROOT/operator[test]"; fi
log "python env ready: $VENV"
