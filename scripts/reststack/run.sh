#!/usr/bin/env bash
# The REST-catalog suite: proves that lakemirror runs unchanged against an
# Iceberg REST catalog with its tables in S3-compatible storage.
#
#   Apache Iceberg's RESTCatalogServer (JdbcCatalog on SQLite, S3FileIO) ──┐
#   moto_server (S3 API, bucket "lakemirror")  ◀──────────────────────────┤
#   go test -tags e2e -run TestRESTCatalogS3EndToEnd ./worker/runner        │
#     (embedded Temporal + kfake; CATALOG_TYPE=rest, WAREHOUSE=s3://…) ─────┘
#   pyiceberg (independent reader, same REST catalog and S3) compares again
#
# Everything runs on 127.0.0.1 on free ports, under a temporary run
# directory, and is stopped on exit (only the processes this script
# started, by pid). Artifacts are cached in $LAKEMIRROR_CACHE.
# Exit status: 0 when the Go test passed (and did not skip) and the
# pyiceberg comparison matched; 1 otherwise.
#
# Environment (scripts/lib/stack.sh):
#   LAKEMIRROR_CACHE  artifact cache (default ~/.cache/lakemirror-reststack)
#   RS_KEEP=1         keep the run directory (logs, report) even on success (or STACK_KEEP=1)
#   RS_SETUP_ONLY=1   fetch and cache the artifacts, start nothing (or STACK_SETUP_ONLY=1)
set -euo pipefail
# shellcheck source=../lib/stack.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/stack.sh"
stack_init reststack # sources versions.env
REST_LIBS="$LAKEMIRROR_CACHE/rest-catalog-$ICEBERG_VERSION/libs"

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

command -v java >/dev/null || die "java (17+) is required"
command -v mvn >/dev/null || die "mvn is required"
step setup_rest setup_rest_catalog
step setup_venv setup_venv "$SUITE_DIR/requirements.txt" 'import moto.server, boto3, pyiceberg.catalog.rest, pyarrow'
stack_setup_done

# --- the services ----------------------------------------------------------------------
stack_run_dir

read -r S3_PORT REST_PORT <<<"$(free_ports 2)"
BUCKET=lakemirror
WAREHOUSE=s3://$BUCKET/warehouse
S3_ENDPOINT=http://127.0.0.1:$S3_PORT
REST_URI=http://127.0.0.1:$REST_PORT
KEY_ID=lakemirror SECRET=lakemirror-secret REGION=us-east-1
# exactly what a worker is given as CATALOG_PROPS
CATALOG_PROPS="s3.endpoint=$S3_ENDPOINT,s3.region=$REGION,s3.access-key-id=$KEY_ID,s3.secret-access-key=$SECRET"

start_s3() { start_moto "$S3_PORT" "$BUCKET" "$REGION" "$KEY_ID" "$SECRET"; }

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
export LAKEMIRROR_TEST_REST_URI=$REST_URI LAKEMIRROR_TEST_WAREHOUSE=$WAREHOUSE LAKEMIRROR_TEST_CATALOG_PROPS=$CATALOG_PROPS
step go_test run_go_test TestRESTCatalogS3EndToEnd

step pyiceberg run_tablecheck "REST + S3" "s3://$BUCKET/" "type=rest,uri=$REST_URI,$CATALOG_PROPS"

stack_summary "REST catalog + S3 suite" bucket "$RUN/logs/moto.log" S3 \
  "services: Iceberg RESTCatalogServer $ICEBERG_VERSION (JdbcCatalog/SQLite, S3FileIO) on $REST_URI" \
  "  moto_server $PY_MOTO (S3 API) on $S3_ENDPOINT, warehouse $WAREHOUSE" \
  "worker: CATALOG_TYPE=rest CATALOG_URI=$REST_URI WAREHOUSE=$WAREHOUSE" \
  "  CATALOG_PROPS=s3.endpoint=$S3_ENDPOINT,s3.region=$REGION,s3.access-key-id=$KEY_ID,s3.secret-access-key=REDACTED"
