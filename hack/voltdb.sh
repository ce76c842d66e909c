#!/usr/bin/env bash
# A real VoltDB 10.1.1 CE cluster on 127.0.0.1 (no Docker): the jars come from Maven Central.
#
#   hack/voltdb.sh fetch          server classpath -> $TPCC_CACHE/voltdb/{lib,stub-classes}
#   hack/voltdb.sh procs          TPC-C stored procedures -> runner-image/tpcc_runner/voltdb/tpcc-procs.jar
#   hack/voltdb.sh start [--nodes N] [--kfactor K] [--base-port P] [--dir D] [--timeout S]
#                        [--users NAME:PASSWORD:ROLE,...]   security on, with these users (ROLE:
#                        administrator, or user: SQL and every procedure, no DDL or @UpdateClasses)
#                        [--stall S]   a start whose nodes log nothing for S s (default 60) is
#                        started once more from scratch
#   hack/voltdb.sh stop [--dir D]
#   hack/voltdb.sh kill-node I [--dir D]      kill -9 node I (0-based)
#   hack/voltdb.sh restart-node I [--dir D]   rerun node I's probe command: it rejoins live
#
# Ports of node i (N <= 8): client P+i, admin P+16+i, internal P+32+i, zookeeper P+48+i,
# replication P+64+2i. `start` prints the client endpoints, comma-separated, on stdout.
# The schema and procedures are not loaded here: the runner's driver loads them
# (`tpcc load`), so the runner works against any empty VoltDB.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

VOLTDB_VERSION=10.1.1
HERE=$ROOT/hack/voltdb
CACHE=$TPCC_CACHE/voltdb
LIB=$CACHE/lib
STUBS=$CACHE/stub-classes
PROCS_JAR=$ROOT/runner-image/tpcc_runner/voltdb/tpcc-procs.jar
DIR=$WORK/voltdb

die() {
  echo "voltdb.sh: $*" >&2
  # A start that fails leaves no node behind.
  if [ -n "${STARTING:-}" ]; then STARTING= stop_nodes; fi
  exit 1
}

fetch() {
  mkdir -p "$CACHE"
  # One fetch at a time: concurrent test runs share the cache.
  (flock 9; fetch_locked) 9>"$CACHE/.lock"
}

fetch_locked() {
  # The stamp names the pom's checksum: a changed pom fetches again.
  local stamp="$CACHE/.fetched-$(sha256sum "$HERE/pom.xml" | cut -c1-16)"
  if [ -f "$stamp" ] && [ -f "$LIB/voltdb-$VOLTDB_VERSION.jar" ] && [ -d "$STUBS/io" ]; then
    return 0
  fi
  need_jdk_and_maven
  log "fetching the VoltDB $VOLTDB_VERSION server classpath from Maven Central into $LIB"
  # Built beside and swapped in, so a server starting meanwhile never sees a half-full lib.
  rm -rf "$LIB.new" "$STUBS.new"
  mkdir -p "$LIB.new" "$STUBS.new"
  mvn -q -B -f "$HERE/pom.xml" dependency:copy-dependencies -DoutputDirectory="$LIB.new" \
    >"$CACHE/mvn.log" 2>&1 || die "maven failed: $(tail -n 5 "$CACHE/mvn.log" | tr '\n' ' ')"
  # 10.x links Confluent schema-registry classes that are not on Central (used only with
  # Avro/Kafka export): a 3-class stub keeps the class loader happy.
  javac -nowarn --release 8 -cp "$LIB.new/*" -d "$STUBS.new" \
    $(find "$HERE/confluent-stub-src" -name '*.java')
  rm -rf "$LIB" "$STUBS" "$CACHE"/.fetched-*
  mv "$LIB.new" "$LIB"
  mv "$STUBS.new" "$STUBS"
  touch "$stamp"
  log "fetched $(ls "$LIB" | wc -l) jars"
}

