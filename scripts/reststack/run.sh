#!/usr/bin/env bash
# The REST-catalog suite: proves that lakemirror runs unchanged against an
# Iceberg REST catalog with its tables in S3-compatible storage.
#
#   Apache Iceberg's RESTCatalogServer (JdbcCatalog on SQLite, S3FileIO) ──┐
#   moto_server (S3 API, bucket "lakemirror")  ◀──────────────────────────┤
#   go test -run TestRESTCatalogS3EndToEnd ./worker/runner                  │
#     (embedded Temporal + kfake; CATALOG_TYPE=rest, WAREHOUSE=s3://…) ─────┘
#   pyiceberg (independent reader, same REST catalog and S3) compares again
#
# Everything runs on 127.0.0.1 on free ports, under a temporary run
# directory, and is stopped on exit (only the processes this script
# started, by pid). Artifacts are cached in $LAKEMIRROR_CACHE.
# Exit status: 0 when the Go test passed (and did not skip) and the
# pyiceberg comparison matched; 1 otherwise.
#
# Environment:
#   LAKEMIRROR_CACHE  artifact cache (default ~/.cache/lakemirror-reststack)
#   RS_KEEP=1         keep the run directory (logs, report) even on success
#   RS_SETUP_ONLY=1   fetch and cache the artifacts, start nothing
set -euo pipefail
RS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$RS_DIR/../.." && pwd)
# shellcheck source=versions.env
. "$RS_DIR/versions.env"
LAKEMIRROR_CACHE=${LAKEMIRROR_CACHE:-${HOME:-/root}/.cache/lakemirror-reststack}
REST_LIBS="$LAKEMIRROR_CACHE/rest-catalog-$ICEBERG_VERSION/libs"
VENV="$LAKEMIRROR_CACHE/venv-$(sha1sum "$RS_DIR/requirements.txt" | cut -c1-10)"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:--buildvcs=false} PYTHONDONTWRITEBYTECODE=1

