#!/usr/bin/env bash
# Transaction-consistent cuts on the real stack (issue 37):
#
#   PostgreSQL 15 ──Debezium (provide.transaction.metadata)──▶ Kafka ──▶ lakemirror (one source group)
#                                                                        │ cut-<n> tags, <ns>._cuts
#                          pyiceberg + DuckDB read every published cut ◀─┘
#
# A bank-transfer workload over bank_a and bank_b (every transaction moves
# money between a row of each), orders with their items in one transaction
# (orders, order_items), order deletions, and mixed transactions, while the
# worker is killed with SIGKILL at random (RS_CUT_KILLS times, restarted
# each time) and one table (order_items, small batches) is paused for
# RS_CUT_PAUSE seconds and then has to catch up by many batches. Then every
# published cut (rows of cs._cuts) is read with pyiceberg and DuckDB at its
# snapshot ids and checked (cuts.py): the total balance is the seeded one,
# every order has all its items, the mirror equals the source state right
# after the cut's transaction, and the history as of W equals the mirror.
#
# Reuses lib.sh and services.sh (PostgreSQL, Kafka, Connect, Temporal,
# worker), setup.sh's cache and check.py's readers.
#
# Environment (besides lib.sh's LAKEMIRROR_CACHE):
#   RS_KEEP=1           keep the run directory
#   RS_PREBUILT=DIR     worker, starter and rsctl from DIR instead of go build
#   RS_CUT_KILLS=N      worker kill -9 count (default 20; exit 1 below 20 unless RS_CUT_MIN_KILLS says less)
#   RS_CUT_MIN_KILLS=N  kills required for exit 0 (default 20)
#   RS_CUT_PAUSE=S      seconds order_items stays paused (default 150)
#   RS_CUT_KILL_GAP=A-B seconds between kills, uniformly at random (default 8-25)
#   RS_CUT_MIN_CUTS=N   published cuts required (default 3)
#   RS_CUT_RATE=TPS     workload transactions per second at most (default 15)
set -euo pipefail
RS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export rs_t0=$(date +%s)
# shellcheck source=lib.sh
. "$RS_DIR/lib.sh"
# shellcheck source=services.sh
. "$RS_DIR/services.sh"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:--buildvcs=false} PYTHONDONTWRITEBYTECODE=1

KILLS=${RS_CUT_KILLS:-20}
MIN_KILLS=${RS_CUT_MIN_KILLS:-20}
PAUSE_SECS=${RS_CUT_PAUSE:-150}
KILL_GAP=${RS_CUT_KILL_GAP:-8-25}
MIN_CUTS=${RS_CUT_MIN_CUTS:-3}
RATE=${RS_CUT_RATE:-15}
PG_DB=lakemirror_cuts
CONNECTOR=cs-postgres
TOPIC_PREFIX=cs
NS=cs
GROUP=bank
TX_TOPIC=$TOPIC_PREFIX.transaction
LAG_TABLE=$NS.order_items
CUT_TABLES="bank_a bank_b orders order_items"

bash "$RS_DIR/setup.sh"
RUN=$(mktemp -d /tmp/lakemirror-cuts.XXXXXX)
chmod 755 "$RUN"
mkdir -p "$RUN/pids" "$RUN/logs" "$RUN/bin"
export RUN
log "run directory $RUN"

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  log "cleanup: stopping everything this run started"
  touch "$RUN/stop-workload"
  stop_bg sampler
  stop_bg workload
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
export METRICS_ADDR=127.0.0.1:$METRICS_PORT
PY="$VENV/bin/python"
WLOG="$RUN/workload.jsonl"
cutspy() { "$PY" "$RS_DIR/cuts.py" "$@"; }
starter() { "$RUN/bin/starter" "$@"; }
groupcut() { "$RUN/bin/rsctl" groupcut -address "$TEMPORAL_ADDRESS" -group "$GROUP"; }
# gfield EXPR: a Python expression over the group's cut query g (empty on error)
gfield() { groupcut 2>/dev/null | "$PY" -c "import json,sys; g=json.load(sys.stdin); print($1)" 2>/dev/null || true; }
status_field() { starter status --json "$1" 2>/dev/null | "$PY" -c "import json,sys; s=json.load(sys.stdin); print($2)" 2>/dev/null || true; }