need_jdk_and_maven() {
  command -v mvn >/dev/null && command -v javac >/dev/null && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing a JDK and Maven (apt)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends openjdk-17-jdk-headless maven >/dev/null
  fi
  command -v mvn >/dev/null && command -v javac >/dev/null \
    || die "needs a JDK 17 and Maven (apt-get install openjdk-17-jdk-headless maven)"
}

procs() {
  fetch
  mkdir -p "$(dirname "$PROCS_JAR")"
  (flock 9; "$ROOT/runner-image/voltdb/build.sh" "$LIB/voltdb-$VOLTDB_VERSION.jar" "$PROCS_JAR") \
    9>"$PROCS_JAR.lock"
}

java_opts() {  # node directory: one line
  echo "-Xms512m -Xmx512m -Djava.io.tmpdir=$1/tmp -Dlog4j.configuration=file:$HERE/log4j.properties" \
    $(grep -v '^\s*$' "$HERE/jvmopts.txt")
}

deployment() {  # kfactor [users: NAME:PASSWORD:ROLE,...] (the host count is given to `probe`)
  local user name password role
  echo '<?xml version="1.0"?>'
  echo '<deployment>'
  echo "  <cluster sitesperhost=\"2\" kfactor=\"$1\"/>"
  echo '  <httpd enabled="false"/>'
  if [ -n "${2:-}" ]; then
    echo '  <security enabled="true" provider="hash"/>'
    echo '  <users>'
    for user in ${2//,/ }; do
      IFS=: read -r name password role <<<"$user"
      [[ $name =~ ^[A-Za-z0-9_]+$ && $password =~ ^[A-Za-z0-9_]+$ && $role =~ ^(administrator|user)$ ]] \
        || die "--users wants NAME:PASSWORD:ROLE (letters, digits, _; ROLE administrator or user): $user"
      echo "    <user name=\"$name\" password=\"$password\" roles=\"$role\"/>"
    done
    echo '  </users>'
  fi
  echo '</deployment>'
}

parse_opts() {
  NODES=1 KFACTOR=0 BASE_PORT=21212 TIMEOUT=180 USERS= STALL=60
  while [ $# -gt 0 ]; do
    case "$1" in
      --nodes) NODES=$2; shift 2 ;;
      --kfactor) KFACTOR=$2; shift 2 ;;
      --base-port) BASE_PORT=$2; shift 2 ;;
      --dir) DIR=$2; shift 2 ;;
      --timeout) TIMEOUT=$2; shift 2 ;;
      --users) USERS=$2; shift 2 ;;
      --stall) STALL=$2; shift 2 ;;
      *) die "unknown option $1" ;;
    esac
  done
  [[ $NODES =~ ^[1-8]$ ]] || die "--nodes must be 1..8"
  [[ $KFACTOR =~ ^[0-9]$ ]] && [ "$KFACTOR" -lt "$NODES" ] || die "--kfactor must be < --nodes"
  [[ $BASE_PORT =~ ^[0-9]+$ ]] && [ "$BASE_PORT" -ge 1024 ] && [ "$BASE_PORT" -le 65400 ] \
    || die "--base-port must be 1024..65400"
  [[ $STALL =~ ^[0-9]+$ ]] && [ "$STALL" -ge 5 ] || die "--stall must be a number of seconds, at least 5"
  DIR=$(mkdir -p "$DIR" && cd "$DIR" && pwd)
}

node_alive() {  # node directory
  [ -f "$1/pid" ] && kill -0 "$(cat "$1/pid")" 2>/dev/null
}

launch_node() {  # node directory: runs the saved probe command in its own process group
  local nd=$1
  [ -f "$nd/volt.log" ] && mv "$nd/volt.log" "$nd/volt.log.prev"
  rm -f "$nd/pid"
  (cd "$nd" && exec setsid bash "$nd/run.sh" >"$nd/stdout.log" 2>&1 </dev/null 8>&-) &
  for _ in $(seq 1 100); do [ -s "$nd/pid" ] && return 0; sleep 0.05; done
  die "node $(basename "$nd") did not start; see $nd/stdout.log"
}

