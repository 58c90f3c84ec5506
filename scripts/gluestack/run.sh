#!/usr/bin/env bash
# The Glue suite: proves that lakemirror runs with the AWS Glue Data
# Catalog (iceberg-go catalog/glue), configured as an operator would
# configure it, against moto_server, which serves both the Glue and the
# S3 API: Glue holds the tables' metadata locations, S3 their files.
#
#   moto_server (Glue API; S3 API, bucket "lakemirror") ◀─────────────────┐
#   go test -tags e2e -run TestGlueCatalogEndToEnd ./worker/runner          │
#     (embedded Temporal + kfake; CATALOG_TYPE=glue, WAREHOUSE=s3://…,      │
#      CATALOG_PROPS=glue.endpoint,s3.endpoint; AWS_* credentials) ─────────┘
#   pyiceberg (independent reader: its Glue catalog, same Glue and S3) compares again
#
# Everything runs on 127.0.0.1 on a free port, under a temporary run
# directory, and is stopped on exit (only the processes this script
# started, by pid). Artifacts are cached in $LAKEMIRROR_CACHE.
# Exit status: 0 when the Go test passed (and did not skip) and the
# pyiceberg comparison matched; 1 otherwise.
#
# Environment (scripts/lib/stack.sh):
#   LAKEMIRROR_CACHE    artifact cache (default ~/.cache/lakemirror-reststack: the REST suite's, whose Python environment this suite uses)
#   STACK_KEEP=1        keep the run directory (logs, report) even on success
#   STACK_SETUP_ONLY=1  fetch and cache the artifacts, start nothing
set -euo pipefail
# shellcheck source=../lib/stack.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/stack.sh"
# The Python environment is the REST suite's: moto_server serves Glue
# from the same packages, and pyiceberg's Glue catalog needs boto3 only;
# so are its versions and its default cache, where that environment lives.
LAKEMIRROR_CACHE=${LAKEMIRROR_CACHE:-${HOME:-/root}/.cache/lakemirror-reststack}
stack_init gluestack
# shellcheck source=../reststack/versions.env
. "$SUITE_DIR/../reststack/versions.env"

step setup_venv setup_venv "$SUITE_DIR/../reststack/requirements.txt" 'import moto.server, moto.glue, boto3, pyiceberg.catalog.glue, pyarrow'
stack_setup_done

# --- the emulator ----------------------------------------------------------------------
stack_run_dir
read -r MOTO_PORT <<<"$(free_ports 1)"
BUCKET=lakemirror
WAREHOUSE=s3://$BUCKET/warehouse
ENDPOINT=http://127.0.0.1:$MOTO_PORT
# the AWS SDKs' standard variables, read by the worker, boto3 and pyarrow
export AWS_ACCESS_KEY_ID=lakemirror AWS_SECRET_ACCESS_KEY=lakemirror-secret AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
step moto start_moto "$MOTO_PORT" "$BUCKET" "$AWS_REGION" "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY"

# --- the test --------------------------------------------------------------------------
# Exactly what a worker is given: CATALOG_TYPE=glue, the warehouse, the
# two endpoints (AWS's own when left out) and the AWS_* variables above.
CATALOG_PROPS="glue.endpoint=$ENDPOINT,s3.endpoint=$ENDPOINT"
export LAKEMIRROR_TEST_GLUE_WAREHOUSE=$WAREHOUSE LAKEMIRROR_TEST_CATALOG_PROPS=$CATALOG_PROPS
step go_test run_go_test TestGlueCatalogEndToEnd

step pyiceberg run_tablecheck "Glue + S3" "s3://$BUCKET/" \
  "type=glue,glue.endpoint=$ENDPOINT,glue.region=$AWS_REGION,s3.endpoint=$ENDPOINT,s3.region=$AWS_REGION"

glue_tables=$("$VENV/bin/python" -c 'import boto3, json, sys
g = boto3.client("glue", endpoint_url=sys.argv[1], region_name=sys.argv[3])
ns = json.load(open(sys.argv[2]))["namespace"]
ts = g.get_tables(DatabaseName=ns)["TableList"]
print(f"database {ns}: {len(ts)} tables (" + ", ".join(sorted(t["Name"] + " " + t["Parameters"].get("table_type", "?") for t in ts)) + ")")' "$ENDPOINT" "$RUN/report.json" "$AWS_REGION")
stack_summary "Glue catalog + S3 suite" bucket "$RUN/logs/moto.log" "Glue and S3" \
  "services: moto_server $PY_MOTO (Glue and S3 APIs) on $ENDPOINT, warehouse $WAREHOUSE" \
  "worker: CATALOG_TYPE=glue WAREHOUSE=$WAREHOUSE CATALOG_PROPS=$CATALOG_PROPS" \
  "  AWS_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY=REDACTED AWS_REGION=$AWS_REGION" \
  "glue: $glue_tables"
