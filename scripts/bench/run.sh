#!/usr/bin/env bash
# lakemirror's CDC apply benchmark: lakemirror side by side with Spark +
# Iceberg (merge-on-read MERGE INTO; spark-full: bronze, SCD2 history and
# mirror like lakemirror), DuckDB (MERGE INTO a native table, or an Iceberg
# table through Apache Iceberg's REST catalog) and pyiceberg (upsert), on one
# generated workload, every result checked by one common reader. See README.md.
#
#   run.sh [--rows N0] [--changes S] [--batch B] [--rounds R]
#          [--systems "lakemirror lakemirror-mirror spark-full spark-mor duckdb-native duckdb-iceberg pyiceberg"]
#          [--kafka kfake|apache] [--lm-start-args "..."] [--lm-worker-args "..."] [--lm-args "..."]
#          [--stream] [--keep]
#
#   --rows, --changes, --batch  workload: N0 initial rows, S changes, micro-batches of B
#                               (default the quick run: 100000 100000 10000)
#   --rounds R                  rounds; each round runs every system once, interleaved
#   --systems                   any of: lakemirror lakemirror-mirror spark-full spark-mor spark-cow
#                               duckdb-native duckdb-iceberg pyiceberg (default: all but spark-cow);
#                               lakemirror-mirror is lakemirror with --history=false --bronze=false
#   --kafka kfake|apache        lakemirror's Kafka: the worker's embedded kfake (default), or an
#                               Apache Kafka KRaft broker from Maven Central (its CPU reported apart)
#   --lm-start-args "..."       extra arguments for `starter start` (table options)
#   --lm-worker-args "..."      extra flags for lakemirror's dev worker (e.g. "--index-memory 1GiB")
#   --lm-args "..."             extra flags for `benchctl lakemirror` (e.g. "--produce starter",
#                               "--restart-before-changes" with --kafka apache)
#   --stream                    lakemirror(-mirror) only: generate the workload straight into Kafka (no
#                               snapshot.jsonl/changes.jsonl; the checker's expected.parquet is written
#                               per run under work/ and removed with the run's scratch)
#   --keep                      keep each run's scratch directory
#
# The full run: run.sh --rows 1000000 --changes 1000000 --batch 50000 --rounds 3
#
# Environment (defaults):
#   LMBENCH_ROOT=/tmp/lmbench        data/ (workloads, cached per size), work/ (scratch), results/
#   LMBENCH_VENV=/tmp/lmbench-venv   Python venv from requirements.txt (reuse one: LMBENCH_VENV=/path)
#   LMBENCH_CACHE=~/.cache/lakemirror-bench   built binaries per commit, Kafka jars
#   LAKEMIRROR_REV=HEAD              the commit of this repository to build starter and worker from
#                                    (git archive: uncommitted edits are never measured)
#   LAKEMIRROR_BIN=DIR               use the starter and worker (and worker-dev) in DIR instead of building them
#   LMBENCH_PORT_BASE=37000          lakemirror's ports: base+233 Temporal, base+1233 its UI, base+92 the
#                                    embedded Kafka, base+464 metrics; --kafka apache: base+192, base+193;
#                                    duckdb-iceberg's REST catalog: base+181
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
rows=100000 changes=100000 batch=10000 rounds=1
systems="lakemirror lakemirror-mirror spark-full spark-mor duckdb-native duckdb-iceberg pyiceberg"
kafka=kfake lm_start_args="" lm_worker_args="" lm_args="" keep=0 stream=0
while [ $# -gt 0 ]; do
  case "$1" in
  --rows) rows=$2; shift 2 ;;
  --changes) changes=$2; shift 2 ;;
  --batch) batch=$2; shift 2 ;;
  --rounds) rounds=$2; shift 2 ;;
  --systems) systems=$2; shift 2 ;;
  --kafka) kafka=$2; shift 2 ;;
  --lm-start-args) lm_start_args=$2; shift 2 ;;
  --lm-worker-args) lm_worker_args=$2; shift 2 ;;
  --lm-args) lm_args=$2; shift 2 ;;
  --stream) stream=1; shift ;;
  --keep) keep=1; shift ;;
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) echo "run.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
case "$kafka" in kfake|apache) ;; *) echo "run.sh: --kafka kfake|apache" >&2; exit 2 ;; esac
for s in $systems; do
  case "$s" in lakemirror|lakemirror-mirror|spark-full|spark-mor|spark-cow|duckdb-native|duckdb-iceberg|pyiceberg) ;; *) echo "run.sh: unknown system $s" >&2; exit 2 ;; esac
  [ "$stream" = 1 ] && case "$s" in lakemirror|lakemirror-mirror) ;; *) echo "run.sh: --stream needs --systems lakemirror and/or lakemirror-mirror (the peers read files)" >&2; exit 2 ;; esac
