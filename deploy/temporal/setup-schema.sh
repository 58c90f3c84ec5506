#!/bin/sh
# Creates (or upgrades) the Temporal persistence and visibility schemas in
# the temporal-postgresql service. Runs in temporalio/admin-tools; safe to
# run again: existing databases are kept, update-schema is a no-op when the
# schema is current.
set -eu

host=${POSTGRES_SEEDS:-temporal-postgresql}
port=${DB_PORT:-5432}
user=${POSTGRES_USER:-temporal}
export SQL_PASSWORD=${POSTGRES_PWD:-temporal}

attempt=0
until nc -z "$host" "$port"; do
  attempt=$((attempt + 1))
  if [ "$attempt" -ge 60 ]; then
    echo "PostgreSQL at $host:$port is not reachable" >&2
    exit 1
  fi
  echo "waiting for PostgreSQL at $host:$port"
  sleep 1
done

tool() { temporal-sql-tool --plugin postgres12 --ep "$host" -p "$port" -u "$user" "$@"; }

for db in temporal temporal_visibility; do
  tool --db "$db" create || true # already exists on a re-run
done
tool --db temporal setup-schema -v 0.0 || true
tool --db temporal update-schema -d /etc/temporal/schema/postgresql/v12/temporal/versioned
tool --db temporal_visibility setup-schema -v 0.0 || true
tool --db temporal_visibility update-schema -d /etc/temporal/schema/postgresql/v12/visibility/versioned
echo "Temporal schema ready"
