# shellcheck shell=bash
# Shared helpers of the catalog and storage suites (scripts/reststack,
# gcsstack, azurestack, gluestack): each starts emulators on loopback,
# runs one Go e2e test of worker/runner (runStorageSuite) against them
# and an independent reader, and stops exactly the processes it started
# (by pid) on exit.
#
#   . "$(dirname "${BASH_SOURCE[0]}")/../lib/stack.sh"
#   stack_init NAME          # logging prefix, cache, timing, SUITE_DIR, versions.env
#   step NAME CMD...         # run and time a setup or test step
#   stack_setup_done         # exits 0 here with STACK_SETUP_ONLY=1
#   stack_run_dir            # $RUN (logs, pids), cleanup on exit
#   start_bg / stop_bg / alive / free_ports / wait_http
#   setup_venv REQUIREMENTS IMPORTS  # a cached Python venv ($VENV)
#   run_go_test TESTNAME     # go test -tags e2e -run '^TESTNAME$' ./worker/runner, report in $RUN/report.json
#   run_tablecheck LABEL ROOT CATALOG  # the independent reader (tablecheck.py)
#   stack_summary TITLE STORE LOG KIND LINES...  # the closing summary, with the timings
#
# Environment:
#   LAKEMIRROR_CACHE       artifact cache (default ~/.cache/lakemirror-<suite>)
#   STACK_KEEP=1           keep the run directory (logs, report) even on success (RS_KEEP=1 too)
#   STACK_SETUP_ONLY=1     fetch and cache the artifacts, start nothing (RS_SETUP_ONLY=1 too)

STACK_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$STACK_LIB_DIR/../.." && pwd)
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:--buildvcs=false} PYTHONDONTWRITEBYTECODE=1
STACK_KEEP=${STACK_KEEP:-${RS_KEEP:-0}}
STACK_SETUP_ONLY=${STACK_SETUP_ONLY:-${RS_SETUP_ONLY:-0}}
declare -A T # step timings, seconds

# stack_init NAME: the suite's name (log prefix, default cache dir);
# sets SUITE_DIR (the calling script's directory) and sources its
# versions.env when there is one.
stack_init() {
  STACK_NAME=$1
  SUITE_DIR=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
  if [ -f "$SUITE_DIR/versions.env" ]; then
    # shellcheck source=/dev/null
    . "$SUITE_DIR/versions.env"
  fi
  LAKEMIRROR_CACHE=${LAKEMIRROR_CACHE:-${HOME:-/root}/.cache/lakemirror-$STACK_NAME}
  stack_t0=$(date +%s)
  mkdir -p "$LAKEMIRROR_CACHE"
  command -v go >/dev/null || die "go is required"
  command -v python3 >/dev/null || die "python3 is required"
  command -v curl >/dev/null || die "curl is required"
}

log() { printf '[%s %4ds] %s\n' "$STACK_NAME" "$(($(date +%s) - stack_t0))" "$*" >&2; }
die() {
  log "FAIL: $*"
  exit 1
}

# step NAME CMD...: run and time a step.
step() {
  local name=$1 s
  s=$(date +%s)
  shift
  "$@"
  T[$name]=$(($(date +%s) - s))
}

# setup_venv REQUIREMENTS IMPORTS: a Python environment from a fully
# pinned requirements file (installed with --no-deps), cached in
# $LAKEMIRROR_CACHE/venv-<hash of the file>; IMPORTS is a Python import
# statement that must succeed. Sets VENV.
setup_venv() {
  local req=$1 imports=$2
  VENV="$LAKEMIRROR_CACHE/venv-$(sha1sum "$req" | cut -c1-10)"
  if [ -f "$VENV/.complete" ]; then
    log "python: venv cached ($VENV)"
    return
  fi
  log "python: creating $VENV from $(basename "$(dirname "$req")")/$(basename "$req") (PyPI)"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps -r "$req" >"$LAKEMIRROR_CACHE/pip.log" 2>&1 ||
    {
      tail -n 30 "$LAKEMIRROR_CACHE/pip.log" >&2
      die "pip install failed"
    }
  "$VENV/bin/python" -c "$imports" || die "the Python environment does not import ($imports)"
  touch "$VENV/.complete"
}

# stack_setup_done: with STACK_SETUP_ONLY=1, report the cache and exit 0.
stack_setup_done() {
  if [ "$STACK_SETUP_ONLY" = 1 ]; then
    log "setup done: cache $LAKEMIRROR_CACHE ($(du -sh "$LAKEMIRROR_CACHE" 2>/dev/null | cut -f1))"
    exit 0
  fi
}

# stack_run_dir: a temporary run directory $RUN (logs/, pids/); on exit
# every process recorded in pids/ is stopped, newest first, and the
# directory removed unless the run failed or STACK_KEEP=1.
stack_run_dir() {
  RUN=$(mktemp -d "/tmp/lakemirror-$STACK_NAME.XXXXXX")
  mkdir -p "$RUN/pids" "$RUN/logs"
  log "run directory $RUN"
  trap stack_cleanup EXIT
  trap 'exit 130' INT TERM
}

stack_cleanup() {
  local rc=$? name
  trap - EXIT INT TERM
  set +e
  for name in $(ls -t "$RUN/pids" 2>/dev/null); do
    stop_bg "$name"
  done
  if [ "$rc" = 0 ] && [ "$STACK_KEEP" != 1 ]; then
    rm -rf "$RUN"
  else
    log "run directory kept: $RUN (logs in $RUN/logs)"
  fi
  exit "$rc"
}