done
ROOT=${LMBENCH_ROOT:-/tmp/lmbench}
VENV=${LMBENCH_VENV:-/tmp/lmbench-venv}
CACHE=${LMBENCH_CACHE:-${HOME:-/root}/.cache/lakemirror-bench}
PORT_BASE=${LMBENCH_PORT_BASE:-37000}
SPARK_JAR=${HOME:-/root}/.m2/repository/org/apache/iceberg/iceberg-spark-runtime-4.0_2.13/1.10.0/iceberg-spark-runtime-4.0_2.13-1.10.0.jar
mkdir -p "$ROOT/data" "$ROOT/work" "$ROOT/results" "$CACHE"
log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
has() { case " $systems " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# ---- Python (PyPI, cached in the venv)
imports="import duckdb, duckdb_extension_iceberg, duckdb_extension_avro, duckdb_extension_httpfs, pyiceberg, pyarrow, numpy, sqlalchemy"
case " $systems " in *" spark-"*) imports="$imports, pyspark" ;; esac
if ! "$VENV/bin/python" -c "$imports" 2>/dev/null; then
  log "python: installing $here/requirements.txt into $VENV (PyPI)"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt"
  "$VENV/bin/python" -c "$imports"
fi
PY=$VENV/bin/python

# ---- Spark's Iceberg runtime (Maven Central, cached in ~/.m2)
if { has spark-mor || has spark-cow || has spark-full; } && [ ! -f "$SPARK_JAR" ]; then
  log "maven: org.apache.iceberg:iceberg-spark-runtime-4.0_2.13:1.10.0"
  mvn -B -q dependency:get -Dartifact=org.apache.iceberg:iceberg-spark-runtime-4.0_2.13:1.10.0 -Dtransitive=false
fi

# ---- Apache Iceberg's REST catalog server for duckdb-iceberg (Maven Central, cached)
has duckdb-iceberg && "$here/rest.sh" setup "$CACHE"

# ---- Apache Kafka (Maven Central, cached)
[ "$kafka" = apache ] && { has lakemirror || has lakemirror-mirror; } && "$here/kafka.sh" setup "$CACHE"

# ---- binaries: starter + worker from a commit (git archive, cached per
# commit), benchctl from this folder built in the same module snapshot
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-buildvcs=false"
src=$(mktemp -d /tmp/lmbench-src.XXXXXX)
trap 'rm -rf "$src"' EXIT
if git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
  commit=$(git -C "$repo" rev-parse --verify --quiet "${LAKEMIRROR_REV:-HEAD}^{commit}") ||
    { echo "run.sh: no commit ${LAKEMIRROR_REV:-HEAD} in $repo" >&2; exit 2; }
  git -C "$repo" archive "$commit" | tar -x -C "$src"
  rev="$commit"
  [ -n "$(git -C "$repo" status --porcelain -- . ':!scripts/bench' 2>/dev/null | head -1)" ] &&
    log "note: the working tree has uncommitted changes; they are not measured (built: ${commit:0:12})"
else
  log "note: $repo is not a git checkout; building from the directory as is"
  (cd "$repo" && tar -c --exclude=.git --exclude=.lakemirror .) | tar -x -C "$src"
  rev=worktree-$(date -u +%Y%m%dT%H%M%S)
