#!/usr/bin/env bash
# Refreshes the workers' profile for profile-guided optimization
# (worker/default.pgo and worker/dev/default.pgo, one file): runs the
# benchmark workload through lakemirror with the worker's CPU profile
# recorded during the initial load and phase 2 (benchctl lakemirror
# --cpuprofile), merges the pieces and copies the result to both worker
# directories. `go build ./worker` and `go build ./worker/dev` then use it
# (-pgo=auto). See README.md, "Profile-guided optimization".
#
#   pgo.sh [--rows N0] [--changes S] [--batch B]     (default 1000000 1000000 50000)
#
# Environment: as run.sh (LMBENCH_ROOT, LMBENCH_VENV, LMBENCH_CACHE,
# LAKEMIRROR_REV, LMBENCH_PORT_BASE). The profile comes from the binaries
# of LAKEMIRROR_REV (default HEAD), built as run.sh builds them.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
rows=1000000 changes=1000000 batch=50000
while [ $# -gt 0 ]; do
  case "$1" in
  --rows) rows=$2; shift 2 ;;
  --changes) changes=$2; shift 2 ;;
  --batch) batch=$2; shift 2 ;;
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) echo "pgo.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
prof=$(mktemp -d /tmp/lmbench-pgo.XXXXXX)
trap 'rm -rf "$prof"' EXIT
"$here/run.sh" --rows "$rows" --changes "$changes" --batch "$batch" --systems lakemirror \
  --lm-args "--cpuprofile $prof"
ls "$prof"/*.pprof >/dev/null
go tool pprof -proto "$prof"/*.pprof >"$prof/merged.pgo" 2>/dev/null
cp "$prof/merged.pgo" "$repo/worker/default.pgo"
cp "$prof/merged.pgo" "$repo/worker/dev/default.pgo"
echo "pgo.sh: worker/default.pgo and worker/dev/default.pgo from $(ls "$prof"/*.pprof | wc -l) profile pieces ($(wc -c <"$prof/merged.pgo") bytes)" >&2
