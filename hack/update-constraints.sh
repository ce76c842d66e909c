#!/usr/bin/env bash
# Rewrites constraints.txt with the newest versions the pyproject.toml files allow: hack/python-env.sh
# without constraints into a fresh venv, then that venv's pip freeze (pip itself and the editable
# runner and operator left out). Review the diff and run hack/test.sh before committing it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
fresh=$(mktemp -d)
trap 'rm -rf "$fresh"' EXIT
TPCC_VENV=$fresh/venv TPCC_CONSTRAINTS=/dev/null "$ROOT/hack/python-env.sh"
{ grep '^#' "$ROOT/constraints.txt"; "$fresh/venv/bin/pip" freeze --all --exclude-editable --exclude pip; } \
  >"$fresh/constraints.txt"
mv "$fresh/constraints.txt" "$ROOT/constraints.txt"
log "constraints.txt: $(grep -vc '^#' "$ROOT/constraints.txt") packages pinned"