if [ -n "${RS_PREBUILT:-}" ]; then
  cp "$RS_PREBUILT/worker" "$RS_PREBUILT/starter" "$RS_PREBUILT/rsctl" "$RUN/bin/"
  log "using prebuilt binaries from $RS_PREBUILT"
else
  log "building worker, starter and rsctl (go build)"
  (cd "$REPO_ROOT" && go build -o "$RUN/bin/" ./worker ./starter ./scripts/realstack/rsctl) >"$RUN/logs/build.log" 2>&1 ||
    { cat "$RUN/logs/build.log" >&2; die "go build failed"; }
fi

# --- the stack ----------------------------------------------------------------
start_postgres
cutspy seed --dsn "$(PG_DSN)" >>"$RUN/logs/workload.out"
log "seeded: $(tail -n1 "$RUN/logs/workload.out")"
start_kafka
start_connect
register_cut_connector() {
  local cfg
  cfg=$(
    cat <<EOF
{
  "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
  "tasks.max": "1",
  "plugin.name": "pgoutput",
  "database.hostname": "127.0.0.1",
  "database.port": "$PG_PORT",
  "database.user": "postgres",
  "database.password": "unused-trust-auth",
  "database.dbname": "$PG_DB",
  "topic.prefix": "$TOPIC_PREFIX",
  "table.include.list": "public.bank_a,public.bank_b,public.orders,public.order_items",
  "slot.name": "lakemirror_cuts",
  "publication.name": "lakemirror_cuts",
  "publication.autocreate.mode": "filtered",
  "snapshot.mode": "initial",
  "provide.transaction.metadata": "true",
  "tombstones.on.delete": "true",
  "decimal.handling.mode": "precise",
  "include.schema.changes": "false",
  "key.converter": "org.apache.kafka.connect.json.JsonConverter",
  "key.converter.schemas.enable": "true",
  "value.converter": "org.apache.kafka.connect.json.JsonConverter",
  "value.converter.schemas.enable": "true"
}
EOF
  )
  curl -fsS -X PUT -H 'Content-Type: application/json' --data "$cfg" \
    "http://127.0.0.1:$CONNECT_PORT/connectors/$CONNECTOR/config" >"$RUN/logs/connector-register.json" ||
    die "registering the connector failed: $(cat "$RUN/logs/connector-register.json" 2>/dev/null)"
  log "registered connector $CONNECTOR (topic prefix $TOPIC_PREFIX, provide.transaction.metadata=true: $TX_TOPIC)"
}
register_cut_connector
wait_connector_running 120 "$CONNECTOR"
wait_slot lakemirror_cuts 60
start_temporal
start_worker 1
worker_starts=1

cat >"$RUN/pipelines.yaml" <<EOF
defaults:
  batch_size: 200
  max_wait: 1s
  group: $GROUP
  maintenance: {compact_every: "off", expire_every: "off", purge_every: "off"}
groups:
  $GROUP:
    transaction_topic: $TX_TOPIC
pipelines:
  - {topic: $TOPIC_PREFIX.public.bank_a, table: $NS.bank_a, key: id}
  - {topic: $TOPIC_PREFIX.public.bank_b, table: $NS.bank_b, key: id}
  - {topic: $TOPIC_PREFIX.public.orders, table: $NS.orders, key: id}
  # the lagging table: small batches, paused for a while below
  - {topic: $TOPIC_PREFIX.public.order_items, table: $NS.order_items, key: [order_id, line], batch_size: 20}
EOF
starter apply -f "$RUN/pipelines.yaml" --yes >"$RUN/logs/apply.out" 2>&1 || { cat "$RUN/logs/apply.out" >&2; die "starter apply failed"; }
log "starter apply: group $GROUP (transaction topic $TX_TOPIC): $CUT_TABLES (cut interval: the group's default, 1 minute; the starter does not set GroupInput.CutEvery)"

