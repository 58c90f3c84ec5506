#!/usr/bin/env bash
# The GCS suite: proves that lakemirror writes its tables to Google Cloud
# Storage through iceberg-go's gocloud FileIO, configured as an operator
# would configure it, against fake-gcs-server, the GCS emulator.
#
#   fake-gcs-server (GCS JSON/XML API, bucket "lakemirror") ◀──────────────┐
#   go test -tags e2e -run TestGCSStorageEndToEnd ./worker/runner            │
#     (embedded Temporal + kfake; the default SQLite catalog,                │
#      WAREHOUSE=gs://lakemirror/warehouse, STORAGE_EMULATOR_HOST) ──────────┘
#   pyiceberg (independent reader: the same SQLite catalog, gcsfs) compares again
#
# Everything runs on 127.0.0.1 on a free port, under a temporary run
# directory, and is stopped on exit (only the processes this script
# started, by pid). Artifacts are cached in $LAKEMIRROR_CACHE.
# Exit status: 0 when the Go test passed (and did not skip) and the
# pyiceberg comparison matched; 1 otherwise.
#
# Environment (scripts/lib/stack.sh):
#   LAKEMIRROR_CACHE    artifact cache (default ~/.cache/lakemirror-gcsstack)
#   STACK_KEEP=1        keep the run directory (logs, report, the emulator's files) even on success
#   STACK_SETUP_ONLY=1  fetch and cache the artifacts, start nothing
set -euo pipefail
# shellcheck source=../lib/stack.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/stack.sh"
stack_init gcsstack # sources versions.env
FAKE_GCS="$LAKEMIRROR_CACHE/fake-gcs-server-$FAKE_GCS_SERVER_VERSION/bin/fake-gcs-server"

# --- setup (cached) --------------------------------------------------------------
setup_fake_gcs() {
  if [ -x "$FAKE_GCS" ]; then
    log "fake-gcs-server $FAKE_GCS_SERVER_VERSION cached"
    return
  fi
  log "fake-gcs-server: go install github.com/fsouza/fake-gcs-server@$FAKE_GCS_SERVER_VERSION (Go module proxy)"
  (cd "$LAKEMIRROR_CACHE" && GOBIN="$(dirname "$FAKE_GCS").tmp" go install "github.com/fsouza/fake-gcs-server@$FAKE_GCS_SERVER_VERSION") \
    >"$LAKEMIRROR_CACHE/go-install.log" 2>&1 || {
    tail -n 30 "$LAKEMIRROR_CACHE/go-install.log" >&2
    die "go install of fake-gcs-server failed"
  }
  rm -rf "$(dirname "$FAKE_GCS")"
  mv "$(dirname "$FAKE_GCS").tmp" "$(dirname "$FAKE_GCS")"
}
step setup_emulator setup_fake_gcs
step setup_venv setup_venv "$SUITE_DIR/requirements.txt" 'import gcsfs, sqlalchemy, pyiceberg.catalog.sql, pyarrow'
stack_setup_done

# --- the emulator ----------------------------------------------------------------------
stack_run_dir
read -r GCS_PORT <<<"$(free_ports 1)"
BUCKET=lakemirror
WAREHOUSE=gs://$BUCKET/warehouse
GCS_URL=http://127.0.0.1:$GCS_PORT

start_gcs() {
  start_bg fake-gcs "$RUN/logs/fake-gcs.log" "$FAKE_GCS" -scheme http -host 127.0.0.1 -port "$GCS_PORT" \
    -external-url "$GCS_URL" -public-host "127.0.0.1:$GCS_PORT" -backend filesystem -filesystem-root "$RUN/gcs"
  wait_http fake-gcs "$GCS_URL/storage/v1/b" 60
  curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' -d "{\"name\":\"$BUCKET\"}" \
    "$GCS_URL/storage/v1/b?project=lakemirror" || die "could not create bucket $BUCKET"
  log "fake-gcs-server $FAKE_GCS_SERVER_VERSION on $GCS_URL, bucket $BUCKET"
}
step gcs start_gcs

# --- the test --------------------------------------------------------------------------
# Exactly what a worker is given: the warehouse, and the emulator in
# Google's standard variable (no CATALOG_PROPS: lakemirror sends no
# credentials to an emulator and points the client at it).
export STORAGE_EMULATOR_HOST=$GCS_URL LAKEMIRROR_TEST_GCS_WAREHOUSE=$WAREHOUSE LAKEMIRROR_TEST_DATA_DIR=$RUN/worker
step go_test run_go_test TestGCSStorageEndToEnd

# gcsfs's experimental zonal-bucket probe (gRPC over TLS, which the
# emulator does not speak) would time out on every file: plain gcsfs
export GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT=false
step pyiceberg run_tablecheck "SQL catalog + GCS (gcsfs)" "gs://$BUCKET/" \
  "type=sql,uri=sqlite:///$RUN/worker/catalog.db,init_catalog_tables=false,py-io-impl=pyiceberg.io.fsspec.FsspecFileIO,gcs.service.host=$GCS_URL,gcs.oauth2.token=anon,gcs.project-id=lakemirror"

stack_summary "GCS suite" bucket "$RUN/logs/fake-gcs.log" GCS \
  "services: fake-gcs-server $FAKE_GCS_SERVER_VERSION (GCS JSON/XML API) on $GCS_URL, warehouse $WAREHOUSE" \
  "worker: CATALOG_TYPE=sql (SQLite in the data dir) WAREHOUSE=$WAREHOUSE STORAGE_EMULATOR_HOST=$GCS_URL"