rs_t0=$(date +%s)
log() { printf '[reststack %4ds] %s\n' "$(($(date +%s) - rs_t0))" "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }
declare -A T # step timings
step() { # NAME CMD...: run and time a step
  local name=$1 s
  s=$(date +%s)
  shift
  "$@"
  T[$name]=$(($(date +%s) - s))
}

# --- setup (cached) --------------------------------------------------------------
dep() { # GROUP ARTIFACT VERSION [CLASSIFIER]
  printf '    <dependency><groupId>%s</groupId><artifactId>%s</artifactId><version>%s</version>%s</dependency>\n' \
    "$1" "$2" "$3" "${4:+<classifier>$4</classifier>}"
}

# The REST server's runtime: the test-fixtures jar holds RESTCatalogServer,
# iceberg-core's tests jar the adapter and servlet it serves; their Gradle
# test-fixture dependencies are not in any pom, so they are listed here.
setup_rest_catalog() {
  local stamp="$REST_LIBS/../.complete" dir="$LAKEMIRROR_CACHE/build/rest-catalog-$ICEBERG_VERSION"
  if [ -f "$stamp" ]; then
    log "rest catalog: iceberg $ICEBERG_VERSION cached ($(ls "$REST_LIBS" | wc -l) jars)"
    return
  fi
  log "rest catalog: resolving org.apache.iceberg $ICEBERG_VERSION RESTCatalogServer and its runtime from Maven Central"
  mkdir -p "$dir"
  cat >"$dir/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>lakemirror.reststack</groupId>
  <artifactId>rest-catalog</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
$(
    dep org.apache.iceberg iceberg-open-api "$ICEBERG_VERSION" test-fixtures
    dep org.apache.iceberg iceberg-core "$ICEBERG_VERSION"
    dep org.apache.iceberg iceberg-core "$ICEBERG_VERSION" tests
    dep org.apache.iceberg iceberg-aws "$ICEBERG_VERSION"
    dep org.apache.iceberg iceberg-aws-bundle "$ICEBERG_VERSION"
    dep org.eclipse.jetty jetty-servlet "$JETTY_VERSION"
    dep org.xerial sqlite-jdbc "$SQLITE_JDBC_VERSION"
    dep org.apache.hadoop hadoop-client-api "$HADOOP_VERSION"
    dep org.apache.hadoop hadoop-client-runtime "$HADOOP_VERSION"
    dep org.slf4j slf4j-simple "$SLF4J_VERSION"
  )
  </dependencies>
</project>
EOF
  rm -rf "$REST_LIBS.tmp"
  if ! mvn -B -q -f "$dir/pom.xml" -Dmaven.repo.local="$LAKEMIRROR_CACHE/m2" \
    "org.apache.maven.plugins:maven-dependency-plugin:$MVN_DEPENDENCY_PLUGIN:copy-dependencies" \
    -DincludeScope=runtime -DoutputDirectory="$REST_LIBS.tmp" >"$dir/mvn.log" 2>&1; then
    tail -n 40 "$dir/mvn.log" >&2
    die "maven could not resolve the REST catalog server (log $dir/mvn.log)"
  fi
  rm -rf "$REST_LIBS"
  mv "$REST_LIBS.tmp" "$REST_LIBS"
  touch "$stamp"
  log "rest catalog: $(ls "$REST_LIBS" | wc -l) jars in $REST_LIBS"
}

setup_venv() {
  if [ -f "$VENV/.complete" ]; then
    log "python: venv cached ($VENV)"
    return
  fi
  log "python: creating $VENV from requirements.txt (moto[server] $PY_MOTO, pyiceberg $PY_PYICEBERG; PyPI)"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps -r "$RS_DIR/requirements.txt" >"$LAKEMIRROR_CACHE/pip.log" 2>&1 ||
    { tail -n 30 "$LAKEMIRROR_CACHE/pip.log" >&2; die "pip install failed"; }
  "$VENV/bin/python" -c 'import moto.server, boto3, pyiceberg.catalog.rest, pyarrow' || die "the Python environment does not import"
  touch "$VENV/.complete"
}

command -v java >/dev/null || die "java (17+) is required"
command -v mvn >/dev/null || die "mvn is required"
command -v go >/dev/null || die "go is required"
mkdir -p "$LAKEMIRROR_CACHE"
step setup_rest setup_rest_catalog
step setup_venv setup_venv
if [ "${RS_SETUP_ONLY:-0}" = 1 ]; then
  log "setup done: cache $LAKEMIRROR_CACHE ($(du -sh "$LAKEMIRROR_CACHE" 2>/dev/null | cut -f1))"
  exit 0
fi

# --- the services ----------------------------------------------------------------------
RUN=$(mktemp -d /tmp/lakemirror-reststack.XXXXXX)
mkdir -p "$RUN/pids" "$RUN/logs"
log "run directory $RUN"

start_bg() { # NAME LOGFILE CMD...: start CMD in the background, record its pid
  local name=$1 logf=$2
  shift 2
  "$@" >>"$logf" 2>&1 &
  echo $! >"$RUN/pids/$name"
  log "started $name (pid $!), log $logf"
}
stop_bg() { # NAME: TERM, then KILL after 10s; only the recorded pid
  local p i
  p=$(cat "$RUN/pids/$1" 2>/dev/null) || return 0
  if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
    kill -TERM "$p" 2>/dev/null || true
    for ((i = 0; i < 40; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.25; done
    if kill -0 "$p" 2>/dev/null; then kill -KILL "$p" 2>/dev/null || true; fi
    wait "$p" 2>/dev/null || true
  fi
  rm -f "$RUN/pids/$1"
}
alive() { local p; p=$(cat "$RUN/pids/$1" 2>/dev/null) && kill -0 "$p" 2>/dev/null; }

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  stop_bg rest-catalog
  stop_bg moto
  if [ "$rc" = 0 ] && [ "${RS_KEEP:-0}" != 1 ]; then
    rm -rf "$RUN"
  else
    log "run directory kept: $RUN (logs in $RUN/logs)"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# free_ports N prints N distinct free TCP ports on 127.0.0.1.
free_ports() {
  python3 -c 'import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))' "$1"
}

# wait_http NAME URL SECONDS: until URL answers 2xx (and NAME is alive).
wait_http() {
  local name=$1 url=$2 secs=$3 s=$SECONDS
  until curl -sf -o /dev/null "$url"; do
    alive "$name" || { tail -n 30 "$RUN/logs/$name.log" >&2; die "$name exited"; }
    ((SECONDS - s < secs)) || { tail -n 30 "$RUN/logs/$name.log" >&2; die "$name did not answer $url within ${secs}s"; }
    sleep 0.25
  done
}

read -r S3_PORT REST_PORT <<<"$(free_ports 2)"
BUCKET=lakemirror
WAREHOUSE=s3://$BUCKET/warehouse
S3_ENDPOINT=http://127.0.0.1:$S3_PORT
REST_URI=http://127.0.0.1:$REST_PORT
KEY_ID=lakemirror SECRET=lakemirror-secret REGION=us-east-1
# exactly what a worker is given as CATALOG_PROPS
CATALOG_PROPS="s3.endpoint=$S3_ENDPOINT,s3.region=$REGION,s3.access-key-id=$KEY_ID,s3.secret-access-key=$SECRET"

start_s3() {
  start_bg moto "$RUN/logs/moto.log" "$VENV/bin/moto_server" -H 127.0.0.1 -p "$S3_PORT"
  wait_http moto "$S3_ENDPOINT/moto-api/" 60
  AWS_ACCESS_KEY_ID=$KEY_ID AWS_SECRET_ACCESS_KEY=$SECRET "$VENV/bin/python" -c 'import boto3, sys
boto3.client("s3", endpoint_url=sys.argv[1], region_name=sys.argv[3]).create_bucket(Bucket=sys.argv[2])' "$S3_ENDPOINT" "$BUCKET" "$REGION" ||
    die "could not create bucket $BUCKET"
  log "moto S3 on $S3_ENDPOINT, bucket $BUCKET"
}

# RESTCatalogServer reads its catalog properties from CATALOG_* variables
# (RCKUtils.environmentCatalogConfig: strip CATALOG_, "__" → "-", "_" → ".",
# lower case): a JdbcCatalog on a SQLite file, tables in the S3 warehouse
# written with S3FileIO (AWS SDK v2), path-style addressing. rest.port is
# CATALOG_REST_PORT. (Jetty binds the port on all interfaces; the suite
# talks to it on 127.0.0.1 only.)
start_rest() {
  start_bg rest-catalog "$RUN/logs/rest-catalog.log" env \
    CATALOG_REST_PORT="$REST_PORT" \
    CATALOG_URI="jdbc:sqlite:$RUN/rest-catalog.db" \
    CATALOG_JDBC_SCHEMA__VERSION=V1 \
    CATALOG_WAREHOUSE="$WAREHOUSE" \
    CATALOG_IO__IMPL=org.apache.iceberg.aws.s3.S3FileIO \
    CATALOG_S3_ENDPOINT="$S3_ENDPOINT" \
    CATALOG_S3_PATH__STYLE__ACCESS=true \
    CATALOG_S3_ACCESS__KEY__ID="$KEY_ID" \
    CATALOG_S3_SECRET__ACCESS__KEY="$SECRET" \
    CATALOG_CLIENT_REGION="$REGION" \
    AWS_REGION="$REGION" AWS_EC2_METADATA_DISABLED=true \
    java -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$REST_LIBS/*" org.apache.iceberg.rest.RESTCatalogServer
  wait_http rest-catalog "$REST_URI/v1/config" 90
  log "Iceberg REST catalog $ICEBERG_VERSION on $REST_URI (warehouse $WAREHOUSE)"
}

step s3 start_s3
step rest start_rest

# --- the test --------------------------------------------------------------------------
run_test() {
  local rc=0
  (cd "$REPO_ROOT" && LAKEMIRROR_TEST_REST_URI=$REST_URI LAKEMIRROR_TEST_WAREHOUSE=$WAREHOUSE \
    LAKEMIRROR_TEST_CATALOG_PROPS=$CATALOG_PROPS LAKEMIRROR_TEST_REPORT=$RUN/report.json \
    go test -count=1 -v -run '^TestRESTCatalogS3EndToEnd$' ./worker/runner) >"$RUN/logs/go-test.log" 2>&1 || rc=$?
  grep -v '^time=' "$RUN/logs/go-test.log" | grep -E '^(=== RUN|--- |    |PASS|FAIL|ok )' >&2 || true
  [ "$rc" = 0 ] || die "go test failed (exit $rc; log $RUN/logs/go-test.log)"
  grep -q -- '--- PASS: TestRESTCatalogS3EndToEnd' "$RUN/logs/go-test.log" || die "TestRESTCatalogS3EndToEnd did not pass (skipped?)"
}
step go_test run_test

run_check() {
  (cd "$RS_DIR" && "$VENV/bin/python" check.py --uri "$REST_URI" --props "$CATALOG_PROPS" --report "$RUN/report.json" \
    --golden "$REPO_ROOT/starter/testdata/golden/debezium-postgres-data-schema-include-flink.jsonl") | tee "$RUN/logs/check.out" >&2 ||
    die "the pyiceberg comparison failed"
}
step pyiceberg run_check

s3_objects=$(AWS_ACCESS_KEY_ID=$KEY_ID AWS_SECRET_ACCESS_KEY=$SECRET "$VENV/bin/python" -c 'import boto3, sys, collections
s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name=sys.argv[3])
n = collections.Counter(); b = 0
for page in s3.get_paginator("list_objects_v2").paginate(Bucket=sys.argv[2]):
    for o in page.get("Contents", []):
        k = o["Key"]; b += o["Size"]
        n["metadata.json" if k.endswith(".metadata.json") else "avro (manifests, lists)" if k.endswith(".avro") else "parquet" if k.endswith(".parquet") else "other"] += 1
print(f"{sum(n.values())} objects, {b} bytes (" + ", ".join(f"{v} {k}" for k, v in sorted(n.items())) + ")")' "$S3_ENDPOINT" "$BUCKET" "$REGION")
requests=$(grep -c '"[A-Z]* /' "$RUN/logs/moto.log" || true)

cat >&2 <<EOF

================ REST catalog + S3 suite ================
services:   Iceberg RESTCatalogServer $ICEBERG_VERSION (JdbcCatalog/SQLite, S3FileIO) on $REST_URI
            moto_server $PY_MOTO (S3 API) on $S3_ENDPOINT, warehouse $WAREHOUSE
worker:     CATALOG_TYPE=rest CATALOG_URI=$REST_URI WAREHOUSE=$WAREHOUSE
            CATALOG_PROPS=$CATALOG_PROPS
go test:    $(grep -E -- '--- (PASS|FAIL)' "$RUN/logs/go-test.log" | head -n1 | sed 's/^ *//')
pyiceberg:  $(tail -n1 "$RUN/logs/check.out")
bucket:     $s3_objects; $requests S3 requests served
time:       $(($(date +%s) - rs_t0))s total; steps: $(for k in "${!T[@]}"; do printf '%s=%ss ' "$k" "${T[$k]}"; done)
result:     PASS
EOF