# the cut's lag, sampled: now - the published cut's source commit time
start_bg sampler "$RUN/logs/sampler.log" bash -c '
  while :; do
    now=$(date +%s.%N)
    out=$("$0" groupcut -address "$1" -group "$2" 2>/dev/null) && echo "$now $out" >>"$3"
    sleep 5
  done' "$RUN/bin/rsctl" "$TEMPORAL_ADDRESS" "$GROUP" "$RUN/groupcut-raw.log"

start_bg workload "$RUN/logs/workload.log" "$PY" "$RS_DIR/cuts.py" run --dsn "$(PG_DSN)" --log "$WLOG" --stop-file "$RUN/stop-workload" --rate "$RATE"

# applied offsets of the four tables, one line
offsets_of() { local t; for t in $CUT_TABLES; do status_field "$NS.$t" 's["offsets"].get("0", 0)'; done | paste -sd' '; }

# --- faults: kill -9 the worker at random, pause one table ----------------------
kills=0
recoveries=()
pause_at=$((KILLS / 3))
paused_since=""
lag_note=""
gap_lo=${KILL_GAP%-*} gap_hi=${KILL_GAP#*-}
# wait for the tables to apply something first
for ((i = 0; i < 120; i++)); do
  o=$(offsets_of)
  [[ $o =~ ^[1-9][0-9]*\ [1-9][0-9]*\ [1-9][0-9]*\ [1-9][0-9]*$ ]] && break
  sleep 1
done
log "tables applying (offsets $o); first cut: $(gfield 'g.get("number")')"
phase() { echo "$1 $(date +%s.%N)" >>"$RUN/phases.txt"; }
phase kills_start
while ((kills < KILLS)); do
  if ((kills == pause_at)) && [ -z "$paused_since" ]; then
    starter pause "$LAG_TABLE" >>"$RUN/logs/starter.out" 2>&1 || die "starter pause $LAG_TABLE failed"
    paused_since=$SECONDS
    phase pause_start
    log "paused $LAG_TABLE (for ${PAUSE_SECS}s; the group cannot freeze it: its cuts are given up meanwhile)"
  fi
  if [ -n "$paused_since" ] && [ "$paused_since" != done ] && ((SECONDS - paused_since >= PAUSE_SECS)); then
    behind=$(status_field "$LAG_TABLE" 's.get("total_lag")')
    starter resume "$LAG_TABLE" >>"$RUN/logs/starter.out" 2>&1 || die "starter resume $LAG_TABLE failed"
    lag_note="$LAG_TABLE paused $((SECONDS - paused_since))s, then $behind records behind (batch size 20: ~$(((${behind:-0} + 19) / 20)) batches)"
    phase pause_end
    log "resumed: $lag_note"
    paused_since=done
  fi
  sleep "$((gap_lo + RANDOM % (gap_hi - gap_lo + 1)))"
  before=$(offsets_of)
  kill9 worker
  kills=$((kills + 1))
  t_kill=$(date +%s.%N)
  sleep "$((RANDOM % 3))"
  worker_starts=$((worker_starts + 1))
  start_worker "$worker_starts"
  # recovered: every table not paused applied past its offsets at the kill
  # (or has nothing more to apply: the workload writes every table often)
  rec=""
  for ((i = 0; i < 600; i++)); do
    now=$(offsets_of)
    ok=1
    read -ra b <<<"$before"
    read -ra c <<<"$now"
    j=0
    for t in $CUT_TABLES; do
      if [ "$NS.$t" = "$LAG_TABLE" ] && [ -n "$paused_since" ] && [ "$paused_since" != done ]; then j=$((j + 1)); continue; fi
      ((${c[$j]:-0} > ${b[$j]:-0})) || ok=0
      j=$((j + 1))
    done
    if ((ok)); then rec=$("$PY" -c "import time; print(round(time.time() - $t_kill, 1))"); break; fi
    sleep 0.5
  done
  [ -n "$rec" ] || die "after kill $kills the tables did not apply anything within 5 minutes (offsets $before -> $now)"
  recoveries+=("$rec")
  log "kill $kills/$KILLS: recovered in ${rec}s (offsets $before -> $now); published cut $(gfield '"%s, cuts given up %s" % ((g.get("published") or {}).get("number", 0), g.get("aborts", 0))')"
done
if [ "$paused_since" != done ]; then
  [ -z "$paused_since" ] && { starter pause "$LAG_TABLE" >>"$RUN/logs/starter.out" 2>&1; paused_since=$SECONDS; phase pause_start; }
  while ((SECONDS - paused_since < PAUSE_SECS)); do sleep 1; done
  behind=$(status_field "$LAG_TABLE" 's.get("total_lag")')
  starter resume "$LAG_TABLE" >>"$RUN/logs/starter.out" 2>&1 || die "starter resume $LAG_TABLE failed"
  lag_note="$LAG_TABLE paused $((SECONDS - paused_since))s, then $behind records behind (batch size 20: ~$(((${behind:-0} + 19) / 20)) batches)"
  phase pause_end
  log "resumed: $lag_note"
fi

# --- quiesce: stop the workload, let two more cuts publish ----------------------
phase kills_end
n_stop=$(gfield 'g.get("published", {}).get("number", 0)')
log "faults done ($kills kills); published cut at this point: ${n_stop:-none}; the workload runs 60s more"
sleep 60
touch "$RUN/stop-workload"
phase workload_end
for ((i = 0; i < 120; i++)); do alive workload || break; sleep 0.5; done
log "workload: $(tail -n1 "$RUN/logs/workload.log")"
target=$((${n_stop:-0} + 2))
s=$SECONDS
while (($(gfield 'g.get("published", {}).get("number", 0)' || echo 0) < target)); do
  ((SECONDS - s < 300)) || { log "no cut $target within 300s: $(groupcut)"; break; }
  sleep 3
done
stop_bg sampler
groupcut >"$RUN/groupcut-final.json" 2>&1 || true
log "group cut query: $(cat "$RUN/groupcut-final.json" | "$PY" -c 'import json,sys; g=json.load(sys.stdin); p=g.get("published") or {}; print("published cut %s W %s tx %s; aborts %s; last abort: %s; pending %s" % (p.get("number"), p.get("w"), p.get("tx_id"), g.get("aborts", 0), g.get("last_abort", ""), json.dumps(g.get("pending"))))' 2>&1)"
# samples: now - the published cut's source commit time
"$PY" - "$RUN/groupcut-raw.log" >"$RUN/lag-samples.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    now, _, js = line.partition(" ")
    g = json.loads(js)
    p = g.get("published") or {}
    lag = float(now) - p["source_ts_ms"] / 1000 if p.get("source_ts_ms") else None
    print(json.dumps({"at": float(now), "cut": p.get("number"), "lag_s": lag, "aborts": g.get("aborts", 0)}))
PY

# --- check every published cut ------------------------------------------------------
rc=0
cutspy check --dsn "$(PG_DSN)" --log "$WLOG" --catalog-db "$RUN/lake/catalog.db" --warehouse "$RUN/lake/warehouse" \
  --ns "$NS" --group "$GROUP" --samples "$RUN/lag-samples.jsonl" --phases "$RUN/phases.txt" --json "$RUN/cuts-check.json" --min-cuts "$MIN_CUTS" \
  >"$RUN/logs/check.log" 2>&1 || rc=1
cat "$RUN/logs/check.log" >&2
aborts=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1])).get("aborts", 0))' "$RUN/groupcut-final.json" 2>/dev/null || echo "?")
rec_stats=$(printf '%s\n' "${recoveries[@]}" | sort -n | awk '{a[NR]=$1} END {if (NR) printf "min %.1fs median %.1fs max %.1fs", a[1], a[int((NR+1)/2)], a[NR]}')
log "summary: $kills worker kills (kill -9, recovery $rec_stats), cuts given up: $aborts, $lag_note"
log "summary: $(tail -n2 "$RUN/logs/check.log" | head -n1)"
if ((kills < MIN_KILLS)); then
  log "FAIL: $kills kills, want at least $MIN_KILLS"
  rc=1
fi
((rc == 0)) && log "PASS" || log "FAIL (see $RUN/logs/check.log, $RUN/cuts-check.json)"
exit "$rc"