wait_ready() {  # deadline stall-seconds node-directories...
  # Returns 2 when a node has written nothing to stdout.log or volt.log for stall-seconds (0:
  # never), every node's threads dumped (the quiet node may be waiting on another); dies when a
  # node exits or the deadline passes.
  local deadline=$1 stall=$2; shift 2
  local nd quiet other
  for nd in "$@"; do
    until grep -q "Server completed initialization" "$nd/volt.log" 2>/dev/null; do
      node_alive "$nd" || die "node $(basename "$nd") exited; see $nd/stdout.log: $(tail -n 3 "$nd/stdout.log" | tr '\n' ' ')"
      [ "$(date +%s)" -lt "$deadline" ] \
        || die "node $(basename "$nd") not ready in time; see $nd/volt.log and its threads in $(thread_dump "$nd")"
      if [ "$stall" -gt 0 ]; then
        # (stat fails on a volt.log not written yet and prints the other file's time)
        quiet=$(($(date +%s) - $({ stat -c %Y "$nd/stdout.log" "$nd/volt.log" 2>/dev/null || true; } | sort -n | tail -n 1)))
        if [ "$quiet" -ge "$stall" ]; then
          for other in "$@"; do thread_dump "$other" >/dev/null; done
          STALLED="node $(basename "$nd") logged nothing for $quiet s"
          return 2
        fi
      fi
      sleep 0.5
    done
  done
}

# Where a stuck node waits (CI12: two nodes of a cluster logged nothing for 170 s after
# starting their OSGi framework): its threads' stacks, for the error message to point at.
thread_dump() {  # node directory -> prints the dump's path
  local out=$1/threads.txt
  if node_alive "$1" && [ "$(awk '{print $3}' "/proc/$(cat "$1/pid")/stat" 2>/dev/null)" = T ]; then
    echo "no thread dump: the node is stopped (SIGSTOP), jstack cannot attach to it" >"$out"
  elif node_alive "$1" && command -v jstack >/dev/null; then
    timeout 20 jstack "$(cat "$1/pid")" >"$out" 2>&1 || true
  else
    echo "no thread dump: the node is gone or there is no jstack" >"$out"
  fi
  echo "$out"
}

start() {
  parse_opts "$@"
  fetch
  # Clusters start one at a time on this machine (the db tests run two pytest sessions that
  # each start clusters): six JVMs starting at once on 2 cores are slow to come up.
  exec 8>"$CACHE/.start-lock"
  flock 8
  local i started attempt
  for ((i = 0; i < NODES; i++)); do
    node_alive "$DIR/node$i" && die "a node is already running in $DIR/node$i (stop it first)"
  done
  started=$(date +%s)
  STARTING=1
  rm -rf "$DIR"/node* "$DIR"/stalled-*
  deployment "$KFACTOR" "$USERS" >"$DIR/deployment.xml"
  # A cluster that comes up does so in 10-20 s here, logging all the while. Now and then (CI12,
  # and a CI of 2026-12-07) a node of a fresh 3-node cluster logs nothing more after its first
  # lines and never comes up: such a start is stopped after --stall quiet seconds, its nodes'
  # logs and thread dumps kept in stalled-<attempt>/, and started once more from scratch.
  for attempt in 1 2; do
    launch_cluster
    wait_ready $((started + TIMEOUT)) "$STALL" "${NDS[@]}" && break
    stop_nodes
    mkdir -p "$DIR/stalled-$attempt"
    mv "$DIR"/node* "$DIR/stalled-$attempt/"
    log "VoltDB start attempt $attempt stalled: $STALLED (the nodes' logs and threads.txt in $DIR/stalled-$attempt)"
    [ "$attempt" = 1 ] || die "the start stalled twice, the last time: $STALLED (the nodes' logs and threads.txt in $DIR/stalled-*)"
  done
  exec 8>&-  # the start lock
  STARTING=
  log "VoltDB $VOLTDB_VERSION: $NODES node(s), k=$KFACTOR, ready in $(($(date +%s) - started)) s ($DIR)"
  cat "$DIR"/node*/endpoint | paste -sd,
}

