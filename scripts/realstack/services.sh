# shellcheck shell=bash
# Start/stop functions for the real stack, all on 127.0.0.1 and all state
# under $RUN. Sourced by run.sh after lib.sh; expects RUN, PG_PORT,
# KAFKA_PORT, KAFKA_CTRL_PORT, CONNECT_PORT, TEMPORAL_PORT.

PG_DB=lakemirror_rs
PG_DSN() { echo "host=127.0.0.1 port=$PG_PORT dbname=$PG_DB user=postgres"; }
CONNECTOR=rs-postgres
TOPIC_PREFIX=rs
# The second connector: resnap, incsnap, blocksnap and blocktrunc, streamed only
# (snapshot.mode=no_data: lakemirror's direct loads copy their rows), with
# Debezium's Kafka signaling channel for incremental and blocking snapshots.
# run.sh drops its slot while Connect is down.
LOSSY_CONNECTOR=rs-lossy
LOSSY_PREFIX=rsl
LOSSY_SLOT=lakemirror_rsl
SIGNAL_TOPIC=rsl-signal

# --- PostgreSQL: a private cluster (initdb + pg_ctl), no system service ---
start_postgres() {
  local data="$RUN/pg/data"
  mkdir -p "$RUN/pg"
  [ "$(id -u)" = 0 ] && chown postgres "$RUN/pg" "$RUN/logs"
  as_pg "$PG_BIN/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --no-locale >"$RUN/logs/initdb.log" 2>&1 ||
    { cat "$RUN/logs/initdb.log" >&2; die "initdb failed"; }
  cat >>"$data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$RUN/pg'
wal_level = logical
max_replication_slots = 4
max_wal_senders = 4
track_commit_timestamp = on
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 128MB
timezone = 'UTC'
log_min_messages = warning
EOF
  as_pg "$PG_BIN/pg_ctl" -D "$data" -l "$RUN/logs/postgres.log" -w -t 60 start >/dev/null ||
    { tail -n 30 "$RUN/logs/postgres.log" >&2; die "PostgreSQL did not start"; }
  psql -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -c "CREATE DATABASE $PG_DB" >/dev/null
  log "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT (wal_level=logical)"
}

stop_postgres() {
  local data="$RUN/pg/data"
  [ -f "$data/postmaster.pid" ] || return 0
  as_pg "$PG_BIN/pg_ctl" -D "$data" -m fast -w -t 30 stop >/dev/null 2>&1 || {
    local p
    p=$(head -n1 "$data/postmaster.pid" 2>/dev/null) && [ -n "$p" ] && kill -KILL "$p" 2>/dev/null || true
  }
}

