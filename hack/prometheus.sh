#!/usr/bin/env bash
# A real Prometheus (and Pushgateway) on 127.0.0.1 from the Debian packages (no Docker).
#
#   hack/prometheus.sh install (or deps)            prometheus, promtool, pushgateway (apt) if missing
#   hack/prometheus.sh start CONFIG [--port P] [--dir D] [--timeout S]
#                                                   Prometheus with CONFIG; prints its URL on stdout
#   hack/prometheus.sh stop [--dir D]
#   hack/prometheus.sh pushgateway-start [--port P] [--dir D] [--timeout S]
#                                                   prints its URL on stdout
#   hack/prometheus.sh pushgateway-stop [--dir D]
#
# Defaults: Prometheus on port 9090, Pushgateway on 9091, data and logs under $WORK/prometheus.
# CONFIG is an ordinary prometheus.yml; relative rule_files resolve against its directory.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

DIR=$WORK/prometheus

die() { echo "prometheus.sh: $*" >&2; exit 1; }

install() {
  if command -v prometheus >/dev/null && command -v promtool >/dev/null \
    && command -v prometheus-pushgateway >/dev/null; then
    return 0
  fi
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  log "installing prometheus, promtool and prometheus-pushgateway (Debian)"
  # Debian's policy-rc.d keeps apt from starting the system services; we run our own.
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends \
    prometheus prometheus-pushgateway >&2 \
    || { $sudo apt-get update >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y \
         --no-install-recommends prometheus prometheus-pushgateway >&2; } \
    || die "apt-get install prometheus prometheus-pushgateway failed"
}

parse_opts() {  # default-port args...
  PORT=$1; shift
  TIMEOUT=30
  while [ $# -gt 0 ]; do
    case "$1" in
      --port) PORT=${2:-}; shift 2 ;;
      --dir) DIR=${2:-}; shift 2 ;;
      --timeout) TIMEOUT=${2:-}; shift 2 ;;
      *) die "unknown option $1" ;;
    esac
  done
  [[ $PORT =~ ^[0-9]+$ ]] && [ "$PORT" -ge 1024 ] && [ "$PORT" -le 65535 ] \
    || die "--port must be 1024..65535"
  [[ $TIMEOUT =~ ^[0-9]+$ ]] || die "--timeout must be whole seconds"
  DIR=$(mkdir -p "$DIR" && cd "$DIR" && pwd)
}

alive() {  # pid file
  [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

launch() {  # name ready-path command...: runs it in its own session, waits for ready-path
  local name=$1 ready=$2; shift 2
  local pidf=$DIR/$name.pid logf=$DIR/$name.log deadline
  alive "$pidf" && die "$name is already running (pid $(cat "$pidf"), $DIR); stop it first"
  if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
    die "port $PORT is already in use"
  fi
  setsid "$@" >"$logf" 2>&1 </dev/null &
  echo $! >"$pidf"
  deadline=$(($(date +%s) + TIMEOUT))
  until curl -fsS "http://127.0.0.1:$PORT$ready" >/dev/null 2>&1; do
    alive "$pidf" || die "$name exited: $(tail -n 3 "$logf" | tr '\n' ' ')"
    [ "$(date +%s)" -lt "$deadline" ] || { terminate "$name"; die "$name not ready in ${TIMEOUT} s; see $logf"; }
    sleep 0.2
  done
  log "$name ready on 127.0.0.1:$PORT (pid $(cat "$pidf"), log $logf)"
  echo "http://127.0.0.1:$PORT"
}

terminate() {  # name
  local pidf=$DIR/$1.pid pid
  if alive "$pidf"; then
    pid=$(cat "$pidf")
    kill -TERM "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    log "$1 stopped ($DIR)"
  fi
  rm -f "$pidf"
}

start() {
  local config=${1:-}
  [ -n "$config" ] && [ "${config#--}" = "$config" ] || die "usage: $0 start CONFIG [--port P] [--dir D]"
  shift
  [ -f "$config" ] || die "no such config file: $config"
  parse_opts 9090 "$@"
  install
  config=$(cd "$(dirname "$config")" && pwd)/$(basename "$config")
  promtool check config "$config" >"$DIR/check-config.log" 2>&1 \
    || die "invalid config $config: $(grep -v '^Checking\|SUCCESS' "$DIR/check-config.log" | head -n 3 | tr '\n' ' ')"
  mkdir -p "$DIR/data"
  launch prometheus /-/ready prometheus --config.file="$config" \
    --storage.tsdb.path="$DIR/data" --web.listen-address="127.0.0.1:$PORT" \
    --web.enable-lifecycle --log.level=warn
}

pushgateway_start() {
  parse_opts 9091 "$@"
  install
  launch pushgateway /-/ready prometheus-pushgateway --web.listen-address="127.0.0.1:$PORT" \
    --web.enable-admin-api --persistence.file="" --log.level=warn
}

cmd=${1:-}; shift || true
case "$cmd" in
  install|deps) install ;;
  start) start "$@" ;;
  stop) parse_opts 9090 "$@"; terminate prometheus ;;
  pushgateway-start) pushgateway_start "$@" ;;
  pushgateway-stop) parse_opts 9091 "$@"; terminate pushgateway ;;
  *) die "usage: $0 install|start CONFIG|stop|pushgateway-start|pushgateway-stop [--port P] [--dir D]" ;;
esac
