#!/usr/bin/env bash
# images.sh - container images for the local cluster, built with no registry and no container engine:
# a Debian rootfs from debootstrap, files added with chroot, packed by hack/k8s/mkimage.py and imported
# into containerd's k8s.io namespace (pods use imagePullPolicy: Never or IfNotPresent).
#
#   pause                 local/pause:1               pod sandbox (static C binary)
#   base                  local/debian-python:bookworm   Debian bookworm minbase + python3 (uid 1000 "app")
#   runner                local/tpcc-runner:dev       base + venv /opt/tpcc with runner-image, its contract (+ operator)
#   voltdb                local/voltdb:10.1.1         base + openjdk-17-jre-headless + VoltDB jars in /opt/voltdb
#   secantus              local/secantus:dev          base + venv /opt/secantus with the SecantusDB the tests pin
#                                                     (runner-image/pyproject.toml) + hack/secantus/member.py
#   import                import every built tarball not yet in containerd (hack/local-k8s.sh node runs it)
# Each image goes into every node's containerd (node 1's and those of nodes 2..N, hack/k8s/nodes.sh).
#
# usage: images.sh [pause|base|runner|voltdb|secantus|import|all]...   (default: all = pause base runner voltdb secantus)
# Each image's inputs are hashed; an image whose hash is unchanged is neither rebuilt nor re-imported
# (the hash is the image label tpcc.inputs and the stamp file $IMAGES/NAME.inputs).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$ROOT/hack/k8s/env.sh"

SUITE=bookworm
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
MKIMAGE=$ROOT/hack/k8s/mkimage.py
HASH_PYCS=$ROOT/hack/k8s/hash-pycs.py
SELF=$ROOT/hack/images.sh
BASE_TGZ=$IMAGES/rootfs-$SUITE-python.tar.gz
JRE_PKGS="openjdk-17-jre-headless procps" # VoltDB runs ps to report its memory use
JRE_TGZ=$IMAGES/rootfs-$SUITE-python-jre-$(echo "$JRE_PKGS" | sha256sum | cut -c1-8).tar.gz
SCRATCH=$RUN/image-build
PIP_CACHE=$TPCC_CACHE/pip
VOLTDB_CACHE=$TPCC_CACHE/voltdb
APP_UID=1000

now() { date +%s; }
sha() { sha256sum | cut -c1-16; }
# the files of a tree that go into an image (caches, build output, logs and tests left out), NUL-separated
# and relative to the tree's parent directory: what tree_hash hashes is what runner() copies
tree_files() {
  ( cd "$(dirname "$1")" && find "$(basename "$1")" -type f ! -path '*/__pycache__/*' ! -path '*.egg-info/*' \
      ! -path '*/.pytest_cache/*' ! -path '*/.mypy_cache/*' ! -path '*/.ruff_cache/*' ! -path '*/tests/*' \
      ! -path '*/build/*' ! -name '*.log' ! -name '*.so' -print0 | LC_ALL=C sort -z )
}
# hash of the contents and relative names of tree_files of the given dirs, of this script and of
# mkimage.py: the same inputs give the same hash in any clone
tree_hash() {
  local d
  { for d in "$@"; do tree_files "$d" | ( cd "$(dirname "$d")" && xargs -0r sha256sum ); done
    script_hash; } | sha
}
script_hash() { cat "$SELF" "$MKIMAGE" "$HASH_PYCS" | sha; }
fresh_rootfs() { # dir tarball: an empty dir with the tarball unpacked
  rm -rf "$1"; mkdir -p "$1"; tar -C "$1" --numeric-owner -xzf "$2"
}
# run a command chrooted in a rootfs with /proc, the host's DNS and CA bundle (this network may intercept
# TLS with its own CA) and the pip cache, in a private mount namespace: the mounts vanish with the command
in_root() { # rootfs command...
  local r=$1; shift
  cp /etc/resolv.conf "$r/etc/resolv.conf"
  mkdir -p "$PIP_CACHE" "$r/root/.cache/pip"
  unshare --mount --fork -- sh -c 'mount -t proc proc "$1/proc" && mount --bind "$2" "$1/root/.cache/pip" &&
    mount --bind /etc/ssl/certs/ca-certificates.crt "$1/etc/ssl/certs/ca-certificates.crt" && shift 2 &&
    exec env -u PIP_FIND_LINKS PIP_CERT=/etc/ssl/certs/ca-certificates.crt chroot "$@"' sh "$r" "$PIP_CACHE" "$r" "$@"
}
finish_rootfs() { # rootfs: leave no build traces; .pyc files that stay valid with mkimage.py's zero mtimes
  if [ -x "$1/usr/bin/python3" ]; then
    install -m 644 "$HASH_PYCS" "$1/tmp/hash-pycs.py"
    in_root "$1" python3 /tmp/hash-pycs.py /usr/lib /opt >/dev/null
    rm -f "$1/tmp/hash-pycs.py"
  fi
  rm -rf "$1/tmp/src" "$1/var/lib/apt/lists/"* "$1/var/cache/apt/"*.bin "$1/var/cache/apt/archives/"*.deb "$1/root/.cache"
  printf 'nameserver 127.0.0.1\n' >"$1/etc/resolv.conf" # the kubelet mounts the real one
}
import_image() { # name ref: load $IMAGES/name.tar into each node's containerd that lacks this version
  # (no cluster yet is not an error here: 'hack/local-k8s.sh node' imports what is built)
  if [ ! -S "$CSOCK" ] || ! ctr -a "$CSOCK" version >/dev/null 2>&1; then
    log "images: containerd not running; $2 will be imported by 'hack/local-k8s.sh node'"; return
  fi
  import_packed images "$IMAGES/$1.tar" "$2" "$(cat "$IMAGES/$1.inputs")"
}
built() { # name hash: is $IMAGES/name.tar built from these inputs?
  [ -f "$IMAGES/$1.tar" ] && [ "$(cat "$IMAGES/$1.inputs" 2>/dev/null)" = "$2" ]
}
pack() { # name ref rootfs hash mkimage-options...
  local name=$1 ref=$2 r=$3 h=$4; shift 4
  python3 "$MKIMAGE" "$ref" "$r" "$IMAGES/$name.tar" --label "tpcc.inputs=$h" "$@" >/dev/null
  echo "$h" >"$IMAGES/$name.inputs"
  rm -rf "$r"
}

