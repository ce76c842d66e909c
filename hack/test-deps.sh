#!/usr/bin/env bash
# Debian packages the unit tests run for real (only what is missing): Lua 5.1 (the semantics of
# Argo CD's gopher-lua) and 5.4 for the Argo CD health checks, Chromium to render `tpcc report`.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
pkgs=(lua5.1 lua5.4 chromium fonts-dejavu-core) missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
[ ${#missing[@]} = 0 ] && exit 0
sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
log "installing ${missing[*]} (Debian)"
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 \
  || { $sudo apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q \
       --no-install-recommends "${missing[@]}" >&2; } \
  || { echo "test-deps.sh: apt-get install ${missing[*]} failed" >&2; exit 1; }
