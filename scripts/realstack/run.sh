#!/usr/bin/env bash
# The real-stack end-to-end suite (issue 7):
#
#   PostgreSQL 15 ──Debezium (Kafka Connect)──▶ Apache Kafka (KRaft) ──▶ lakemirror worker ──▶ Iceberg
#                                                                        (Temporal)             │
#                         pyiceberg + DuckDB/iceberg ◀─────────────────────────────────────────┘
#                         compare with PostgreSQL and the workload's own log
#
# Besides the CDC faults (Connect and worker kill -9, a late replay) it runs
# the table lifecycle scenarios of issue 6: a direct initial load from
# PostgreSQL while the workload writes to the table, events lost for good
# (a dropped replication slot) repaired by a direct re-snapshot (ghost rows)
# while the table is written to, an incremental re-snapshot through
# Debezium's signal topic, and a Debezium blocking snapshot (signal topic) of
# a table with streamed changes and of a truncated table whose later inserts
# were lost.
#
# Everything runs on 127.0.0.1 on free ports, under a temporary run
# directory, and is stopped on exit. Artifacts come from setup.sh's cache.
# Exit status: 0 when every check passes (with RS_KNOWN_GAPS, the known gaps
# listed there are reported but do not fail), 1 otherwise.
#
# Environment:
#   LAKEMIRROR_CACHE  artifact cache (default ~/.cache/lakemirror-realstack)
#   RS_KEEP=1         keep the run directory (logs, data) even on success
#   RS_PREBUILT=DIR   use worker, starter and rsctl binaries from DIR instead of building them
#   RS_SEED=N         workload seed (default 7)
#   RS_SKIP_REPLAY=1  leave out the late-replay fault (fault 3)
#   RS_KNOWN_GAPS=F   report the check:category tags listed in F (e.g. known-gaps.txt) as
#                     KNOWN GAP instead of failing (default: none, every difference fails)
set -euo pipefail
RS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export rs_t0=$(date +%s)
# shellcheck source=lib.sh
. "$RS_DIR/lib.sh"
# shellcheck source=services.sh
. "$RS_DIR/services.sh"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:--buildvcs=false} PYTHONDONTWRITEBYTECODE=1

RS_SEED=${RS_SEED:-7}
KNOWN_GAPS=${RS_KNOWN_GAPS:-}
if [ -n "$KNOWN_GAPS" ]; then
  [ -f "$KNOWN_GAPS" ] || { echo "RS_KNOWN_GAPS: no such file: $KNOWN_GAPS" >&2; exit 2; }
  KNOWN_GAPS=$(cd "$(dirname "$KNOWN_GAPS")" && pwd)/$(basename "$KNOWN_GAPS")
fi
ITEMS_TOPIC=rs.public.items
# source table : Iceberg mirror : Kafka topic : rows Debezium's initial snapshot reads
# (loaded, resnap, incsnap, blocksnap and blocktrunc: none; lakemirror's direct loads copy them)
TABLES="items:rs.items:rs.public.items:300 trunc_demo:rs.trunc_demo:rs.public.trunc_demo:60 amounts:rs.amounts:rs.public.amounts:20"
TABLES="$TABLES loaded:rs.loaded:rs.public.loaded:0 resnap:rs.resnap:rsl.public.resnap:0 incsnap:rs.incsnap:rsl.public.incsnap:0"
TABLES="$TABLES blocksnap:rs.blocksnap:rsl.public.blocksnap:0 blocktrunc:rs.blocktrunc:rsl.public.blocktrunc:0"
BATCH_SIZE=500
SOURCE=pg  # the source name the worker maps to PostgreSQL (-sources / LAKEMIRROR_SOURCES)
declare -A T  # step timings
restarts_connect=0
replayed=0
restarts_worker=0
kill_note=""

step() { # NAME CMD...: run and time a step
  local name=$1 s
  s=$(date +%s)
  shift
  "$@"
  T[$name]=$(($(date +%s) - s))
}