fi
BIN=${LAKEMIRROR_BIN:-$CACHE/bin-$rev}
# the dev worker (embedded Temporal and Kafka) is ./worker/dev since the
# production worker lost -dev; older commits have `worker -dev` instead
# (only when a lakemirror system runs: the peers need just benchctl)
if { has lakemirror || has lakemirror-mirror; } &&
  { [ ! -x "$BIN/worker" ] || [ ! -x "$BIN/starter" ] || { [ -d "$src/worker/dev" ] && [ ! -x "$BIN/worker-dev" ]; }; }; then
  log "go: building starter, worker and the dev worker ($rev) into $BIN (the first build compiles the Temporal server: minutes)"
  (cd "$src" && go build -o "$BIN/" ./starter ./worker && if [ -d worker/dev ]; then go build -o "$BIN/worker-dev" ./worker/dev; fi)
fi
rm -rf "$src/scripts/bench/benchctl" && mkdir -p "$src/scripts/bench" && cp -r "$here/benchctl" "$src/scripts/bench/"
BENCHCTL=$ROOT/work/bin/benchctl
(cd "$src" && go build -o "$BENCHCTL" ./scripts/bench/benchctl)
rm -rf "$src"

# ---- workload (cached per size)
DATA=$ROOT/data/n$rows-s$changes-b$batch
if [ "$stream" = 1 ]; then
  DATA=$ROOT/work/stream-n$rows-s$changes-b$batch # expected.parquet etc., written by each run
elif [ ! -f "$DATA/meta.json" ] || [ ! -d "$DATA/changes-b$batch" ]; then
  log "generating N0=$rows S=$changes B=$batch into $DATA"
  rm -rf "$DATA"
  "$BENCHCTL" gen --out "$DATA" --rows "$rows" --changes "$changes" --batch "$batch" >/dev/null
fi
suffix=""
[ "$kafka" = apache ] && suffix=-kafka-apache
[ "$stream" = 1 ] && suffix=$suffix-stream
RES=$ROOT/results/n$rows-s$changes-b$batch-$(date -u +%Y%m%dT%H%M%S)$suffix
mkdir -p "$RES"
{
  echo "lakemirror: $rev (binaries $BIN)"
  echo "systems: $systems; rounds: $rounds; kafka: $kafka; lm-start-args: ${lm_start_args:-none}; lm-worker-args: ${lm_worker_args:-none}; lm-args: ${lm_args:-none}; stream: $stream"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
} >"$RES/setup.txt"
log "results in $RES"

