#!/usr/bin/env bash
# Starts/stops SecantusDB (a MongoDB wire-protocol server in Python, single-node replica set
# "secantus"), the test server for the pymongo driver.
#   hack/secantus.sh start [--port P] [--dir D] [--sync-on-commit]   # waits until it answers ping; prints the port
# --sync-on-commit fsyncs the journal at every commit (as mongod's j:true): without it an
# acknowledged write can be lost when the process is killed (SIGKILL) before the next sync.
#   hack/secantus.sh stop  [--dir D]
#   hack/secantus.sh status [--dir D]
# Data, log and pid file live in D (default $WORK/secantus).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

usage() { echo "usage: $0 start [--port P] [--dir D] [--sync-on-commit] | stop [--dir D] | status [--dir D]" >&2; exit 2; }
[ $# -ge 1 ] || usage
cmd=$1; shift
port=27017
dir=$WORK/secantus
sync=()
start_timeout=${SECANTUS_START_TIMEOUT:-60}
while [ $# -gt 0 ]; do
  case $1 in
    --port) [ $# -ge 2 ] || usage; port=$2; shift 2 ;;
    --dir) [ $# -ge 2 ] || usage; dir=$2; shift 2 ;;
    --sync-on-commit) sync=(--sync-on-commit); shift ;;
    *) usage ;;
  esac
done
case $port in ''|*[!0-9]*) echo "secantus: --port must be a number, got '$port'" >&2; exit 2 ;; esac
pidfile=$dir/secantusd.pid
py=$VENV/bin/python

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

ping() {  # ping once, quickly; exit status tells
  "$py" - "$1" <<'EOF' >/dev/null 2>&1
import sys, pymongo
c = pymongo.MongoClient("127.0.0.1", int(sys.argv[1]), directConnection=True,
                        serverSelectionTimeoutMS=1000, connectTimeoutMS=1000)
c.admin.command("ping")
EOF
}

case $cmd in
  start)
    if running; then
      echo "secantus: already running (pid $(cat "$pidfile"), port $(cat "$dir/port"))" >&2
      cat "$dir/port"; exit 0
    fi
    if [ ! -x "$VENV/bin/secantusd-py" ]; then
      echo "secantus: $VENV/bin/secantusd-py missing; run hack/python-env.sh" >&2; exit 1
    fi
    if ping "$port"; then echo "secantus: port $port is already taken by another server" >&2; exit 1; fi
    mkdir -p "$dir/data"
    # setsid: its own process group, so stop ends the daemon and nothing else
    setsid "$VENV/bin/secantusd-py" --host 127.0.0.1 --port "$port" --storage-path "$dir/data" \
      --log-level WARNING ${sync[@]+"${sync[@]}"} >"$dir/secantusd.log" 2>&1 </dev/null &
    echo $! >"$pidfile"
    echo "$port" >"$dir/port"
    deadline=$((SECONDS + start_timeout))
    until ping "$port"; do
      if ! running; then
        echo "secantus: exited during start; last log lines:" >&2; tail -5 "$dir/secantusd.log" >&2
        rm -f "$pidfile"; exit 1
      fi
      if [ $SECONDS -ge $deadline ]; then
        echo "secantus: no answer on port $port within ${start_timeout}s; see $dir/secantusd.log" >&2
        kill -- "-$(cat "$pidfile")" 2>/dev/null || true; rm -f "$pidfile"; exit 1
      fi
      sleep 0.5
    done
    log "secantus: up on 127.0.0.1:$port (pid $(cat "$pidfile"), data $dir/data)"
    echo "$port"
    ;;
  stop)
    if ! running; then rm -f "$pidfile"; log "secantus: not running"; exit 0; fi
    pid=$(cat "$pidfile")
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL -- "-$pid" 2>/dev/null || true; fi
    rm -f "$pidfile"
    log "secantus: stopped (pid $pid)"
    ;;
  status)
    if running; then echo "running pid $(cat "$pidfile") port $(cat "$dir/port")"; else echo "stopped"; exit 1; fi
    ;;
  *) usage ;;
esac
