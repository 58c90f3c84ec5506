#!/usr/bin/env bash
# Installs (idempotently) everything the real-stack suite runs, from the
# registries this machine reaches, at the versions pinned in versions.env
# and requirements.txt, into $LAKEMIRROR_CACHE (default
# ~/.cache/lakemirror-realstack), which CI keeps between runs on a machine:
#
#   PostgreSQL $PG_MAJOR          Debian packages (apt-get), used with a private initdb cluster
#   kafka-$KAFKA_VERSION/libs      Apache Kafka broker (KRaft) + Kafka Connect + tools, from Maven Central
#   debezium-$DEBEZIUM_VERSION/plugins/debezium-connector-postgres
#                                  the Debezium PostgreSQL connector and its dependencies, from Maven Central
#   venv-<hash>                    pyiceberg, DuckDB + its iceberg/avro extensions, psycopg, from PyPI
#   m2/                            the Maven local repository these were resolved into
#
# Nothing is started here. Re-running with a warm cache takes seconds.
set -euo pipefail
RS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$RS_DIR/lib.sh"
mkdir -p "$LAKEMIRROR_CACHE"

setup_postgres() {
  if [ -x "$PG_BIN/postgres" ] && [ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_ctl" ]; then
    log "postgresql: $("$PG_BIN/postgres" --version) (already installed)"
  else
    [ "$(id -u)" = 0 ] || die "postgresql-$PG_MAJOR is missing and installing it needs root (apt-get install postgresql-$PG_MAJOR)"
    log "postgresql: apt-get install postgresql-$PG_MAJOR"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "postgresql-$PG_MAJOR" >/dev/null
    log "postgresql: $("$PG_BIN/postgres" --version)"
  fi
  if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    die "user postgres is missing (the Debian package creates it)"
  fi
}

# mvn_copy NAME OUTDIR DEPENDENCIES_XML [EXCLUDE_GROUPS]: resolve the given
# dependencies with Maven into the cache's local repository and copy the
# runtime closure into OUTDIR.
mvn_copy() {
  local name=$1 out=$2 deps=$3 excl=${4:-} dir="$LAKEMIRROR_CACHE/build/$1"
  mkdir -p "$dir"
  cat >"$dir/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>lakemirror.realstack</groupId>
  <artifactId>$name</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
$deps
  </dependencies>
</project>
EOF
  rm -rf "$out.tmp"
  local args=(-B -q -f "$dir/pom.xml" -Dmaven.repo.local="$LAKEMIRROR_CACHE/m2"
    "org.apache.maven.plugins:maven-dependency-plugin:$MVN_DEPENDENCY_PLUGIN:copy-dependencies"
    -DincludeScope=runtime -DoutputDirectory="$out.tmp")
  [ -n "$excl" ] && args+=(-DexcludeGroupIds="$excl")
  if ! mvn "${args[@]}" >"$dir/mvn.log" 2>&1; then
    tail -n 40 "$dir/mvn.log" >&2
    die "maven could not resolve $name (log $dir/mvn.log)"
  fi
  rm -rf "$out"
  mv "$out.tmp" "$out"
}

dep() { printf '    <dependency><groupId>%s</groupId><artifactId>%s</artifactId><version>%s</version></dependency>\n' "$1" "$2" "$3"; }

setup_kafka() {
  local stamp="$KAFKA_HOME/.complete"
  if [ -f "$stamp" ]; then
    log "kafka: $KAFKA_VERSION cached ($(ls "$KAFKA_HOME/libs" | wc -l) jars)"
    return
  fi
  log "kafka: resolving org.apache.kafka $KAFKA_VERSION (broker, Connect runtime, JSON converter, transforms, tools) from Maven Central"
  mkdir -p "$KAFKA_HOME"
  mvn_copy "kafka-$KAFKA_VERSION" "$KAFKA_HOME/libs" "$(
    dep org.apache.kafka kafka_2.13 "$KAFKA_VERSION"
    dep org.apache.kafka connect-runtime "$KAFKA_VERSION"
    dep org.apache.kafka connect-json "$KAFKA_VERSION"
    dep org.apache.kafka connect-transforms "$KAFKA_VERSION"
    dep org.apache.kafka kafka-tools "$KAFKA_VERSION"
    dep org.apache.logging.log4j log4j-slf4j-impl "$LOG4J_VERSION"
  )"
  touch "$stamp"
  log "kafka: $(ls "$KAFKA_HOME/libs" | wc -l) jars in $KAFKA_HOME/libs"
}

setup_debezium() {
  local stamp="$LAKEMIRROR_CACHE/debezium-$DEBEZIUM_VERSION/.complete"
  if [ -f "$stamp" ]; then
    log "debezium: $DEBEZIUM_VERSION cached"
    return
  fi
  log "debezium: resolving io.debezium:debezium-connector-postgres:$DEBEZIUM_VERSION from Maven Central"
  mkdir -p "$DEBEZIUM_PLUGINS"
  # Kafka's own classes, slf4j and the compression codecs come from the
  # Connect runtime (as in Debezium's plugin archive).
  mvn_copy "debezium-$DEBEZIUM_VERSION" "$DEBEZIUM_PLUGINS/debezium-connector-postgres" \
    "$(dep io.debezium debezium-connector-postgres "$DEBEZIUM_VERSION")" \
    "org.apache.kafka,org.slf4j,com.github.luben,at.yawk.lz4,org.xerial.snappy,jakarta.ws.rs"
  touch "$stamp"
  log "debezium: $(ls "$DEBEZIUM_PLUGINS/debezium-connector-postgres" | wc -l) jars in the plugin directory"
}

setup_venv() {
  if [ -f "$VENV/.complete" ]; then
    log "python: venv cached ($VENV)"
    return
  fi
  log "python: creating $VENV from requirements.txt (PyPI)"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps -r "$RS_DIR/requirements.txt" >"$LAKEMIRROR_CACHE/pip.log" 2>&1 ||
    { tail -n 30 "$LAKEMIRROR_CACHE/pip.log" >&2; die "pip install failed"; }
  "$VENV/bin/python" -c 'import pyiceberg, duckdb, duckdb_extension_iceberg, duckdb_extension_avro, psycopg, pyarrow, sqlalchemy' ||
    die "the Python environment does not import"
  touch "$VENV/.complete"
}

command -v java >/dev/null || die "java (17) is required"
command -v mvn >/dev/null || die "mvn is required"
setup_postgres
setup_kafka
setup_debezium
setup_venv
log "setup done: cache $LAKEMIRROR_CACHE ($(du -sh "$LAKEMIRROR_CACHE" 2>/dev/null | cut -f1))"
