#!/usr/bin/env bash
# The Azure suite: proves that lakemirror writes its tables to Azure Blob
# Storage / ADLS Gen2 through iceberg-go's gocloud FileIO, configured as
# an operator would configure it, against Azurite, the Azure Storage
# emulator.
#
#   Azurite (Blob service, account devstoreaccount1, container "lakemirror") ◀──┐
#   go test -tags e2e -run TestAzureStorageEndToEnd ./worker/runner               │
#     (embedded Temporal + kfake; the default SQLite catalog,                     │
#      WAREHOUSE=abfs://lakemirror@devstoreaccount1.dfs.core.windows.net/…,       │
#      AZURE_STORAGE_CONNECTION_STRING) ──────────────────────────────────────────┘
#   pyiceberg (independent reader: the same SQLite catalog, adlfs) compares again
#
# Everything runs on 127.0.0.1 on a free port, under a temporary run
# directory, and is stopped on exit (only the processes this script
# started, by pid). Artifacts are cached in $LAKEMIRROR_CACHE.
# Exit status: 0 when the Go test passed (and did not skip) and the
# pyiceberg comparison matched; 1 otherwise.
#
# Environment (scripts/lib/stack.sh):
#   LAKEMIRROR_CACHE    artifact cache (default ~/.cache/lakemirror-azurestack)
#   STACK_KEEP=1        keep the run directory (logs, report, the emulator's files) even on success
#   STACK_SETUP_ONLY=1  fetch and cache the artifacts, start nothing
set -euo pipefail
# shellcheck source=../lib/stack.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/stack.sh"
stack_init azurestack # sources versions.env
AZURITE_DIR="$LAKEMIRROR_CACHE/azurite-$AZURITE_VERSION"

# --- setup (cached) --------------------------------------------------------------
setup_azurite() {
  if [ -f "$AZURITE_DIR/.complete" ]; then
    log "azurite $AZURITE_VERSION cached"
    return
  fi
  command -v npm >/dev/null || die "npm (Node.js 18+) is required"
  log "azurite: npm install azurite@$AZURITE_VERSION (npm registry)"
  rm -rf "$AZURITE_DIR"
  npm install --prefix "$AZURITE_DIR" --no-audit --no-fund --no-save "azurite@$AZURITE_VERSION" >"$LAKEMIRROR_CACHE/npm.log" 2>&1 || {
    tail -n 30 "$LAKEMIRROR_CACHE/npm.log" >&2
    die "npm install of azurite failed"
  }
  touch "$AZURITE_DIR/.complete"
}
step setup_emulator setup_azurite
step setup_venv setup_venv "$SUITE_DIR/requirements.txt" 'import adlfs, azure.storage.blob, sqlalchemy, pyiceberg.catalog.sql, pyarrow'
stack_setup_done

# --- the emulator ----------------------------------------------------------------------
stack_run_dir
read -r BLOB_PORT <<<"$(free_ports 1)"
ACCOUNT=devstoreaccount1
# Azurite's well-known development account key (public, documented by Microsoft)
ACCOUNT_KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
CONTAINER=lakemirror
WAREHOUSE=abfs://$CONTAINER@$ACCOUNT.dfs.core.windows.net/warehouse
BLOB_URL=http://127.0.0.1:$BLOB_PORT/$ACCOUNT
CONN="DefaultEndpointsProtocol=http;AccountName=$ACCOUNT;AccountKey=$ACCOUNT_KEY;BlobEndpoint=$BLOB_URL;"

# --skipApiVersionCheck: the clients' storage API versions (azure-storage-blob
# 12.31 sends 2026-10-06) are newer than Azurite 3.35.0, the newest on
# Node 20, knows; it refuses them otherwise. --disableTelemetry: Azurite
# sends usage data to Microsoft unless told not to.
start_azurite() {
  start_bg azurite "$RUN/logs/azurite.log" "$AZURITE_DIR/node_modules/.bin/azurite-blob" --blobHost 127.0.0.1 --blobPort "$BLOB_PORT" \
    --location "$RUN/azurite" --disableTelemetry --skipApiVersionCheck
  local s=$SECONDS
  until grep -q 'successfully listens' "$RUN/logs/azurite.log"; do
    alive azurite || { tail -n 30 "$RUN/logs/azurite.log" >&2; die "azurite exited"; }
    ((SECONDS - s < 60)) || die "azurite did not start within 60s"
    sleep 0.25
  done
  "$VENV/bin/python" -c 'import sys
from azure.storage.blob import BlobServiceClient
BlobServiceClient.from_connection_string(sys.argv[1]).create_container(sys.argv[2])' "$CONN" "$CONTAINER" ||
    die "could not create container $CONTAINER"
  log "azurite $AZURITE_VERSION on $BLOB_URL, container $CONTAINER"
}
step azurite start_azurite

# --- the test --------------------------------------------------------------------------
# Exactly what a worker is given: the warehouse, and the account in the
# standard variable (no CATALOG_PROPS: lakemirror passes it to iceberg-go
# as adls.connection-string.<account>).
export AZURE_STORAGE_CONNECTION_STRING=$CONN LAKEMIRROR_TEST_AZURE_WAREHOUSE=$WAREHOUSE LAKEMIRROR_TEST_DATA_DIR=$RUN/worker
step go_test run_go_test TestAzureStorageEndToEnd

step pyiceberg run_tablecheck "SQL catalog + Azure Blob (adlfs)" "abfs://$CONTAINER@$ACCOUNT.dfs.core.windows.net/" \
  "type=sql,uri=sqlite:///$RUN/worker/catalog.db,init_catalog_tables=false,py-io-impl=pyiceberg.io.fsspec.FsspecFileIO,adls.account-name=$ACCOUNT,adls.connection-string=$CONN"

stack_summary "Azure Blob / ADLS suite" container "$RUN/logs/azurite.log" Blob \
  "services: Azurite $AZURITE_VERSION (Blob service) on $BLOB_URL, warehouse $WAREHOUSE" \
  "worker: CATALOG_TYPE=sql (SQLite in the data dir) WAREHOUSE=$WAREHOUSE" \
  "  AZURE_STORAGE_CONNECTION_STRING=${CONN/AccountKey=$ACCOUNT_KEY/AccountKey=REDACTED}"