pause() {
  local h; h=$({ cat "$ROOT/hack/k8s/pause.c"; script_hash; } | sha)
  if ! built pause "$h"; then
    local r=$SCRATCH/pause; rm -rf "$r"; mkdir -p "$r"
    gcc -Os -static -o "$r/pause" "$ROOT/hack/k8s/pause.c" && strip "$r/pause"
    pack pause local/pause:1 "$r" "$h" --entrypoint '["/pause"]' --user 65535
  fi
  import_image pause local/pause:1
}

base_rootfs() { # debootstrap once; the tarball is cached in $TPCC_CACHE
  [ -f "$BASE_TGZ" ] && return
  local t r=$SCRATCH/debootstrap; t=$(now)
  rm -rf "$r"; mkdir -p "$r"
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates,netbase \
    "$SUITE" "$r" "$MIRROR" >"$LOGS/debootstrap.log" 2>&1 || { tail -20 "$LOGS/debootstrap.log" >&2; return 1; }
  chroot "$r" useradd --uid $APP_UID --user-group --create-home --shell /bin/sh app
  finish_rootfs "$r"
  tar -C "$r" --numeric-owner -czf "$BASE_TGZ.part" . && mv "$BASE_TGZ.part" "$BASE_TGZ"
  rm -rf "$r"
  log "images: debootstrap $SUITE + python3 in $(( $(now) - t ))s -> $BASE_TGZ ($(du -h "$BASE_TGZ" | cut -f1))"
}

base() {
  base_rootfs
  local h; h=$({ sha <"$BASE_TGZ"; script_hash; } | sha)
  if ! built base "$h"; then
    local r=$SCRATCH/base; fresh_rootfs "$r" "$BASE_TGZ"; finish_rootfs "$r"
    pack base local/debian-python:bookworm "$r" "$h" --cmd '["python3"]' --user $APP_UID --workdir /home/app
  fi
  import_image base local/debian-python:bookworm
}