# --- setup ------------------------------------------------------------------
step setup bash "$RS_DIR/setup.sh"
RUN=$(mktemp -d /tmp/lakemirror-realstack.XXXXXX)
chmod 755 "$RUN"
mkdir -p "$RUN/pids" "$RUN/logs" "$RUN/bin"
export RUN
log "run directory $RUN"

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  log "cleanup: stopping everything this run started"
  stop_bg worker
  stop_bg connect
  stop_bg temporal
  stop_bg kafka
  stop_postgres
  local p
  for p in "$RUN"/pids/*; do [ -e "$p" ] && stop_bg "$(basename "$p")" KILL; done
  if [ "$rc" = 0 ] && [ "${RS_KEEP:-0}" != 1 ]; then
    rm -rf "$RUN"
  else
    log "run directory kept: $RUN (logs in $RUN/logs)"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

read -r PG_PORT KAFKA_PORT KAFKA_CTRL_PORT CONNECT_PORT TEMPORAL_PORT METRICS_PORT <<<"$(free_ports 6)"
export TEMPORAL_ADDRESS=127.0.0.1:$TEMPORAL_PORT KAFKA_BROKERS=127.0.0.1:$KAFKA_PORT LAKEMIRROR_DATA_DIR=$RUN/lake
# the worker's Prometheus endpoint on a free port too (its default, 127.0.0.1:9464, may be taken)
export METRICS_ADDR=127.0.0.1:$METRICS_PORT
PY="$VENV/bin/python"
WLOG="$RUN/workload.jsonl"
workload() { "$PY" "$RS_DIR/workload.py" "$1" --dsn "$(PG_DSN)" --log "$WLOG" --seed "$RS_SEED" "${@:2}" >>"$RUN/logs/workload.out"; }
starter() { "$RUN/bin/starter" "$@"; }
status_json() { starter status --json "$1" 2>/dev/null; }
# status_field TABLE EXPR: a Python expression over the status JSON s (empty on error)
status_field() { status_json "$1" | "$PY" -c "import json,sys; s=json.load(sys.stdin); print($2)" 2>/dev/null || true; }

# load_note TABLE: the table's last direct load, for the log
load_note() {
  status_field "$1" '"%s: %d rows in %d chunks at WAL position %X/%X, %d ghost rows soft-deleted" % (s["last_load"]["load_id"], s["last_load"]["rows"], s["last_load"]["chunks"], s["last_load"]["lsn"] >> 32, s["last_load"]["lsn"] & 0xffffffff, s["last_load"].get("ghosts", 0))'
}

# txs_logged PHASE: transactions of PHASE in the workload log
txs_logged() { grep -c "\"phase\": \"$1\"" "$WLOG" || true; }

# wait_txs PHASE N SECONDS: until the workload logged N transactions of PHASE
wait_txs() {
  local s=$SECONDS
  while (($(txs_logged "$1") < $2)); do
    ((SECONDS - s < $3)) || die "the workload did not log $2 $1 transactions within ${3}s (at $(txs_logged "$1"))"
    sleep 0.2
  done
}

# wait_load TABLE LOAD_ID SECONDS: until the table's status reports the
# direct load LOAD_ID as done (last_load); a blocked table fails.
wait_load() {
  local tbl=$1 id=$2 secs=$3 s=$SECONDS got phase
  while ((SECONDS - s < secs)); do
    got=$(status_field "$tbl" '(s.get("last_load") or {}).get("load_id", "")')
    # a re-snapshot's id is "resnapshot-<n>-<run id prefix>"
    [ "$got" = "$id" ] || [[ "$got" == "$id-"* ]] && return 0
    phase=$(status_field "$tbl" 's.get("phase")')
    case $phase in blocked | schema-blocked)
      starter status "$tbl" >&2 || true
      die "$tbl is $phase during its direct load $id: $(status_field "$tbl" 's.get("last_error")')" ;;
    esac
    sleep 0.5
  done
  starter status "$tbl" >&2 || true
  die "the direct load $id of $tbl did not finish within ${secs}s"
}

build() {
  if [ -n "${RS_PREBUILT:-}" ]; then
    cp "$RS_PREBUILT/worker" "$RS_PREBUILT/starter" "$RS_PREBUILT/rsctl" "$RUN/bin/"
    log "using prebuilt binaries from $RS_PREBUILT"
    return
  fi
  log "building worker, starter and rsctl (go build)"
  (cd "$REPO_ROOT" && go build -o "$RUN/bin/" ./worker ./starter ./scripts/realstack/rsctl) >"$RUN/logs/build.log" 2>&1 ||
    { cat "$RUN/logs/build.log" >&2; die "go build failed"; }
}

# end_offset TOPIC: the topic's end offset on partition 0 (Debezium's topics have one partition)
end_offset() { topic_end_offsets "$1" | awk -F: -v t="$1" '$1==t && $2==0 {print $3}' | tail -n1; }

# wait_offset TOPIC MIN SECONDS
wait_offset() {
  local t=$1 min=$2 secs=$3 s=$SECONDS n
  while ((SECONDS - s < secs)); do
    n=$(end_offset "$t")
    [ -n "$n" ] && ((n >= min)) && return 0
    sleep 0.2
  done
  die "topic $t did not reach offset $min within ${secs}s (at ${n:-none})"
}

# wait_caught_up SECONDS [TABLE...]: every table workflow (or the given
# ones) has applied up to its topic's end offset, read from the broker, and
# the offsets are stable. A table that is blocked (undecodable record,
# value that does not fit, a schema change waiting for a decision, ...)
# stops being waited for; its error is recorded for check.py.
wait_caught_up() {
  local secs=$1 s=$SECONDS prev="" cur ok spec src tbl topic end st phase only=" ${*:2} "
  mkdir -p "$RUN/blocked"
  while ((SECONDS - s < secs)); do
    ok=1 cur=""
    for spec in $TABLES; do
      IFS=: read -r src tbl topic _ <<<"$spec"
      [ "$only" = "  " ] || [[ $only == *" $tbl "* ]] || continue
      [ -f "$RUN/blocked/$tbl" ] && continue
      end=$(end_offset "$topic")
      end=${end:-0} # no topic yet: nothing to apply
      cur="$cur $topic=$end"
      st=$(status_json "$tbl" | "$PY" -c 'import json,sys; s=json.load(sys.stdin); print(s["offsets"].get("0", 0), s.get("phase"), (s.get("last_error") or "").replace("\n", " "))' 2>/dev/null || echo "? ?")
      phase=$(awk '{print $2}' <<<"$st")
      if [ "$phase" = blocked ] || [ "$phase" = schema-blocked ]; then
        echo "$phase: $(cut -d' ' -f3- <<<"$st")" >"$RUN/blocked/$tbl"
        log "table $tbl is BLOCKED: $(cat "$RUN/blocked/$tbl")"
        continue
      fi
      [ "${st%% *}" = "$end" ] || ok=0
    done
    if ((ok)) && [ "$cur" = "$prev" ]; then
      log "caught up:$cur applied"
      return 0
    fi
    prev=$cur
    sleep 2
  done
  for spec in $TABLES; do IFS=: read -r _ tbl _ _ <<<"$spec"; starter status "$tbl" >&2 || true; done
  die "the pipeline did not catch up within ${secs}s"
}

# --- the stack ----------------------------------------------------------------
step build build
# the readers table of docs/readers.md: pyiceberg and DuckDB of this venv
# read v2 position deletes and v3 deletion vectors (a Go test, no services)
readers() {
  log "readers: pyiceberg and DuckDB read position deletes and deletion vectors (TestDeletionVectorReaders)"
  (cd "$REPO_ROOT" && LAKEMIRROR_PYTHON="$PY" go test -count=1 -tags e2e -timeout 10m -run '^TestDeletionVectorReaders$' -v ./internal/lake/) >"$RUN/logs/readers.log" 2>&1 ||
    { tail -n 40 "$RUN/logs/readers.log" >&2; die "the readers test failed (docs/readers.md)"; }
  grep -q -- '--- PASS: TestDeletionVectorReaders' "$RUN/logs/readers.log" || die "the readers test did not run (see $RUN/logs/readers.log)"
}
step readers readers
step postgres start_postgres
step seed workload seed
log "workload seed: $(tail -n1 "$RUN/logs/workload.out")"
step kafka start_kafka
step connect start_connect
create_topic "$SIGNAL_TOPIC"
register_connector
register_lossy_connector
step snapshot wait_connector_running 120
wait_connector_running 120 "$LOSSY_CONNECTOR"
# the direct loads' precondition: the connectors' replication slots exist
wait_slot lakemirror_rs 60
wait_slot "$LOSSY_SLOT" 60
snapshot_topics() {
  local spec topic n
  for spec in $TABLES; do
    IFS=: read -r _ _ topic n <<<"$spec"
    ((n > 0)) && wait_offset "$topic" "$n" 120
  done
  return 0
}
step snapshot_topics snapshot_topics
n=$(end_offset rs.public.loaded)
[ "${n:-0}" = 0 ] || die "Debezium's initial snapshot read loaded ($n records in rs.public.loaded): the direct load must be its only initial copy"
step temporal start_temporal
export LAKEMIRROR_SOURCES="$SOURCE=postgres://postgres@127.0.0.1:$PG_PORT/$PG_DB?sslmode=disable"
step worker start_worker 1
# RS_START_ARGS: more `starter start` flags for every table, split on
# spaces, e.g. a partitioned layout (issue 39):
#   RS_START_ARGS="--mirror-partition-by bucket(16,id) --history-partition-by day(_valid_from)"
read -ra RS_START_FLAGS <<<"${RS_START_ARGS:-}"
start_table() { # SRC TABLE TOPIC [starter flags]
  starter start "$3" --table "$2" --key id --batch-size $BATCH_SIZE --max-wait 1s --schedules=false "${RS_START_FLAGS[@]}" "${@:4}" >>"$RUN/logs/starter.out"
}
for t in items trunc_demo amounts; do start_table "$t" "rs.$t" "rs.public.$t"; done
# resnap, incsnap, blocksnap and blocktrunc: direct initial loads of quiet tables (rs-lossy snapshots nothing)
start_table resnap rs.resnap rsl.public.resnap --source $SOURCE --source-table public.resnap
start_table incsnap rs.incsnap rsl.public.incsnap --source $SOURCE --source-table public.incsnap --signal-topic "$SIGNAL_TOPIC"
start_table blocksnap rs.blocksnap rsl.public.blocksnap --source $SOURCE --source-table public.blocksnap
start_table blocktrunc rs.blocktrunc rsl.public.blocktrunc --source $SOURCE --source-table public.blocktrunc
log "table workflows started for rs.items rs.trunc_demo rs.amounts, rs.resnap rs.incsnap rs.blocksnap and rs.blocktrunc (direct loads from $SOURCE) (batch size $BATCH_SIZE)"
quiet_loads() {
  local t
  for t in rs.resnap rs.incsnap rs.blocksnap rs.blocktrunc; do wait_load $t initial 300; done
}
step quiet_loads quiet_loads
log "direct loads: rs.resnap $(load_note rs.resnap); rs.incsnap $(load_note rs.incsnap); rs.blocksnap $(load_note rs.blocksnap); rs.blocktrunc $(load_note rs.blocktrunc)"

# --- scenario: direct initial load while the workload writes ----------------
# The workload changes loaded (updates, TOAST-unchanged updates, inserts,
# deletes, delete + re-insert) before, during and after the load; the
# connector has captured loaded since it was registered, so the stream holds
# every change committed after the slot was created.
initial_load() {
  local stop="$RUN/stop-loaded_live" n
  workload loaded_live --stop-file "$stop" &
  local wpid=$!
  wait_txs loaded_live 20 120
  load_started_txs=$(txs_logged loaded_live)
  start_table loaded rs.loaded rs.public.loaded --source $SOURCE --source-table public.loaded
  log "started rs.loaded with a direct load from $SOURCE public.loaded while the workload writes to it ($load_started_txs transactions so far)"
  wait_load rs.loaded initial 600
  n=$(txs_logged loaded_live)
  load_done_txs=$n
  wait_txs loaded_live $((n + 30)) 120
  touch "$stop"
  wait "$wpid" || die "workload loaded_live failed"
  log "workload loaded_live: $(tail -n1 "$RUN/logs/workload.out")"
  status_json rs.loaded >"$RUN/status-rs.loaded-after-load.json"
  log "direct load of rs.loaded: $(load_note rs.loaded); workload transactions: $load_started_txs before the start, $load_done_txs when the load was reported done"
}
step initial_load initial_load

# --- workload with faults ----------------------------------------------------
step stream1 workload stream1
log "workload stream1: $(tail -n1 "$RUN/logs/workload.out")"
step lossy_before workload lossy_before
log "workload lossy_before (resnap, incsnap, blocksnap, blocktrunc with its TRUNCATE; streamed): $(tail -n1 "$RUN/logs/workload.out")"
wait_caught_up 180

# Fault 1: kill -9 Kafka Connect while a burst of changes is being produced,
# after part of it reached Kafka and before its source offsets were flushed:
# the restarted task re-reads from the last committed LSN and redelivers.
e0=$(end_offset $ITEMS_TOPIC)
workload burst &
burst_pid=$!
wait_offset $ITEMS_TOPIC $((e0 + 40)) 60
kill9 connect
wait "$burst_pid" || die "workload burst failed"
restarts_connect=$((restarts_connect + 1))
kill_note="Kafka Connect SIGKILLed at $ITEMS_TOPIC offset >= $((e0 + 40)) during the burst"
step while_down workload while_down
log "workload while Connect was down: $(tail -n1 "$RUN/logs/workload.out")"

# Events lost for good: while Connect is down, resnap and incsnap change and
# rs-lossy's replication slot is lost, as when PostgreSQL fails over to a
# standby (PostgreSQL 15 keeps no logical slots on standbys) or an operator
# drops an inactive slot that holds back WAL. Debezium refuses to resume
# (its stored position is no longer available on the server); the operator
# resets the connector's offsets (Kafka Connect REST: stop, DELETE offsets,
# resume), so it creates a new slot and streams from the current position:
# the outage's changes are never streamed. lakemirror's re-snapshots repair
# the tables (below).
step lossy_outage workload lossy_outage
log "workload while Connect was down, never streamed (resnap, incsnap, blocktrunc): $(tail -n1 "$RUN/logs/workload.out")"
drop_slot() {
  local i r=""
  for ((i = 0; i < 60; i++)); do
    psql_q "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '$LOSSY_SLOT' AND active_pid IS NOT NULL" >/dev/null 2>&1 || true
    r=$(psql_q "SELECT pg_drop_replication_slot('$LOSSY_SLOT')" 2>&1) && return 0
    sleep 0.5
  done
  die "could not drop replication slot $LOSSY_SLOT: $r"
}
drop_slot
log "dropped replication slot $LOSSY_SLOT (rs-lossy's) while Kafka Connect was down"
step connect_restart start_connect
wait_connector_running 120
log "Kafka Connect restarted; the connector resumes from its last committed offsets"
lossy_reset() {
  local i st=""
  for ((i = 0; i < 120; i++)); do
    st=$(connector_state "$LOSSY_CONNECTOR")
    [[ $st == *FAILED* ]] && break
    sleep 0.5
  done
  lossy_failure=$(connect_rest GET "/connectors/$LOSSY_CONNECTOR/status" | "$PY" -c 'import json,sys
s = json.load(sys.stdin)
ts = [t.get("trace", "") for t in s.get("tasks") or [] if t.get("state") == "FAILED"] + [s["connector"].get("trace", "")]
ms = [l.strip() for t in ts for l in t.splitlines() if "Exception" in l and ":" in l]
m = ms[0] if ms else "(no failure)"
if "PostgresOffsetContext [" in m:  # leave out the offset context dump, keep its LSN
    import re
    lsn = re.search(r"lsn=(LSN\{[^}]*\})", m)
    m = m[:m.index("PostgresOffsetContext [")] + (lsn.group(1) if lsn else "...") + m[m.rindex("]") + 1:]
print(m[:400])' 2>/dev/null || echo "(status unavailable)")
  log "$LOSSY_CONNECTOR after the restart: $st; $lossy_failure"
  connect_rest PUT "/connectors/$LOSSY_CONNECTOR/stop" >/dev/null
  for ((i = 0; i < 120; i++)); do
    [ "$(connector_state "$LOSSY_CONNECTOR")" = STOPPED ] && break
    sleep 0.5
  done
  log "reset offsets of $LOSSY_CONNECTOR: $(connect_rest DELETE "/connectors/$LOSSY_CONNECTOR/offsets")"
  connect_rest PUT "/connectors/$LOSSY_CONNECTOR/resume" >/dev/null
  wait_connector_running 120 "$LOSSY_CONNECTOR"
  wait_slot "$LOSSY_SLOT" 60
  log "$LOSSY_CONNECTOR streams again from a new slot $LOSSY_SLOT (restart LSN $(psql_q "SELECT restart_lsn FROM pg_replication_slots WHERE slot_name = '$LOSSY_SLOT'"))"
}
step lossy_reset lossy_reset

# --- scenario: Debezium blocking snapshot through the signal topic ----------
# After the reset, rs-lossy streams one transaction (a `log` signal row in
# its signaling table), so that Debezium gives the snapshot's reads that
# commit as lastCommitLsn (source.sequence [commit, lsn]), as it does for a
# blocking snapshot of any connector that has streamed. Then Debezium's
# Kafka signal channel gets execute-snapshot (type blocking) for blocksnap
# (changed only while rs-lossy streamed: nothing of it was lost) and
# blocktrunc (truncated while rs-lossy streamed, then inserts during the
# outage that were never streamed). Debezium pauses streaming, reads both
# tables and resumes; lakemirror places the reads at (0, lsn), below every
# streamed change, the truncate included (cdc.PostgresEventWords). The
# re-reads of blocksnap must open no history version, and blocktrunc's rows
# inserted during the outage must be live (read after the truncate). The
# log notification channel reports the snapshot ("Initial Snapshot" ...
# COMPLETED); then the two workflows catch up. lossy_after changes both
# tables after it.
block_notifications() { grep "aggregateType='Initial Snapshot', type='COMPLETED'" "$RUN/logs/connect.log" | grep -c "connector_name=$LOSSY_PREFIX" || true; }
blocking_snapshot() {
  local n0 s=$SECONDS signal out
  n0=$(block_notifications)
  block_offset_snap=$(end_offset rsl.public.blocksnap) block_offset_trunc=$(end_offset rsl.public.blocktrunc)
  block_offset_snap=${block_offset_snap:-0} block_offset_trunc=${block_offset_trunc:-0}
  local sig0 sig
  sig0=$(end_offset rsl.public.debezium_signal)
  psql_q "INSERT INTO debezium_signal (id, type, data) VALUES ('before-blocking', 'log', '{\"message\": \"realstack: a commit streamed before the blocking snapshot\"}')" >/dev/null
  while sig=$(end_offset rsl.public.debezium_signal); ((${sig:-0} <= ${sig0:-0})); do
    ((SECONDS - s > 120)) && die "rs-lossy did not stream the signaling table's row within 120s"
    sleep 0.5
  done
  signal='{"type":"execute-snapshot","data":{"data-collections":["public.blocksnap","public.blocktrunc"],"type":"blocking"}}'
  out=$("$RUN/bin/rsctl" signal -brokers "$KAFKA_BROKERS" -topic "$SIGNAL_TOPIC" -key "$LOSSY_PREFIX" -value "$signal") ||
    die "sending the blocking snapshot signal failed: $out"
  log "requested a blocking snapshot of public.blocksnap and public.blocktrunc from $LOSSY_CONNECTOR ($out; rsl.public.blocksnap at offset $block_offset_snap, rsl.public.blocktrunc at $block_offset_trunc)"
  while (($(block_notifications) <= n0)); do
    if ((SECONDS - s > 180)); then
      grep -i "signal\|blocking\|Notification" "$RUN/logs/connect.log" | tail -n 20 >&2
      die "Debezium did not report the blocking snapshot COMPLETED within 180s"
    fi
    sleep 0.5
  done
  log "Debezium reports the blocking snapshot completed: $(grep "TABLE_SCAN_COMPLETED" "$RUN/logs/connect.log" | grep -o "scanned_collection=public.block[a-z]*\|total_rows_scanned=[0-9]*" | tail -n4 | paste -sd' ')"
  wait_caught_up 300 rs.blocksnap rs.blocktrunc
}
step blocking blocking_snapshot
step lossy_after workload lossy_after
log "workload lossy_after (streamed again): $(tail -n1 "$RUN/logs/workload.out")"

step evolve workload evolve
log "workload evolve: $(tail -n1 "$RUN/logs/workload.out")"

# Fault 2: kill -9 the worker while ApplyBatch runs (observed through Temporal).
workload bulk &
bulk_pid=$!
mid=$("$RUN/bin/rsctl" pending -address "$TEMPORAL_ADDRESS" -workflow lakemirror-table-rs.items \
  -wait-started ApplyBatch -timeout 120s 2>&1 | grep "^ApplyBatch") || die "never saw ApplyBatch running for rs.items: $mid"
kill9 worker
restarts_worker=$((restarts_worker + 1))
log "the worker was killed while Temporal showed: $mid"
wait "$bulk_pid" || die "workload bulk failed"
log "workload bulk: $(tail -n1 "$RUN/logs/workload.out")"
sleep 2
step worker_restart start_worker 2
log "worker restarted; the killed ApplyBatch is retried after its heartbeat timeout"
# record the retry of the killed activity as Temporal shows it (attempt >= 2)
start_bg retrywatch "$RUN/logs/retrywatch.log" bash -c '
  for ((i = 0; i < 240; i++)); do
    out=$("$0" pending -address "$1" -workflow lakemirror-table-rs.items 2>/dev/null | grep "^ApplyBatch" | grep -v " attempt=1 ")
    if [ -n "$out" ]; then echo "$out"; exit 0; fi
    sleep 0.5
  done; echo "no retried ApplyBatch seen"' "$RUN/bin/rsctl" "$TEMPORAL_ADDRESS"

# Fault 3: a late, out-of-order replay: stream1's records (creates, updates,
# deletes and tombstones of keys changed many times since) are re-appended
# to the topic, as a replay of an old range would. A single-partition
# Debezium topic only ever redelivers a suffix (fault 1), whose final state
# is right even without a sequence guard; these stale records must all be
# no-ops or the mirror rolls keys back.
if [ "${RS_SKIP_REPLAY:-0}" != 1 ]; then
  replay_out=$("$RUN/bin/rsctl" replay -brokers "$KAFKA_BROKERS" -topic $ITEMS_TOPIC -from 300 -to "$e0") ||
    die "replay failed: $replay_out"
  replayed=$(awk '{print $2}' <<<"$replay_out")
  log "$replay_out"
else
  log "RS_SKIP_REPLAY=1: no late replay"
fi

step final workload final
log "workload final: $(tail -n1 "$RUN/logs/workload.out")"
step marker wait_offset rs.public.rs_marker 1 120

# --- scenario: direct re-snapshot after lost events -----------------------
# (runs while rs.items waits for the killed ApplyBatch's heartbeat timeout)
# The mirror of resnap is captured first (pyiceberg), then the direct
# re-snapshot runs while the workload keeps changing resnap (one key per
# transaction, synchronous commit, other WAL traffic in between).
resnapshot_direct() {
  local stop="$RUN/stop-resnap_live" wpid n
  wait_caught_up 300 rs.resnap rs.incsnap
  (cd "$RS_DIR" && "$PY" check.py --catalog-db "$RUN/lake/catalog.db" --warehouse "$RUN/lake/warehouse" \
    --capture "rs.resnap=$RUN/resnap-before.json") >>"$RUN/logs/check.out" 2>&1 || die "capturing rs.resnap failed (logs/check.out)"
  workload resnap_live --stop-file "$stop" &
  wpid=$!
  wait_txs resnap_live 10 60
  starter resnapshot rs.resnap >>"$RUN/logs/starter.out"
  log "requested a direct re-snapshot of rs.resnap while the workload writes to it ($(txs_logged resnap_live) transactions so far)"
  wait_load rs.resnap resnapshot-1 300
  n=$(txs_logged resnap_live)
  wait_txs resnap_live $((n + 10)) 60
  touch "$stop"
  wait "$wpid" || die "workload resnap_live failed"
  log "workload resnap_live: $(tail -n1 "$RUN/logs/workload.out")"
  status_json rs.resnap >"$RUN/status-rs.resnap-after-resnapshot.json"
  log "direct re-snapshot of rs.resnap: $(load_note rs.resnap)"
}
step resnapshot resnapshot_direct

# --- scenario: incremental re-snapshot through Debezium's signal topic ------
# Debezium's log notification channel reports the incremental snapshot's
# progress; COMPLETED once every chunk of the table was read.
inc_notifications() { grep -c "Incremental Snapshot.*COMPLETED\|COMPLETED.*Incremental Snapshot" "$RUN/logs/connect.log" || true; }
resnapshot_incremental() {
  local n0 s=$SECONDS
  n0=$(inc_notifications)
  inc_offset0=$(end_offset rsl.public.incsnap)
  inc_offset0=${inc_offset0:-0}
  starter resnapshot rs.incsnap --incremental >>"$RUN/logs/starter.out"
  log "requested an incremental re-snapshot of rs.incsnap (execute-snapshot on $SIGNAL_TOPIC; rsl.public.incsnap at offset $inc_offset0)"
  while (($(inc_notifications) <= n0)); do
    if ((SECONDS - s > 180)); then
      grep -i "signal\|incremental" "$RUN/logs/connect.log" | tail -n 20 >&2
      starter status rs.incsnap >&2 || true
      die "Debezium did not report the incremental snapshot of public.incsnap COMPLETED within 180s"
    fi
    sleep 0.5
  done
  log "Debezium reports the incremental snapshot of public.incsnap completed: $(grep "Incremental Snapshot" "$RUN/logs/connect.log" | grep COMPLETED | tail -n1 | cut -c1-300)"
}
step incremental resnapshot_incremental
step lossy_final workload lossy_final
step lossy_marker wait_offset rsl.public.rsl_marker 1 120

step catch_up wait_caught_up 420

# A table stopped by a schema change waits for an operator's decision. The
# block is a failure of its own (check.py reports it); the suite then takes
# the decision an operator would (`starter schema TABLE --evolve`) so that
# the rest of the table can still be checked.
resolve_schema_blocks() {
  local round f tbl msg n i
  for ((round = 0; round < 3; round++)); do
    n=0
    for f in "$RUN"/blocked/*; do
      [ -e "$f" ] || continue
      tbl=$(basename "$f") msg=$(cat "$f")
      [[ $msg == schema-blocked* ]] || continue
      mkdir -p "$RUN/unblocked"
      echo "$msg" >>"$RUN/unblocked/$tbl"
      log "$tbl is schema-blocked; taking the operator's decision: starter schema $tbl --evolve"
      starter schema "$tbl" --evolve >>"$RUN/logs/starter.out"
      for ((i = 0; i < 120; i++)); do
        [ "$(status_field "$tbl" 's.get("phase")')" = schema-blocked ] || break
        sleep 0.5
      done
      rm -f "$f"
      n=$((n + 1))
    done
    ((n > 0)) || return 0
    wait_caught_up 420
  done
}
step unblock resolve_schema_blocks
stop_bg retrywatch
retry_note=$(grep -m1 . "$RUN/logs/retrywatch.log" 2>/dev/null || echo "not observed")
log "killed ApplyBatch as Temporal showed it after the restart: $retry_note"

# --- reconciliation against PostgreSQL --------------------------------------
# `starter reconcile` on every table, against the source database the worker
# knows as $SOURCE: its keyed checks (ghost, missing, changed rows) and the
# operation balance must find zero differences on the caught-up pipeline.
reconcile_all() {
  local spec src tbl rc failed=0
  : >"$RUN/reconcile.out"
  for spec in $TABLES; do
    IFS=: read -r src tbl _ _ <<<"$spec"
    set +e
    starter reconcile "$tbl" --source "$SOURCE" --source-table "public.$src" --settle-floor 5s --output json >"$RUN/reconcile-$tbl.json" 2>>"$RUN/logs/starter.out"
    rc=$?
    set -e
    "$PY" - "$tbl" "$rc" "$RUN/reconcile-$tbl.json" >>"$RUN/reconcile.out" <<'PY'
import json, sys
tbl, rc, path = sys.argv[1:4]
try:
    r = json.load(open(path))
except Exception as e:
    print(f"{tbl}: no result (exit {rc}: {e})"); sys.exit()
checks = ", ".join(f"{c['check']} {c['verdict']} ({c['observed']})" for c in r.get("checks", []))
sc = r.get("scope", {})
print(f"{tbl}: exit {rc}; {sc.get('ranges')} key ranges, {sc.get('source_rows')} source rows, {sc.get('mirror_live')} live mirror rows, {sc.get('rechecked')} keys re-read; {len(r.get('diffs') or [])} differences; {checks}")
for c in r.get("checks", []):
    if c["verdict"] == "fail":
        print(f"  {c['check']}: " + "; ".join(f"{f.get('key', '')} {f['what']}" for f in c.get("findings") or []))
PY
    [ "$rc" = 0 ] || failed=$((failed + 1))
  done
  cat "$RUN/reconcile.out" >&2
  reconcile_failed=$failed
}
reconcile_failed=0
step reconcile reconcile_all

# --- validation ------------------------------------------------------------------
# `starter validate` on every table. The scenarios lose events upstream on
# purpose (rs-lossy's dropped slot, Connect down), which the stream checks
# (transitions) may rightly report; what gates the suite is `reapply`: the
# newest batches applied again from bronze into a scratch copy of the mirror
# must give the mirror, whatever the stream held. rs.blocksnap loses nothing,
# and its blocking snapshot reads sort below the creates they re-read:
# transitions must pass there too.
validate_all() {
  local spec tbl rc failed=0
  : >"$RUN/validate.out"
  for spec in $TABLES; do
    IFS=: read -r _ tbl _ _ <<<"$spec"
    set +e
    starter validate "$tbl" --output json >"$RUN/validate-$tbl.json" 2>>"$RUN/logs/starter.out"
    rc=$?
    set -e
    "$PY" - "$tbl" "$rc" "$RUN/validate-$tbl.json" >>"$RUN/validate.out" <<'PY' || failed=$((failed + 1))
import json, sys
tbl, rc, path = sys.argv[1:4]
try:
    r = json.load(open(path))
except Exception as e:
    print(f"{tbl}: no result (exit {rc}: {e})"); sys.exit(1)
checks = ", ".join(f"{c['check']} {c['verdict']}" for c in r.get("checks", []))
skipped = ", ".join(f"{s} ({(r.get('skip_reasons') or {}).get(s, '')})" for s in r.get("skipped") or [])
print(f"{tbl}: exit {rc}; {checks}" + (f"; skipped {skipped}" if skipped else ""))
bad = False
for c in r.get("checks", []):
    if c["check"] == "reapply":
        print(f"  reapply: {c['observed']}; {c['scope']}")
    if c["verdict"] == "fail":
        print(f"  {c['check']} failed: " + "; ".join(f"{f.get('key', '')} {f['what']}" for f in (c.get("findings") or [])[:5]))
        bad = bad or c["check"] == "reapply" or (tbl == "rs.blocksnap" and c["check"] == "transitions")
sys.exit(1 if bad else 0)
PY
  done
  cat "$RUN/validate.out" >&2
  validate_failed=$failed
}
validate_failed=0
step validate validate_all

# --- checks --------------------------------------------------------------------
args=()
for spec in $TABLES; do
  IFS=: read -r src tbl topic _ <<<"$spec"
  args+=(--table "$src=$tbl" --topic "$src=$topic")
  while IFS= read -r l; do args+=(--kafka-end "$l"); done < <(topic_end_offsets "$topic")
  [ -f "$RUN/blocked/$tbl" ] && args+=(--blocked "$tbl=$(cat "$RUN/blocked/$tbl")")
  if [ -f "$RUN/unblocked/$tbl" ]; then
    while IFS= read -r l; do args+=(--unblocked "$tbl=$l"); done <"$RUN/unblocked/$tbl"
  fi
done
args+=(--replayed "$replayed")
args+=(--load "rs.loaded=$RUN/status-rs.loaded-after-load.json"
  --resnapshot "rs.resnap=$RUN/status-rs.resnap-after-resnapshot.json,$RUN/resnap-before.json"
  --incremental "rs.incsnap=${inc_offset0:-0}"
  --blocking "rs.blocksnap=${block_offset_snap:-0}" --blocking "rs.blocktrunc=${block_offset_trunc:-0}")
set +e
(cd "$RS_DIR" && "$PY" check.py --dsn "$(PG_DSN)" --catalog-db "$RUN/lake/catalog.db" --warehouse "$RUN/lake/warehouse" \
  --log "$WLOG" "${args[@]}" \
  ${KNOWN_GAPS:+--known-gaps "$KNOWN_GAPS"} --json "$RUN/check.json") 2>&1 | tee "$RUN/logs/check.out"
check_rc=${PIPESTATUS[0]}
set -e

# --- summary -------------------------------------------------------------------
for spec in $TABLES; do IFS=: read -r _ tbl _ _ <<<"$spec"; status_json "$tbl" >"$RUN/status-$tbl.json" || true; done
export RS_LOSSY_FAILURE="${lossy_failure:-}" RS_LOAD_TXS="${load_started_txs:-?} ${load_done_txs:-?}"
"$PY" - "$RUN" "$WLOG" "$check_rc" "$(($(date +%s) - rs_t0))" "$restarts_connect" "$restarts_worker" "$kill_note" \
  "$(for k in "${!T[@]}"; do printf '%s=%s ' "$k" "${T[$k]}"; done)" "$retry_note" "$replayed" <<'PY'
import json, sys, collections
run, wlog, rc, secs, rc_connect, rc_worker, kill_note, timings, retry_note, replayed = sys.argv[1:11]
log = [json.loads(l) for l in open(wlog)]
ops = collections.Counter(c["op"] for tx in log for c in tx["changes"])
chk = json.load(open(f"{run}/check.json")) if rc in ("0", "1") else {}
print("\n================ real-stack summary ================")
print(f"workload:        {len(log)} transactions, {ops['c']} inserts, {ops['u']} updates, {ops['d']} deletes, "
      f"{ops['t']} truncates, {ops['ddl']} DDL (ADD COLUMN)")
tot_rec = tot_app = 0
for t in sorted(chk.get("tables", {})):
    try:
        s = json.load(open(f"{run}/status-{t}.json"))
    except Exception:
        print(f"{t}: no status"); continue
    tt = s["totals"]
    tb = chk.get("tables", {}).get(t, {}).get("bronze", {})
    tot_rec += tt["records"]; tot_app += tt["applied"]
    bz = (f"Kafka records {tb.get('records')} (Debezium's and replayed; ops {tb.get('ops')}), "
          f"redelivered by Debezium after its kill (seen twice in bronze) {tb.get('redelivered')}, replayed {tb.get('replayed')}"
          if tb else "bronze not checked")
    print(f"{t:14s}   {bz}; pipeline: {tt['batches']} batches, "
          f"{tt['records']} records, {tt['changes']} changes, {tt['applied']} applied, {tt['stale']} stale, "
          f"{tt['duplicates']} duplicate, {tt['tombstones']} tombstones")
print(f"events:          {tot_rec} produced and read, {tot_app} applied")
print(f"rows compared:   {chk.get('rows_compared')} (PostgreSQL live rows, each compared by pyiceberg and by DuckDB iceberg_scan)")
print(f"restarts:        Kafka Connect kill -9 x{rc_connect}, worker kill -9 mid-batch x{rc_worker}")
print(f"                 {kill_note}; killed ApplyBatch after restart: {retry_note}")
if any((chk.get("tables", {}).get(t, {}).get("bronze") or {}).get("redelivered") == 0 for t in ("rs.items",)):
    print("WARNING:         Debezium redelivered nothing after the Connect kill this run (offsets were flushed just before it)")
print(f"late replay:     {replayed} old records of rs.public.items re-appended out of order (must be no-ops)")
import os
def last_load(f):
    try:
        return json.load(open(f)).get("last_load") or {}
    except Exception:
        return {}
def ph(name):
    return [tx for tx in log if tx["phase"] == name]
tim = dict(kv.split("=") for kv in timings.split())
ll = last_load(f"{run}/status-rs.loaded-after-load.json")
started, done = (os.environ.get("RS_LOAD_TXS") or "? ?").split()
if ll:
    P = ll.get("lsn") or 0
    live = ph("loaded_live")
    print(f"initial load:    rs.loaded from PostgreSQL public.loaded: {ll.get('rows')} rows in {ll.get('chunks')} chunks at WAL "
          f"{P >> 32:X}/{P & 0xffffffff:X} while the workload wrote to it ({len(live)} transactions: {started} before the start, "
          f"{sum(1 for t in live if t['lsn_hi'] <= P)} committed before the load's snapshot, "
          f"{sum(1 for t in live if t['lsn_lo'] >= P)} after it); scenario {tim.get('initial_load', '?')}s")
ll = last_load(f"{run}/status-rs.resnap-after-resnapshot.json")
if ll:
    P = ll.get("lsn") or 0
    lost = [c for tx in ph("lossy_outage") for c in tx["changes"]]
    print(f"lost events:     {len(ph('lossy_outage'))} transactions on resnap, incsnap and blocktrunc while Connect was down "
          f"({sum(1 for c in lost if c['op'] == 'd')} deletes, {sum(1 for c in lost if c['op'] == 'u')} updates, "
          f"{sum(1 for c in lost if c['op'] == 'c')} inserts), never streamed: rs-lossy's slot was dropped; after the restart "
          f"{os.environ.get('RS_LOSSY_FAILURE') or '?'}")
    print(f"re-snapshot:     rs.resnap direct: {ll.get('rows')} rows at WAL {P >> 32:X}/{P & 0xffffffff:X}, {ll.get('ghosts')} ghost "
          f"rows soft-deleted, while the workload committed {len(ph('resnap_live'))} transactions on resnap; "
          f"scenario {tim.get('resnapshot', '?')}s")
if "incremental" in tim:
    print(f"incremental:     rs.incsnap through Debezium's execute-snapshot signal: completed in {tim['incremental']}s")
if "blocking" in tim:
    for t in ("rs.blocksnap", "rs.blocktrunc"):
        b = chk.get("tables", {}).get(t, {}).get("blocking") or {}
        fr = b.get("first_read") or {}
        tr = b.get("truncate")
        print(f"blocking:        {t} through Debezium's execute-snapshot signal (type blocking): {b.get('reads', '?')} reads "
              f"from offset {fr.get('offset', '?')}, source {json.dumps(fr.get('source'))} -> _seq {fr.get('_seq')}"
              + (f"; its truncate streamed before them at lsn {tr.get('lsn')} (sequence {tr.get('sequence')})" if tr else ""))
    print(f"                 requested after rs-lossy's reset; completed and caught up in {tim['blocking']}s")
print(f"checks:          {chk.get('checks_passed')} passed, {chk.get('failures')} failed, "
      f"{len(chk.get('known_gaps', []))} known gaps, {len(chk.get('skipped', []))} skipped")
for g in chk.get("known_gaps", []):
    print(f"  known gap: {g[:400]}")
for g in chk.get("skipped", []):
    print(f"  skipped:   {g[:300]}")
for f in chk.get("failed", []):
    print(f"  FAILED:    {f[:600]}")
try:
    for line in open(f"{run}/reconcile.out"):
        print(f"reconcile:       {line.rstrip()}")
except OSError:
    print("reconcile:       not run")
try:
    for line in open(f"{run}/validate.out"):
        print(f"validate:        {line.rstrip()}")
except OSError:
    print("validate:        not run")
print(f"time:            {secs}s total; steps: {timings.strip()}")
print("result:          " + ("PASS" if rc == "0" else "FAIL"))
PY
if [ "$check_rc" = 0 ] && [ "${reconcile_failed:-0}" != 0 ]; then
  log "FAIL: starter reconcile found differences on $reconcile_failed tables ($RUN/reconcile.out)"
  exit 1
fi
if [ "$check_rc" = 0 ] && [ "${validate_failed:-0}" != 0 ]; then
  log "FAIL: starter validate's reapply check failed (or gave no result) on $validate_failed tables ($RUN/validate.out)"
  exit 1
fi
exit "$check_rc"
