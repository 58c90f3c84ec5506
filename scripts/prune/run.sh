#!/usr/bin/env bash
# Pruning proof (issue 39 item 1, docs/benchmarks.md "Partition pruning"):
# writes one change stream with lakemirror's write path into a partitioned
# (mirror bucket(16, id), history day(_valid_from)) and an unpartitioned
# table (scripts/prune/gen), then reads both with pyiceberg and DuckDB
# (scripts/prune/check.py): files planned/read for a one-day filter on the
# history and a key-bucket filter on the mirror, and the rows, which must be
# equal. Python packages from PyPI (requirements.txt) into a cached venv
# ($PRUNE_VENV, default ~/.cache/lakemirror-prune/venv-<hash>). With
# PRUNE_SPARK_JAR (the Iceberg Spark runtime jar) Spark reads them too;
# scripts/spark/run.sh sets it, and PRUNE_VENV to its venv with pyspark.
#   scripts/prune/run.sh [--keys N] [--days D] [--changes-per-day C] [--batch B]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${LAKEMIRROR_CACHE:-${HOME:-/root}/.cache/lakemirror-prune}
hash=$(sha256sum "$here/requirements.txt" | cut -c1-12)
venv=${PRUNE_VENV:-$cache/venv-$hash}
if ! "$venv/bin/python" -c "import duckdb, duckdb_extension_iceberg, duckdb_extension_avro, pyiceberg, pyarrow" 2>/dev/null; then
  echo "prune: installing $here/requirements.txt into $venv (PyPI)" >&2
  mkdir -p "$cache"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt"
fi
work=$(mktemp -d /tmp/lmprune.XXXXXX)
trap 'rm -rf "$work"' EXIT
(cd "$repo" && GOFLAGS="${GOFLAGS:-} -buildvcs=false" go build -o "$work/gen" ./scripts/prune/gen)
echo "prune: writing the stream twice (machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
"$work/gen" -out "$work/lake" "$@" >"$work/gen.json"
"$venv/bin/python" "$here/check.py" "$work/gen.json" ${PRUNE_SPARK_JAR:+--spark-jar "$PRUNE_SPARK_JAR"}
