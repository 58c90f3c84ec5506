#!/usr/bin/env bash
# Spark 4 + Apache Iceberg 1.10 as a reader of lakemirror's tables (issue 39
# items 1 and 2; docs/readers.md, docs/benchmarks.md "Partition pruning"):
#
#  1. the partition pruning proof (scripts/prune/run.sh) with Spark as a
#     third reader: data files Spark's scan planned and skipped, rows equal
#     to pyiceberg's and DuckDB's (scripts/prune/check.py --spark-jar);
#  2. the readers table: TestDeletionVectorReaders with Spark, which reads a
#     position-delete (v2) and a deletion-vector (v3) mirror and history
#     (scripts/readers/check_readers.py --spark-jar).
#
# Each step starts one local Spark session (JVM) for all its reads.
# Installs on first use, cached: a venv from requirements.txt (PyPI:
# pyspark 4.0.1, pyiceberg, DuckDB) in $LAKEMIRROR_CACHE (default
# ~/.cache/lakemirror-spark)/venv-<hash>, and Iceberg's Spark runtime jar
# from Maven Central into ~/.m2 (mvn dependency:get). Needs Go, a JDK 17
# or later and Maven.
#   scripts/spark/run.sh [scripts/prune/run.sh's arguments]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${LAKEMIRROR_CACHE:-${HOME:-/root}/.cache/lakemirror-spark}
ICEBERG_SPARK=org.apache.iceberg:iceberg-spark-runtime-4.0_2.13:1.10.0
MVN_DEPENDENCY_PLUGIN=3.8.1
jar=${HOME:-/root}/.m2/repository/org/apache/iceberg/iceberg-spark-runtime-4.0_2.13/1.10.0/iceberg-spark-runtime-4.0_2.13-1.10.0.jar
log() { printf '%s spark: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }

command -v java >/dev/null || die "java (17 or later) is required"
command -v mvn >/dev/null || die "mvn is required (Iceberg's Spark runtime jar comes from Maven Central)"
hash=$(sha256sum "$here/requirements.txt" | cut -c1-12)
venv=$cache/venv-$hash
if [ ! -f "$venv/.complete" ]; then
  log "installing $here/requirements.txt into $venv (PyPI)"
  mkdir -p "$cache"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt" >"$cache/pip.log" 2>&1 ||
    { tail -n 30 "$cache/pip.log" >&2; die "pip install failed"; }
  "$venv/bin/python" -c 'import pyspark, pyiceberg, duckdb, duckdb_extension_iceberg, duckdb_extension_avro, pyarrow, sqlalchemy' ||
    die "the Python environment does not import"
  touch "$venv/.complete"
fi
if [ ! -f "$jar" ]; then
  log "fetching $ICEBERG_SPARK (Maven Central)"
  mvn -B -q "org.apache.maven.plugins:maven-dependency-plugin:$MVN_DEPENDENCY_PLUGIN:get" \
    -Dartifact="$ICEBERG_SPARK" -Dtransitive=false >"$cache/mvn.log" 2>&1 ||
    { tail -n 30 "$cache/mvn.log" >&2; die "maven could not fetch $ICEBERG_SPARK"; }
fi
log "$("$venv/bin/python" -c 'import pyspark; print("pyspark", pyspark.__version__)'), $(basename "$jar"), $(java -version 2>&1 | head -n1)"

t0=$(date +%s)
log "1/2 pruning proof with Spark (scripts/prune/run.sh $*)"
PRUNE_VENV=$venv PRUNE_SPARK_JAR=$jar bash "$repo/scripts/prune/run.sh" "$@"
t1=$(date +%s)
log "2/2 readers: TestDeletionVectorReaders with Spark"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! (cd "$repo" && LAKEMIRROR_PYTHON="$venv/bin/python" LAKEMIRROR_SPARK_JAR="$jar" \
  go test -count=1 -tags e2e -timeout 15m -run '^TestDeletionVectorReaders$' -v ./internal/lake/) >"$out" 2>&1; then
  tail -n 40 "$out" >&2
  die "the readers test failed (docs/readers.md)"
fi
grep -q -- '--- PASS: TestDeletionVectorReaders' "$out" || { tail -n 40 "$out" >&2; die "the readers test did not run"; }
grep -E -- '--- PASS|check_readers.py:' "$out" | cut -c1-400 >&2
t2=$(date +%s)
log "ok: pruning proof $((t1 - t0)) s, readers $((t2 - t1)) s"