kdir="" rdir=""
cleanup() {
  [ -n "$kdir" ] && "$here/kafka.sh" stop "$kdir" || true
  [ -n "$rdir" ] && "$here/rest.sh" stop "$rdir" || true
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

run_one() { # SYSTEM ROUND
  local sys=$1 r=$2 out="$RES/$1-r$2.json" w="$ROOT/work/run-$1" rc=0 lg="$RES/$1-r$2.log"
  log "round $r $sys (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  case "$sys" in
  lakemirror|lakemirror-mirror)
    local kargs=() sargs=$lm_start_args
    # mirror only: the like-for-like comparison with the peers that write only the mirror
    [ "$sys" = lakemirror-mirror ] && sargs="$sargs --history=false --bronze=false"
    if [ "$kafka" = apache ]; then
      kdir="$ROOT/work/kafka"
      local kpid
      kpid=$("$here/kafka.sh" start "$CACHE" "$kdir" $((PORT_BASE + 192)) $((PORT_BASE + 193)))
      kargs=(--kafka-brokers "127.0.0.1:$((PORT_BASE + 192))" --broker-pid "$kpid")
    fi
    [ "$stream" = 1 ] && kargs+=(--stream --rows "$rows" --changes "$changes")
    # shellcheck disable=SC2086
    "$BENCHCTL" lakemirror --system "$sys" --data "$DATA" --batch "$batch" --work "$w" --out "$out" --bin "$BIN" \
      --port-base "$PORT_BASE" --start-args "$sargs" --worker-args "$lm_worker_args" "${kargs[@]}" $lm_args >"$lg" 2>&1 || rc=$?
    if [ -n "$kdir" ]; then "$here/kafka.sh" stop "$kdir"; [ "$keep" = 1 ] || rm -rf "$kdir"; kdir=""; fi ;;
  spark-mor|spark-cow)
    "$PY" "$here/peers/run_spark.py" --data "$DATA" --batch "$batch" --mode "${sys#spark-}" --work "$w" --out "$out" --jar "$SPARK_JAR" >"$lg" 2>&1 || rc=$? ;;
  spark-full)
    "$PY" "$here/peers/run_spark.py" --data "$DATA" --batch "$batch" --mode mor --tables full --work "$w" --out "$out" --jar "$SPARK_JAR" >"$lg" 2>&1 || rc=$? ;;
  duckdb-native)
    "$PY" "$here/peers/run_duckdb.py" --data "$DATA" --batch "$batch" --work "$w" --out "$out" >"$lg" 2>&1 || rc=$? ;;
  duckdb-iceberg)
    local rport=$((PORT_BASE + 181)) rpid=""
    rdir="$w-rest"
    if rpid=$("$here/rest.sh" start "$CACHE" "$rdir" "$rport" 2>>"$lg"); then
      "$PY" "$here/peers/run_duckdb.py" --mode iceberg --rest-uri "http://127.0.0.1:$rport" --rest-pid "$rpid" \
        --data "$DATA" --batch "$batch" --work "$w" --out "$out" >>"$lg" 2>&1 || rc=$?
    else
      rc=1
    fi
    "$here/rest.sh" stop "$rdir"
    rdir="" ;;
  pyiceberg)
    "$PY" "$here/peers/run_pyiceberg.py" --data "$DATA" --batch "$batch" --work "$w" --out "$out" >"$lg" 2>&1 || rc=$? ;;
  esac
  if [ ! -f "$out" ]; then
    log "  $sys FAILED (exit $rc), log $lg"; tail -n 5 "$lg" >&2
    printf '{"system": "%s", "batch": %s, "data": "%s", "error": "runner exited %s without a result (log %s)"}\n' "$sys" "$batch" "$DATA" "$rc" "$lg" >"$out"
  else
    [ "$rc" = 0 ] || log "  $sys exited $rc (log $lg)"
    "$PY" "$here/peers/inspect_mirror.py" "$out" --data "$DATA" >"$RES/$sys-r$r.check" 2>&1 ||
      log "  checker failed: $(tail -n 2 "$RES/$sys-r$r.check")"
  fi
  "$PY" - "$out" <<'PYEOF' >&2
import json, sys
r = json.load(open(sys.argv[1]))
c = r.get("check") or {}
v = "FAILED: " + r["error"][:200] if r.get("error") else ("OK" if c.get("correct") else ("WRONG" if c else "UNCHECKED"))
print(f"  {r['system']}: phase 2 {r.get('phase2_s')} s, {r.get('phase2_events_per_s')} events/s, {r.get('phase2_cpu_s')} CPU-s; "
      f"initial load {r.get('initial_load_s')} s; {v}" + ("" if v != "WRONG" else f" (got {c.get('got')}, expected {c.get('expected')})"))
h = r.get("history_check")
if h:
    print(f"    history: {'open versions OK' if h.get('correct') else 'WRONG'}; {h.get('versions')} versions "
          f"({h.get('expected_versions')} in an in-order history, complete: {h.get('complete')}), {h.get('open')} open"
          + (f"; {h}" if not h.get("correct") else ""))
PYEOF
  [ "$keep" = 1 ] || rm -rf "$w" "$w-rest"
  [ "$stream" = 1 ] && [ "$keep" != 1 ] && rm -rf "$DATA"
  return 0
}

for r in $(seq "$rounds"); do
  for s in $systems; do run_one "$s" "$r"; done
done
"$BENCHCTL" report "$RES" | tee "$RES/report.md"
log "results: $RES (report.md, per-run RESULT JSON, .check, .log)"