compiled_loop() { # rootfs: the runner's compiled YCSB loop (tpcc_runner/ycsb/_voltloop.c), built here
  # with the host's gcc against the host's headers of the image's Python (Debian's, the same
  # release): the image has no compiler, and pip's build of it there was skipped (optional)
  local r=$1 py suffix site
  read -r py suffix site < <(in_root "$r" /opt/tpcc/bin/python -c \
    'import sys, sysconfig; print(f"python{sys.version_info[0]}.{sys.version_info[1]}", sysconfig.get_config_var("EXT_SUFFIX"), sysconfig.get_path("platlib"))')
  if [ ! -f "/usr/include/$py/Python.h" ]; then
    log "images: WARNING no /usr/include/$py/Python.h here: the runner image runs YCSB on VoltDB with the Python loop"
    return 0
  fi
  gcc -O2 -shared -fPIC -I"/usr/include/$py" -o "$r$site/tpcc_runner/ycsb/_voltloop$suffix" \
    "$ROOT/runner-image/tpcc_runner/ycsb/_voltloop.c"
  in_root "$r" /opt/tpcc/bin/python -c "import tpcc_runner.ycsb._voltloop"
}
runner() { # the runner (and the operator, when it exists) installed in a venv: /opt/tpcc/bin/tpcc
  # The operator drives the helm CLI with the database charts: both go in the image too.
  base_rootfs
  local srcs=("$ROOT/runner-image") operator=0 h
  if [ -f "$ROOT/operator/pyproject.toml" ]; then
    operator=1; srcs+=("$ROOT/operator")
    [ -x "$BIN/helm" ] || "$ROOT/hack/local-k8s.sh" tools
  fi
  h=$({ sha <"$BASE_TGZ"; tree_hash "${srcs[@]}"; sha <"$ROOT/constraints.txt"
        [ $operator = 0 ] || { tree_hash "$ROOT/charts"; sha <"$BIN/helm"; }; } | sha)
  if ! built runner "$h"; then
    local t r=$SCRATCH/runner s names=(); t=$(now)
    fresh_rootfs "$r" "$BASE_TGZ"
    mkdir -p "$r/tmp/src"
    for s in "${srcs[@]}"; do
      tree_files "$s" | tar -C "$(dirname "$s")" --null -T - -cf - | tar -C "$r/tmp/src" -xf -
      names+=("/tmp/src/$(basename "$s")")
    done
    names[0]+="[changepoints]"  # the runner with `tpcc changepoints`; Otava itself without its dependencies
    names+=(/tmp/src/runner-image/contract)  # what runner and operator share, never by name from PyPI
    install -m 644 "$ROOT/constraints.txt" "$r/tmp/src/constraints.txt"  # every package at the venv's version
    in_root "$r" python3 -m venv /opt/tpcc >"$LOGS/image-runner.log" 2>&1
    { in_root "$r" /opt/tpcc/bin/pip install -q --disable-pip-version-check -c /tmp/src/constraints.txt "${names[@]}" &&
      in_root "$r" /opt/tpcc/bin/pip install -q --disable-pip-version-check -c /tmp/src/constraints.txt --no-deps \
        -r /tmp/src/runner-image/requirements-no-deps.txt; } >>"$LOGS/image-runner.log" 2>&1 \
      || { tail -20 "$LOGS/image-runner.log" >&2; return 1; }
    compiled_loop "$r"
    in_root "$r" /opt/tpcc/bin/tpcc --help >/dev/null
    in_root "$r" /opt/tpcc/bin/python -c "import otava.analysis"
    local env=()
    if [ $operator = 1 ]; then
      in_root "$r" /opt/tpcc/bin/python -c "import kopf, tpcc_operator.plan"  # plan: every dependency the chart policy needs
      install -m 755 "$BIN/helm" "$r/usr/local/bin/helm"
      cp -r "$ROOT/charts" "$r/opt/tpcc/charts"
      env=(--env TPCC_CHARTS_DIR=/opt/tpcc/charts --env TPCC_HELM=/usr/local/bin/helm)
    fi
    finish_rootfs "$r"
    pack runner local/tpcc-runner:dev "$r" "$h" --env PATH=/opt/tpcc/bin:/usr/local/bin:/usr/bin:/bin \
      --env PYTHONUNBUFFERED=1 "${env[@]}" --cmd '["tpcc", "--help"]' --user $APP_UID --workdir /home/app
    log "images: local/tpcc-runner:dev built in $(( $(now) - t ))s"
  fi
  import_image runner local/tpcc-runner:dev
}

jre_rootfs() { # base + Debian's Java 17 JRE (+ procps), cached as a tarball
  [ -f "$JRE_TGZ" ] && [ "$JRE_TGZ" -nt "$BASE_TGZ" ] && return
  local t r=$SCRATCH/jre; t=$(now)
  fresh_rootfs "$r" "$BASE_TGZ"
  { in_root "$r" apt-get update -q
    in_root "$r" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $JRE_PKGS
    in_root "$r" apt-get clean; } >"$LOGS/image-jre.log" 2>&1 || { tail -20 "$LOGS/image-jre.log" >&2; return 1; }
  finish_rootfs "$r"
  rm -f "$IMAGES/rootfs-$SUITE-python-jre"*.tar.gz
  tar -C "$r" --numeric-owner -czf "$JRE_TGZ.part" . && mv "$JRE_TGZ.part" "$JRE_TGZ"
  rm -rf "$r"
  log "images: Java 17 JRE rootfs in $(( $(now) - t ))s"
}

