#!/usr/bin/env bash
# Trino as a reader of lakemirror's tables (issue 39 item 2, docs/readers.md):
# TestDeletionVectorReaders with LAKEMIRROR_TRINO set, so Trino reads the
# same position-delete (format-version 2) and deletion-vector (format-version
# 3) mirror and history as pyiceberg, DuckDB and Spark, and the test asserts
# its rows (or its refusal) exactly.
#
# Installs on first use, cached in $LAKEMIRROR_CACHE (default
# ~/.cache/lakemirror-trino): Trino's server tarball from Maven Central
# (io.trino:trino-server:$TRINO_VERSION, about 820 MB, checked against its
# .sha1), of which only bin/, lib/ and the Iceberg plugin are kept, and a
# venv from scripts/realstack/requirements.txt (pyiceberg, DuckDB; PyPI)
# unless LAKEMIRROR_PYTHON names one. Trino needs Java 24 or later: the
# Temurin 25 JDK in /usr/lib/jvm (or TRINO_JAVA_HOME).
#
# Trino runs as one local coordinator on 127.0.0.1:$TRINO_PORT (default
# 38089) with 1 GiB of heap; its catalog "iceberg" is the Iceberg connector
# on a file metastore in a scratch directory, with the native local file
# system (file:// locations); the reader registers each table under its
# metadata.json (system.register_table). Everything is removed at exit.
#   scripts/trino/run.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
TRINO_VERSION=${TRINO_VERSION:-476}
TRINO_PORT=${TRINO_PORT:-38089}
cache=${LAKEMIRROR_CACHE:-${HOME:-/root}/.cache/lakemirror-trino}
log() { printf '%s trino: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }

java_home=${TRINO_JAVA_HOME:-}
if [ -z "$java_home" ]; then
  for d in /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/*-25-* /usr/lib/jvm/*-2[4-9]-*; do
    [ -x "$d/bin/java" ] && { java_home=$d; break; }
  done
fi
[ -n "$java_home" ] && [ -x "$java_home/bin/java" ] || die "Trino $TRINO_VERSION needs Java 24 or later: set TRINO_JAVA_HOME (none found in /usr/lib/jvm)"
jv=$("$java_home/bin/java" -version 2>&1 | head -n1)
major=$(printf '%s' "$jv" | sed -E 's/.*version "([0-9]+).*/\1/')
[ "$major" -ge 24 ] 2>/dev/null || die "Trino $TRINO_VERSION needs Java 24 or later; $java_home has: $jv"

mkdir -p "$cache"
server=$cache/trino-server-$TRINO_VERSION
if [ ! -f "$server/.complete" ]; then
  url=https://repo1.maven.org/maven2/io/trino/trino-server/$TRINO_VERSION/trino-server-$TRINO_VERSION.tar.gz
  tgz=$cache/trino-server-$TRINO_VERSION.tar.gz
  if [ ! -f "$tgz" ]; then
    log "fetching $url"
    curl -sSfL -o "$tgz.part" "$url" || die "could not fetch $url"
    want=$(curl -sSfL "$url.sha1" | cut -c1-40) || die "could not fetch $url.sha1"
    got=$(sha1sum "$tgz.part" | cut -c1-40)
    [ "$want" = "$got" ] || { rm -f "$tgz.part"; die "sha1 of $url is $got, Maven Central says $want"; }
    mv "$tgz.part" "$tgz"
  fi
  log "unpacking into $server (bin/, lib/ and the Iceberg plugin kept)"
  rm -rf "$server" "$server.tmp"
  mkdir -p "$server.tmp"
  # whole: the plugins share jars as hard links
  tar xzf "$tgz" -C "$server.tmp" --strip-components=1
  find "$server.tmp/plugin" -mindepth 1 -maxdepth 1 ! -name iceberg -exec rm -rf {} +
  rm -rf "$server.tmp/secrets-plugin"
  mv "$server.tmp" "$server"
  touch "$server/.complete"
fi

python=${LAKEMIRROR_PYTHON:-}
if [ -z "$python" ]; then
  req=$repo/scripts/realstack/requirements.txt
  venv=$cache/venv-$(sha256sum "$req" | cut -c1-12)
  if [ ! -f "$venv/.complete" ]; then
    log "installing $req into $venv (PyPI)"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$req" >"$cache/pip.log" 2>&1 ||
      { tail -n 30 "$cache/pip.log" >&2; die "pip install failed"; }
    touch "$venv/.complete"
  fi
  python=$venv/bin/python
fi

work=$(mktemp -d /tmp/lakemirror-trino.XXXXXX)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/etc/catalog" "$work/data" "$work/metastore"
cat >"$work/etc/node.properties" <<EOP
node.environment=lakemirror
node.id=lakemirror-trino
node.data-dir=$work/data
EOP
cat >"$work/etc/jvm.config" <<'EOP'
-server
-Xmx1G
-XX:+UseG1GC
-XX:+ExitOnOutOfMemoryError
-Djdk.attach.allowAttachSelf=true
--enable-native-access=ALL-UNNAMED
EOP
cat >"$work/etc/config.properties" <<EOP
coordinator=true
node-scheduler.include-coordinator=true
http-server.http.port=$TRINO_PORT
discovery.uri=http://127.0.0.1:$TRINO_PORT
query.max-memory=512MB
query.max-memory-per-node=512MB
EOP
cat >"$work/etc/catalog/iceberg.properties" <<EOP
connector.name=iceberg
iceberg.catalog.type=testing_file_metastore
hive.metastore.catalog.dir=local://$work/metastore
fs.native-local.enabled=true
local.location=/
iceberg.register-table-procedure.enabled=true
EOP
log "starting Trino $TRINO_VERSION ($jv) on 127.0.0.1:$TRINO_PORT"
JAVA_HOME=$java_home PATH=$java_home/bin:$PATH "$server/bin/launcher" run \
  --etc-dir "$work/etc" --data-dir "$work/data" >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 180); do
  if curl -sf "http://127.0.0.1:$TRINO_PORT/v1/info" 2>/dev/null | grep -q '"starting":false'; then break; fi
  kill -0 "$pid" 2>/dev/null || { tail -n 40 "$work/server.log" >&2; die "Trino exited while starting"; }
  sleep 1
done
curl -sf "http://127.0.0.1:$TRINO_PORT/v1/info" | grep -q '"starting":false' || { tail -n 40 "$work/server.log" >&2; die "Trino did not start within 180 s"; }
log "started; TestDeletionVectorReaders with Trino"
out=$work/test.out
if ! (cd "$repo" && LAKEMIRROR_PYTHON="$python" LAKEMIRROR_TRINO="http://127.0.0.1:$TRINO_PORT" \
  go test -count=1 -tags e2e -timeout 15m -run '^TestDeletionVectorReaders$' -v ./internal/lake/) >"$out" 2>&1; then
  cat "$out" >&2
  die "TestDeletionVectorReaders with Trino failed"
fi
grep -q -- '--- PASS: TestDeletionVectorReaders' "$out" || { cat "$out" >&2; die "TestDeletionVectorReaders did not run (skipped?)"; }
grep -o '"trino": {[^}]*}' "$out" | sort | uniq -c >&2 || true
log "ok"
