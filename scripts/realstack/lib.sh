# shellcheck shell=bash
# Shared helpers of the real-stack suite: logging, loopback ports, waiting,
# and a registry of the processes the suite starts, so cleanup stops
# exactly those (by pid) and nothing else.

RS_DIR=${RS_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
REPO_ROOT=${REPO_ROOT:-$(cd "$RS_DIR/../.." && pwd)}
# shellcheck source=versions.env
. "$RS_DIR/versions.env"
LAKEMIRROR_CACHE=${LAKEMIRROR_CACHE:-${HOME:-/root}/.cache/lakemirror-realstack}
PG_BIN=${PG_BIN:-/usr/lib/postgresql/$PG_MAJOR/bin}
KAFKA_HOME="$LAKEMIRROR_CACHE/kafka-$KAFKA_VERSION"
DEBEZIUM_PLUGINS="$LAKEMIRROR_CACHE/debezium-$DEBEZIUM_VERSION/plugins"
PY_REQ_HASH=$(sha1sum "$RS_DIR/requirements.txt" | cut -c1-10)
VENV="$LAKEMIRROR_CACHE/venv-$PY_REQ_HASH"

rs_t0=${rs_t0:-$(date +%s)}
log() { printf '[realstack %4ds] %s\n' "$(($(date +%s) - rs_t0))" "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }

# free_ports N prints N distinct free TCP ports on 127.0.0.1.
free_ports() {
  python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

# wait_port PORT SECONDS NAME: until something accepts on 127.0.0.1:PORT.
wait_port() {
  local port=$1 secs=$2 name=$3 i
  for ((i = 0; i < secs * 4; i++)); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.25
  done
  die "$name did not listen on 127.0.0.1:$port within ${secs}s"
}

# start_bg NAME LOGFILE CMD...: start CMD in the background, record its pid.
start_bg() {
  local name=$1 logf=$2; shift 2
  "$@" >>"$logf" 2>&1 &
  echo $! >"$RUN/pids/$name"
  log "started $name (pid $!), log $logf"
}

pid_of() { cat "$RUN/pids/$1" 2>/dev/null; }

alive() { local p; p=$(pid_of "$1") && [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

# stop_bg NAME [SIGNAL]: stop a recorded process (TERM, then KILL after 20s).
stop_bg() {
  local name=$1 sig=${2:-TERM} p i
  p=$(pid_of "$name") || return 0
  [ -n "$p" ] || return 0
  if kill -0 "$p" 2>/dev/null; then
    kill "-$sig" "$p" 2>/dev/null || true
    for ((i = 0; i < 80; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.25; done
    if kill -0 "$p" 2>/dev/null; then kill -KILL "$p" 2>/dev/null || true; fi
    wait "$p" 2>/dev/null || true
  fi
  rm -f "$RUN/pids/$name"
}

# kill9 NAME: the fault injection: SIGKILL, no shutdown hooks.
kill9() {
  local p
  p=$(pid_of "$1") || die "no pid recorded for $1"
  kill -KILL "$p"
  wait "$p" 2>/dev/null || true
  rm -f "$RUN/pids/$1"
  log "killed $1 (pid $p) with SIGKILL"
}

# as_pg CMD...: run a PostgreSQL server command as an unprivileged user
# (initdb and postgres refuse to run as root).
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
