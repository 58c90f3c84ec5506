#!/usr/bin/env bash
# Apache Iceberg's REST catalog server (org.apache.iceberg.rest.RESTCatalogServer,
# from the iceberg-open-api test fixtures on Maven Central): a JdbcCatalog on
# SQLite with a local file warehouse, the catalog the duckdb-iceberg peer
# ATTACHes (DuckDB's iceberg extension writes only through REST catalogs).
#
#   rest.sh setup CACHE            resolve the server's jars into CACHE/iceberg-rest-<version> (once)
#   rest.sh start CACHE DIR PORT   start it (state, log and pid in DIR, wiped first); prints its pid
#   rest.sh stop DIR               stop the server started in DIR
set -euo pipefail
ICEBERG_REST_VERSION=1.10.1
cmd=${1:?setup|start|stop}
log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
case "$cmd" in
setup)
  libs=${2:?CACHE}/iceberg-rest-$ICEBERG_REST_VERSION
  [ -f "$libs/.complete" ] && exit 0
  log "maven: Iceberg REST catalog server $ICEBERG_REST_VERSION (iceberg-open-api test fixtures and its runtime) into $libs"
  mkdir -p "$libs"
  pom=$(mktemp -d)
  {
    echo '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
    echo '<groupId>lmbench</groupId><artifactId>iceberg-rest</artifactId><version>1</version><packaging>pom</packaging><dependencies>'
    while read -r g a v c; do
      printf '<dependency><groupId>%s</groupId><artifactId>%s</artifactId><version>%s</version>%s</dependency>\n' \
        "$g" "$a" "$v" "${c:+<classifier>$c</classifier>}"
    done <<DEPS
org.apache.iceberg iceberg-open-api $ICEBERG_REST_VERSION test-fixtures
org.apache.iceberg iceberg-core $ICEBERG_REST_VERSION
org.apache.iceberg iceberg-core $ICEBERG_REST_VERSION tests
org.eclipse.jetty jetty-servlet 11.0.26
org.xerial sqlite-jdbc 3.50.3.0
org.apache.hadoop hadoop-client-api 3.4.1
org.apache.hadoop hadoop-client-runtime 3.4.1
org.slf4j slf4j-simple 2.0.17
DEPS
    echo '</dependencies></project>'
  } >"$pom/pom.xml"
  if ! mvn -B -q -f "$pom/pom.xml" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$libs" >"$pom/mvn.log" 2>&1; then
    tail -n 20 "$pom/mvn.log" >&2
    exit 1
  fi
  rm -rf "$pom"
  touch "$libs/.complete"
  ;;
start)
  libs=${2:?CACHE}/iceberg-rest-$ICEBERG_REST_VERSION dir=${3:?DIR} port=${4:?PORT}
  [ -f "$libs/.complete" ] || { echo "rest.sh: run setup first" >&2; exit 1; }
  rm -rf "$dir" && mkdir -p "$dir/wh"
  # the server reads CATALOG_* variables as catalog properties (CATALOG_JDBC_SCHEMA__VERSION: jdbc.schema-version)
  CATALOG_REST_PORT=$port CATALOG_URI="jdbc:sqlite:$dir/catalog.db" CATALOG_JDBC_SCHEMA__VERSION=V1 \
    CATALOG_WAREHOUSE="file://$dir/wh" \
    nohup java -Xmx1g -XX:+UseSerialGC -cp "$libs/*" org.apache.iceberg.rest.RESTCatalogServer >"$dir/rest.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$dir/rest.pid"
  for _ in $(seq 120); do
    if curl -sf "http://127.0.0.1:$port/v1/config" >/dev/null 2>&1; then
      echo "$pid"
      exit 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  echo "rest.sh: the REST catalog did not come up on port $port (log $dir/rest.log)" >&2
  tail -n 5 "$dir/rest.log" >&2 || true
  kill "$pid" 2>/dev/null || true
  exit 1
  ;;
stop)
  dir=${2:?DIR}
  if [ -f "$dir/rest.pid" ]; then
    pid=$(cat "$dir/rest.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$dir/rest.pid"
  fi
  ;;
*) echo "rest.sh: setup|start|stop" >&2; exit 2 ;;
esac