launch_cluster() {  # initializes and launches $NODES fresh nodes in $DIR; sets NDS to their directories
  local i nd mesh="" cp="$LIB/*:$STUBS" inits=()
  NDS=()
  for ((i = 0; i < NODES; i++)); do mesh+="${mesh:+,}127.0.0.1:$((BASE_PORT + 32 + i))"; done
  for ((i = 0; i < NODES; i++)); do
    nd=$DIR/node$i
    mkdir -p "$nd/tmp"
    java $(java_opts "$nd") -cp "$cp" org.voltdb.VoltDB initialize voltdbroot "$nd" force \
      deployment "$DIR/deployment.xml" >"$nd/init.log" 2>&1 8>&- &
    inits+=($!)
  done
  for ((i = 0; i < NODES; i++)); do
    nd=$DIR/node$i
    wait "${inits[$i]}" || die "initialize of node $i failed: $(tail -n 3 "$nd/init.log" | tr '\n' ' ')"
    cat >"$nd/run.sh" <<EOF
echo \$\$ >"$nd/pid"
exec java $(java_opts "$nd") -cp "$cp" org.voltdb.VoltDB probe voltdbroot "$nd" \\
  mesh $mesh hostcount $NODES internalinterface 127.0.0.1 externalinterface 127.0.0.1 \\
  port $((BASE_PORT + i)) adminport $((BASE_PORT + 16 + i)) internalport $((BASE_PORT + 32 + i)) \\
  zkport 127.0.0.1:$((BASE_PORT + 48 + i)) replicationport $((BASE_PORT + 64 + 2 * i))
EOF
    echo "127.0.0.1:$((BASE_PORT + i))" >"$nd/endpoint"
    launch_node "$nd"
    NDS+=("$nd")
  done
}

stop() {
  parse_opts "$@"
  stop_nodes
  log "VoltDB stopped ($DIR)"
}

stop_nodes() {  # every node of $DIR: SIGTERM, then SIGKILL after 15 s
  local nd pid
  for nd in "$DIR"/node*; do
    [ -d "$nd" ] || continue
    if node_alive "$nd"; then
      pid=$(cat "$nd/pid")
      kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
      kill -CONT -- "-$pid" 2>/dev/null || true  # a stopped node (SIGSTOP, a test's fault) acts on it
      for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
      kill -KILL -- "-$pid" 2>/dev/null || true
    fi
    rm -f "$nd/pid"
  done
}

node_dir() {  # index [--dir D]
  local i=$1; shift
  [[ $i =~ ^[0-9]+$ ]] || die "node index must be a number"
  parse_opts "$@"
  [ -f "$DIR/node$i/run.sh" ] || die "no node $i in $DIR"
  echo "$DIR/node$i"
}

kill_node() {
  local nd; nd=$(node_dir "$@")
  node_alive "$nd" || die "node $1 is not running"
  local pid; pid=$(cat "$nd/pid")
  kill -KILL -- "-$pid"
  for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  rm -f "$nd/pid"
  log "node $1 killed"
}

restart_node() {
  local nd; nd=$(node_dir "$@")
  node_alive "$nd" && die "node $1 is still running"
  launch_node "$nd"
  wait_ready $(($(date +%s) + 180)) 0 "$nd"
  log "node $1 rejoined"
  cat "$nd/endpoint"
}

cmd=${1:-}; shift || true
case "$cmd" in
  fetch) fetch ;;
  procs) procs ;;
  start) start "$@" ;;
  stop) stop "$@" ;;
  kill-node) kill_node "$@" ;;
  restart-node) restart_node "$@" ;;
  *) die "usage: $0 fetch|procs|start|stop|kill-node I|restart-node I [options]" ;;
esac