# start_bg NAME LOGFILE CMD...: start CMD in the background, record its pid.
start_bg() {
  local name=$1 logf=$2
  shift 2
  "$@" >>"$logf" 2>&1 &
  echo $! >"$RUN/pids/$name"
  log "started $name (pid $!), log $logf"
}

# stop_bg NAME: TERM, then KILL after 10s; only the recorded pid.
stop_bg() {
  local p i
  p=$(cat "$RUN/pids/$1" 2>/dev/null) || return 0
  if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
    kill -TERM "$p" 2>/dev/null || true
    for ((i = 0; i < 40; i++)); do
      kill -0 "$p" 2>/dev/null || break
      sleep 0.25
    done
    if kill -0 "$p" 2>/dev/null; then kill -KILL "$p" 2>/dev/null || true; fi
    wait "$p" 2>/dev/null || true
  fi
  rm -f "$RUN/pids/$1"
}

alive() {
  local p
  p=$(cat "$RUN/pids/$1" 2>/dev/null) && kill -0 "$p" 2>/dev/null
}

# free_ports N prints N distinct free TCP ports on 127.0.0.1.
free_ports() {
  python3 -c 'import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))' "$1"
}

# wait_http NAME URL SECONDS [CURL-ARGS...]: until URL answers 2xx (and
# NAME is alive).
wait_http() {
  local name=$1 url=$2 secs=$3 s=$SECONDS
  shift 3
  until curl -sf -o /dev/null "$@" "$url"; do
    alive "$name" || {
      tail -n 30 "$RUN/logs/$name.log" >&2
      die "$name exited"
    }
    ((SECONDS - s < secs)) || {
      tail -n 30 "$RUN/logs/$name.log" >&2
      die "$name did not answer $url within ${secs}s"
    }
    sleep 0.25
  done
}

# start_moto PORT BUCKET REGION KEY_ID SECRET: moto_server of $VENV on
# 127.0.0.1:PORT (its S3, Glue and other AWS APIs), with BUCKET created.
start_moto() {
  local port=$1 bucket=$2 region=$3 key=$4 secret=$5
  start_bg moto "$RUN/logs/moto.log" "$VENV/bin/moto_server" -H 127.0.0.1 -p "$port"
  wait_http moto "http://127.0.0.1:$port/moto-api/" 60
  AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret "$VENV/bin/python" -c 'import boto3, sys
boto3.client("s3", endpoint_url=sys.argv[1], region_name=sys.argv[3]).create_bucket(Bucket=sys.argv[2])' "http://127.0.0.1:$port" "$bucket" "$region" ||
    die "could not create bucket $bucket"
  log "moto on http://127.0.0.1:$port, bucket $bucket"
}

# run_go_test TESTNAME: runs the Go e2e test with the LAKEMIRROR_TEST_*
# variables the caller exported (and LAKEMIRROR_TEST_REPORT=$RUN/report.json);
# fails unless it passed (a skip is a failure).
run_go_test() {
  local name=$1 rc=0
  (cd "$REPO_ROOT" && LAKEMIRROR_TEST_REPORT=$RUN/report.json go test -count=1 -tags e2e -v -run "^$name\$" ./worker/runner) \
    >"$RUN/logs/go-test.log" 2>&1 || rc=$?
  grep -v '^time=' "$RUN/logs/go-test.log" | grep -E '^(=== RUN|--- |    |PASS|FAIL|ok )' >&2 || true
  [ "$rc" = 0 ] || die "go test failed (exit $rc; log $RUN/logs/go-test.log)"
  grep -q -- "--- PASS: $name" "$RUN/logs/go-test.log" || die "$name did not pass (skipped?)"
}

# run_tablecheck LABEL ROOT CATALOG: the independent reader
# (tablecheck.py, with $VENV's pyiceberg) over the tables of
# $RUN/report.json, through the pyiceberg catalog properties CATALOG
# ("k=v,k=v"), every table under ROOT; its verdict in $RUN/logs/check.out.
run_tablecheck() {
  "$VENV/bin/python" "$STACK_LIB_DIR/tablecheck.py" --label "$1" --root "$2" --catalog "$3" --report "$RUN/report.json" \
    --golden "$REPO_ROOT/starter/testdata/golden/debezium-postgres-data-schema-include-flink.jsonl" | tee "$RUN/logs/check.out" >&2 ||
    die "the pyiceberg comparison failed"
}

# stack_summary TITLE STORE LOG KIND LINES...: the closing summary: the
# lines given ("label: text", or "  text" to continue the line above),
# the reader's verdict, what the test found in the bucket or container
# (labelled STORE) with the count of KIND requests in the emulator's
# access log LOG, the go test verdict, the total time and the steps'.
stack_summary() {
  local title=$1 store=$2 logf=$3 kind=$4 line k requests
  shift 4
  requests=$(grep -c '"[A-Z]* /' "$logf" || true)
  {
    echo
    echo "================ $title ================"
    for line in "$@" "pyiceberg: $(tail -n1 "$RUN/logs/check.out")" \
      "$store: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["objects"])' "$RUN/report.json"); $requests $kind requests served"; do
      case $line in
      " "*) printf '%-11s %s\n' "" "${line#"${line%%[! ]*}"}" ;; # a continuation line
      *) printf '%-11s %s\n' "${line%%: *}:" "${line#*: }" ;;
      esac
    done
    printf '%-11s %s\n' "go test:" "$(grep -E -- '--- (PASS|FAIL)' "$RUN/logs/go-test.log" | head -n1 | sed 's/^ *//')"
    printf '%-11s %ss total; steps: ' "time:" "$(($(date +%s) - stack_t0))"
    for k in "${!T[@]}"; do printf '%s=%ss ' "$k" "${T[$k]}"; done
    echo
    printf '%-11s %s\n' "result:" PASS
  } >&2
}