voltdb() { # VoltDB 10.1.1 CE server: jars from hack/voltdb.sh (Maven Central) in /opt/voltdb
  if [ ! -d "$VOLTDB_CACHE/lib" ] || [ ! -d "$VOLTDB_CACHE/stub-classes" ]; then
    if [ -x "$ROOT/hack/voltdb.sh" ]; then "$ROOT/hack/voltdb.sh" fetch
    else log "images: no $VOLTDB_CACHE/lib and no hack/voltdb.sh to fetch it; skipping local/voltdb:10.1.1"; return 1; fi
  fi
  base_rootfs; jre_rootfs
  local extra=() f h
  for f in jvmopts.txt log4j.properties; do [ -f "$ROOT/hack/voltdb/$f" ] && extra+=("$ROOT/hack/voltdb/$f"); done
  h=$({ sha <"$JRE_TGZ"; tree_hash "$VOLTDB_CACHE/lib" "$VOLTDB_CACHE/stub-classes"
        for f in "${extra[@]}"; do sha <"$f"; done; } | sha)
  if ! built voltdb "$h"; then
    local t r=$SCRATCH/voltdb; t=$(now)
    fresh_rootfs "$r" "$JRE_TGZ"
    mkdir -p "$r/opt/voltdb"
    cp -r "$VOLTDB_CACHE/lib" "$VOLTDB_CACHE/stub-classes" "$r/opt/voltdb/"
    for f in "${extra[@]}"; do cp "$f" "$r/opt/voltdb/"; done
    in_root "$r" java -version >"$LOGS/image-voltdb.log" 2>&1
    finish_rootfs "$r"
    pack voltdb local/voltdb:10.1.1 "$r" "$h" --env VOLTDB_HOME=/opt/voltdb \
      --env 'CLASSPATH=/opt/voltdb/lib/*:/opt/voltdb/stub-classes' --cmd '["java", "-version"]' \
      --user $APP_UID --workdir /home/app
    log "images: local/voltdb:10.1.1 built in $(( $(now) - t ))s"
  fi
  import_image voltdb local/voltdb:10.1.1
}

secantus() { # the MongoDB-wire test server as a replica-set member (charts/mongodb testServer profile)
  base_rootfs
  local pin h
  pin=$(grep -o 'secantusdb==[^"]*' "$ROOT/runner-image/pyproject.toml") \
    || { log "images: no secantusdb== pin in runner-image/pyproject.toml"; return 1; }
  h=$({ sha <"$BASE_TGZ"; echo "$pin"; sha <"$ROOT/constraints.txt"; sha <"$ROOT/hack/secantus/member.py"; script_hash; } \
       | sha)
  if ! built secantus "$h"; then
    local t r=$SCRATCH/secantus; t=$(now)
    fresh_rootfs "$r" "$BASE_TGZ"
    in_root "$r" python3 -m venv /opt/secantus >"$LOGS/image-secantus.log" 2>&1
    install -D -m 644 "$ROOT/constraints.txt" "$r/tmp/src/constraints.txt"  # its dependencies at the venv's versions
    in_root "$r" /opt/secantus/bin/pip install -q --disable-pip-version-check -c /tmp/src/constraints.txt "$pin" \
      >>"$LOGS/image-secantus.log" 2>&1 \
      || { tail -20 "$LOGS/image-secantus.log" >&2; return 1; }
    install -m 644 "$ROOT/hack/secantus/member.py" "$r/opt/secantus/member.py"
    in_root "$r" /opt/secantus/bin/python /opt/secantus/member.py --help >/dev/null
    finish_rootfs "$r"
    pack secantus local/secantus:dev "$r" "$h" --env PATH=/opt/secantus/bin:/usr/bin:/bin --env PYTHONUNBUFFERED=1 \
      --cmd '["python", "/opt/secantus/member.py", "--help"]' --user $APP_UID --workdir /home/app
    log "images: local/secantus:dev ($pin) built in $(( $(now) - t ))s"
  fi
  import_image secantus local/secantus:dev
}

import() { # whatever is built, into containerd
  local n ref
  for n in pause:local/pause:1 base:local/debian-python:bookworm runner:local/tpcc-runner:dev voltdb:local/voltdb:10.1.1 \
           secantus:local/secantus:dev; do
    ref=${n#*:}; n=${n%%:*}
    [ -f "$IMAGES/$n.tar" ] && import_image "$n" "$ref"
  done
  return 0
}

[ $# -gt 0 ] || set -- all
for step in "$@"; do
  t=$(now)
  case $step in
    all) pause; base; runner; voltdb; secantus ;;
    pause | base | runner | voltdb | secantus | import) $step ;;
    *) echo "usage: $0 [pause|base|runner|voltdb|secantus|import|all]..." >&2; exit 2 ;;
  esac
  log "images $step: $(( $(now) - t ))s"
done
