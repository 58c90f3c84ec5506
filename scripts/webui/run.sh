#!/usr/bin/env bash
# Screenshots of the Temporal Web UI as the tables' dashboard (issue 35):
# starts the dev worker (embedded Temporal + Web UI, Kafka, SQLite
# catalog) on private ports, a streaming, a paused and a blocked table,
# and opens each table workflow's main page and its "User Metadata" page
# (the current details) in headless Chromium through the DevTools protocol
# (scripts/webui/shots, chromedp). It saves PNG screenshots and the
# pages' text under $OUT (default docs/img) and fails when a page does not
# show the phase, the lag, the offsets and, for the blocked table, the
# last error. Installs Debian's chromium when missing.
#
#   bash scripts/webui/run.sh            # screenshots into docs/img/
#   OUT=/tmp/shots bash scripts/webui/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:--buildvcs=false}
OUT=${OUT:-docs/img}
TPORT=${WEBUI_TEMPORAL_PORT:-27233} # the Web UI is on TPORT+1000
KPORT=${WEBUI_KAFKA_PORT:-29092}
UI="http://127.0.0.1:$((TPORT + 1000))"

if ! command -v chromium >/dev/null; then
  echo "== installing chromium (Debian) for the Web UI screenshots"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
fi

RUN=$(mktemp -d /tmp/lakemirror-webui.XXXXXX)
BIN=${WEBUI_BIN:-$RUN/bin}
mkdir -p "$BIN" "$OUT"
WORKER_PID=
cleanup() {
  if [ -n "$WORKER_PID" ] && kill -0 "$WORKER_PID" 2>/dev/null; then
    kill "$WORKER_PID"; wait "$WORKER_PID" 2>/dev/null || true
  fi
  rm -rf "$RUN"
}
trap cleanup EXIT

echo "== building the dev worker, the starter and shots"
[ -x "$BIN/worker-dev" ] || go build -o "$BIN/worker-dev" ./worker/dev
[ -x "$BIN/starter" ] || go build -o "$BIN/starter" ./starter
[ -x "$BIN/shots" ] || (cd scripts/webui/shots && go build -o "$BIN/shots" .)

export LAKEMIRROR_DATA_DIR=$RUN/data TEMPORAL_ADDRESS=127.0.0.1:$TPORT KAFKA_BROKERS=127.0.0.1:$KPORT
echo "== dev worker (Temporal on :$TPORT, Web UI $UI, Kafka on :$KPORT)"
# the dev worker always embeds Temporal, and embeds Kafka unless
# KAFKA_BROKERS names one: both variables here are for the starter
env -u KAFKA_BROKERS -u TEMPORAL_ADDRESS "$BIN/worker-dev" -dev-temporal-port "$TPORT" -dev-kafka-port "$KPORT" -worker-id webui >"$RUN/worker.log" 2>&1 &
WORKER_PID=$!
for _ in $(seq 1 120); do
  curl -fsS "$UI" >/dev/null 2>&1 && "$BIN/starter" list >/dev/null 2>&1 && break
  kill -0 "$WORKER_PID" || { cat "$RUN/worker.log"; exit 1; }
  sleep 1
done
S() { "$BIN/starter" "$@"; }

echo "== three tables: streaming, paused, blocked"
S produce shop.public.orders >/dev/null
S produce shop.public.payments --seed 2 >/dev/null
S start shop.public.orders --table shop.orders --key order_id --batch-size 50 --schedules=false | tee -a "$RUN/started.txt"
S start shop.public.payments --table shop.payments --key order_id --batch-size 50 --schedules=false | tee -a "$RUN/started.txt"
# 120 records that are no Debezium change events: more than the default
# quarantine limit (100 a batch), so the table blocks (QuarantineLimit)
for i in $(seq 1 120); do echo "k$i^{\"not\":\"a change event\",\"n\":$i}"; done >"$RUN/bad.txt"
S produce shop.public.refunds --events "$RUN/bad.txt" >/dev/null
S start shop.public.refunds --table shop.refunds --key order_id --schedules=false | tee -a "$RUN/started.txt"
S wait shop.orders >/dev/null
S wait shop.payments >/dev/null
S pause shop.payments
S produce shop.public.orders >/dev/null # streaming: more arrives (a redelivery of the same source history)
for _ in $(seq 1 60); do
  S status shop.refunds --output json | grep -q '"phase": "blocked"' && S status shop.payments --output json | grep -q '"phase": "paused"' && break
  sleep 1
done
S list

# NAME TABLE MAIN DETAILS: the workflow's main page (Event History: Temporal
# UI 2.55 shows the input and the events there, with each activity's and
# timer's summary: ApplyBatch names the phase, batch, ranges and the lag
# it leaves; a paused or blocked table's timer says why, the lag, the
# offsets, the last error and the command that goes on, its row opened
# by "click:") and its "User Metadata" tab (the summary, details and
# current details the workflow keeps), each with the strings it must show
page() {
  local id run
  id="lakemirror-table-$2" # workflows.WorkflowID
  # the run id as start printed it: "started T (workflow ID, run RUN) reading TOPIC"
  run=$(sed -n "s/^started $2 (workflow $id, run \([^)]*\)).*/\1/p" "$RUN/started.txt" | head -1)
  [ -n "$run" ] || { echo "no run id for $2 in $RUN/started.txt" >&2; exit 1; }
  echo "$1-main=$UI/namespaces/default/workflows/$id/$run/history=$3"
  echo "$1-details=$UI/namespaces/default/workflows/$id/$run/user-metadata=$4"
}
mapfile -t PAGES < <(
  page webui-streaming shop.orders "lakemirror-table-shop.orders|stream · batch shop.orders#|queued behind it|plan next batch of shop.public.orders" \
    "Phase: stream|Lag:|offset (next to read)|Last batches|Iceberg snapshots|Settings"
  page webui-paused shop.payments "click:Timer Started|lakemirror-table-shop.payments|stream · batch shop.payments#|paused · lag|p0 at|starter resume shop.payments" \
    "Phase: paused|Lag:|offset (next to read)|starter resume shop.payments"
  page webui-blocked shop.refunds "click:Timer Started|lakemirror-table-shop.refunds|batch shop.refunds#1|blocked · QuarantineLimit|lag 120 records|p0 at 0 of 120|starter retry shop.refunds" \
    "Phase: blocked|Lag:|offset (next to read)|Last error:|QuarantineLimit|starter retry shop.refunds"
)
printf '  %s\n' "${PAGES[@]}"
echo "== screenshots (headless Chromium) into $OUT"
"$BIN/shots" -out "$OUT" -width 1920 -chrome "$(command -v chromium)" "${PAGES[@]}"
