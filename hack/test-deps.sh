#!/usr/bin/env bash
# Debian packages the unit tests run for real (only what is missing): Chromium to render `tpcc
# report`. (The Argo CD health checks' Lua 5.1 and 5.4 come with the lupa wheel.)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
pkgs=(chromium fonts-dejavu-core) missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
[ ${#missing[@]} = 0 ] && exit 0
sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
log "installing ${missing[*]} (Debian)"
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 \
  || { $sudo apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q \
       --no-install-recommends "${missing[@]}" >&2; } \
  || { echo "test-deps.sh: apt-get install ${missing[*]} failed" >&2; exit 1; }