# --- Kafka (KRaft, one combined broker+controller) -------------------------
kafka_java() { java -Xms128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$KAFKA_HOME/libs/*" "$@"; }

write_log4j() { # FILE LOGFILE ROOTLEVEL [logger=level ...]
  local f=$1 lf=$2 root=$3 i=0; shift 3
  {
    echo "status = warn"
    echo "appender.f.type = File"
    echo "appender.f.name = F"
    echo "appender.f.fileName = $lf"
    echo "appender.f.layout.type = PatternLayout"
    echo "appender.f.layout.pattern = [%d] %p %m (%c)%n"
    echo "rootLogger = $root, F"
    for kv in "$@"; do
      i=$((i + 1))
      echo "logger.l$i.name = ${kv%%=*}"
      echo "logger.l$i.level = ${kv#*=}"
    done
  } >"$f"
}

start_kafka() {
  local dir="$RUN/kafka"
  mkdir -p "$dir/data"
  cat >"$dir/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CTRL_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CTRL_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data
num.partitions=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
log.retention.hours=-1
log.retention.bytes=-1
num.network.threads=2
num.io.threads=2
background.threads=2
EOF
  write_log4j "$dir/log4j2.properties" "$RUN/logs/kafka.log" WARN kafka.server.KafkaServer=INFO
  local id
  id=$(kafka_java kafka.tools.StorageTool random-uuid 2>>"$RUN/logs/kafka.log")
  kafka_java -Dlog4j2.configurationFile="$dir/log4j2.properties" kafka.tools.StorageTool format -t "$id" -c "$dir/server.properties" >>"$RUN/logs/kafka.log" 2>&1 ||
    { tail -n 20 "$RUN/logs/kafka.log" >&2; die "kafka storage format failed"; }
  start_bg kafka "$RUN/logs/kafka.out" java -Xmx512m -Xms256m -XX:+UseSerialGC \
    -Dlog4j2.configurationFile="$dir/log4j2.properties" -Dkafka.logs.dir="$RUN/logs" \
    -cp "$KAFKA_HOME/libs/*" kafka.Kafka "$dir/server.properties"
  wait_port "$KAFKA_PORT" 120 "Kafka"
  log "Kafka $KAFKA_VERSION (KRaft) on 127.0.0.1:$KAFKA_PORT"
}

# topic_end_offsets TOPIC...: "topic:partition:endoffset" lines from the broker.
topic_end_offsets() {
  local t
  for t in "$@"; do
    kafka_java -Dlog4j2.configurationFile="$RUN/kafka/log4j2.properties" org.apache.kafka.tools.GetOffsetShell \
      --bootstrap-server "127.0.0.1:$KAFKA_PORT" --topic "$t" --time latest 2>>"$RUN/logs/tools.log" || true
  done
}

# create_topic NAME: a topic with one partition (e.g. a connector's signal topic).
create_topic() {
  kafka_java -Dlog4j2.configurationFile="$RUN/kafka/log4j2.properties" org.apache.kafka.tools.TopicCommand \
    --bootstrap-server "127.0.0.1:$KAFKA_PORT" --create --if-not-exists --topic "$1" --partitions 1 --replication-factor 1 \
    >>"$RUN/logs/tools.log" 2>&1 || die "creating topic $1 failed (see $RUN/logs/tools.log)"
}

# --- Kafka Connect (distributed mode: config and offsets live in Kafka) ----
start_connect() {
  local dir="$RUN/connect"
  mkdir -p "$dir"
  cat >"$dir/worker.properties" <<EOF
bootstrap.servers=127.0.0.1:$KAFKA_PORT
group.id=lakemirror-realstack
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=true
value.converter.schemas.enable=true
config.storage.topic=_rs_connect_configs
offset.storage.topic=_rs_connect_offsets
status.storage.topic=_rs_connect_status
config.storage.replication.factor=1
offset.storage.replication.factor=1
offset.storage.partitions=1
status.storage.replication.factor=1
status.storage.partitions=1
# Source offsets (and so the slot's confirmed LSN) are committed every 15 s:
# a kill -9 shortly after a burst makes the restarted task redeliver it.
offset.flush.interval.ms=15000
listeners=http://127.0.0.1:$CONNECT_PORT
rest.advertised.host.name=127.0.0.1
rest.advertised.port=$CONNECT_PORT
plugin.path=$DEBEZIUM_PLUGINS
plugin.discovery=only_scan
connect.protocol=eager
scheduled.rebalance.max.delay.ms=0
session.timeout.ms=10000
heartbeat.interval.ms=3000
EOF
  write_log4j "$dir/log4j2.properties" "$RUN/logs/connect.log" WARN io.debezium=INFO \
    org.apache.kafka.connect.runtime.Worker=INFO org.apache.kafka.connect.runtime.distributed.DistributedHerder=INFO
  start_bg connect "$RUN/logs/connect.out" java -Xmx768m -Xms256m -XX:+UseSerialGC \
    -Dlog4j2.configurationFile="$dir/log4j2.properties" \
    -cp "$KAFKA_HOME/libs/*" org.apache.kafka.connect.cli.ConnectDistributed "$dir/worker.properties"
  local i
  for ((i = 0; i < 240; i++)); do
    curl -fsS "http://127.0.0.1:$CONNECT_PORT/connector-plugins" 2>/dev/null | grep -q PostgresConnector && break
    alive connect || { tail -n 30 "$RUN/logs/connect.log" "$RUN/logs/connect.out" >&2; die "Kafka Connect exited"; }
    sleep 0.5
  done
  ((i < 240)) || die "Kafka Connect REST API did not list the Debezium PostgresConnector within 120s"
  log "Kafka Connect on http://127.0.0.1:$CONNECT_PORT (Debezium $DEBEZIUM_VERSION plugin loaded)"
}

register_connector() {
  local cfg
  # loaded is captured from the start (its slot exists before lakemirror's
  # direct load of it begins) but left out of Debezium's initial snapshot
  # (snapshot.include.collection.list): the direct load is its only initial copy.
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
  "table.include.list": "public.items,public.trunc_demo,public.amounts,public.rs_marker,public.loaded",
  "snapshot.include.collection.list": "public.items,public.trunc_demo,public.amounts,public.rs_marker",
  "slot.name": "lakemirror_rs",
  "publication.name": "lakemirror_rs",
  "publication.autocreate.mode": "filtered",
  "snapshot.mode": "initial",
  "tombstones.on.delete": "true",
  "skipped.operations": "none",
  "decimal.handling.mode": "precise",
  "time.precision.mode": "adaptive_time_microseconds",
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
  log "registered connector $CONNECTOR (pgoutput, slot lakemirror_rs, topic prefix $TOPIC_PREFIX)"
}

# lossy_config: the second connector's configuration (JSON).
lossy_config() {
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
  "topic.prefix": "$LOSSY_PREFIX",
  "table.include.list": "public.resnap,public.incsnap,public.blocksnap,public.blocktrunc,public.debezium_signal,public.rsl_marker",
  "slot.name": "$LOSSY_SLOT",
  "publication.name": "$LOSSY_SLOT",
  "publication.autocreate.mode": "filtered",
  "snapshot.mode": "no_data",
  "signal.enabled.channels": "source,kafka",
  "signal.data.collection": "public.debezium_signal",
  "signal.kafka.topic": "$SIGNAL_TOPIC",
  "signal.kafka.bootstrap.servers": "127.0.0.1:$KAFKA_PORT",
  "notification.enabled.channels": "log",
  "tombstones.on.delete": "true",
  "skipped.operations": "none",
  "decimal.handling.mode": "precise",
  "time.precision.mode": "adaptive_time_microseconds",
  "include.schema.changes": "false",
  "key.converter": "org.apache.kafka.connect.json.JsonConverter",
  "key.converter.schemas.enable": "true",
  "value.converter": "org.apache.kafka.connect.json.JsonConverter",
  "value.converter.schemas.enable": "true"
}
EOF
}

register_lossy_connector() {
  curl -fsS -X PUT -H 'Content-Type: application/json' --data "$(lossy_config)" \
    "http://127.0.0.1:$CONNECT_PORT/connectors/$LOSSY_CONNECTOR/config" >"$RUN/logs/connector-register-lossy.json" ||
    die "registering the connector $LOSSY_CONNECTOR failed: $(cat "$RUN/logs/connector-register-lossy.json" 2>/dev/null)"
  log "registered connector $LOSSY_CONNECTOR (pgoutput, slot $LOSSY_SLOT, topic prefix $LOSSY_PREFIX, snapshot.mode=no_data, TRUNCATE emitted, signals: source + Kafka topic $SIGNAL_TOPIC)"
}

# connect_rest METHOD PATH [BODY]: a Kafka Connect REST call; prints the response.
connect_rest() {
  curl -sS -X "$1" -H 'Content-Type: application/json' ${3:+--data "$3"} "http://127.0.0.1:$CONNECT_PORT$2"
}

# connector_state NAME: "<connector state> <task states...>" (e.g. "RUNNING RUNNING").
connector_state() {
  connect_rest GET "/connectors/$1/status" 2>/dev/null | python3 -c 'import json,sys
try:
    s = json.load(sys.stdin)
    print(s["connector"]["state"], *[t["state"] for t in s.get("tasks") or []])
except Exception:
    print("UNKNOWN")'
}

# psql_q SQL: one query against the suite's database, unaligned output.
psql_q() { psql -X -q -At -h 127.0.0.1 -p "$PG_PORT" -U postgres -d "$PG_DB" -c "$1"; }

# wait_slot NAME SECONDS: the replication slot exists.
wait_slot() {
  local i
  for ((i = 0; i < $2 * 2; i++)); do
    [ "$(psql_q "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '$1'")" = 1 ] && return 0
    sleep 0.5
  done
  die "replication slot $1 does not exist after ${2}s"
}

# wait_connector_running SECONDS [NAME]: the connector and its task are RUNNING.
wait_connector_running() {
  local secs=$1 name=${2:-$CONNECTOR} i st
  for ((i = 0; i < secs * 2; i++)); do
    st=$(curl -fsS "http://127.0.0.1:$CONNECT_PORT/connectors/$name/status" 2>/dev/null || true)
    if [ -n "$st" ] && python3 -c 'import json,sys; s=json.load(sys.stdin); t=s.get("tasks") or []; sys.exit(0 if s["connector"]["state"]=="RUNNING" and t and all(x["state"]=="RUNNING" for x in t) else 1)' <<<"$st"; then
      return 0
    fi
    if grep -q '"FAILED"' <<<"$st"; then die "connector failed: $st"; fi
    sleep 0.5
  done
  die "connector not RUNNING after ${secs}s: $st"
}

# --- Temporal (embedded dev server, via rsctl) and the pipeline worker -----
start_temporal() {
  mkdir -p "$RUN/temporal"
  start_bg temporal "$RUN/logs/temporal.log" "$RUN/bin/rsctl" temporal -port "$TEMPORAL_PORT" -db "$RUN/temporal/temporal.db"
  local i
  for ((i = 0; i < 240; i++)); do
    grep -q "temporal ready" "$RUN/logs/temporal.log" && break
    alive temporal || { tail -n 30 "$RUN/logs/temporal.log" >&2; die "Temporal exited"; }
    sleep 0.5
  done
  ((i < 240)) || die "Temporal did not become ready within 120s"
  log "Temporal dev server on 127.0.0.1:$TEMPORAL_PORT"
}

start_worker() {
  start_bg worker "$RUN/logs/worker.log" "$RUN/bin/worker" -log-level info
  local i
  for ((i = 0; i < 120; i++)); do
    [ "$(grep -c "worker running" "$RUN/logs/worker.log")" -ge "$1" ] && return 0
    alive worker || { tail -n 30 "$RUN/logs/worker.log" >&2; die "the worker exited"; }
    sleep 0.5
  done
  die "the worker did not start within 60s"
}
