#!/bin/sh
# Registers (or updates) a Kafka Connect connector and waits until the
# connector and all its tasks run. Idempotent: PUT /connectors/NAME/config
# creates the connector or replaces its configuration.
#
#   CONNECT_URL       Kafka Connect REST endpoint (default http://connect:8083)
#   CONNECTOR_CONFIG  JSON file with the connector's configuration (a flat
#                     object of config keys, including "name")
#   CONNECTOR_NAME    connector name (default: the file name without .json)
set -eu

url=${CONNECT_URL:-http://connect:8083}
file=${CONNECTOR_CONFIG:?set CONNECTOR_CONFIG}
name=${CONNECTOR_NAME:-$(basename "$file" .json)}
out=/tmp/connect-response

attempt=0
while :; do
  code=$(curl -s -o "$out" -w '%{http_code}' -X PUT -H 'Content-Type: application/json' \
    --data @"$file" "$url/connectors/$name/config" || echo 000)
  case $code in
    200 | 201) echo "connector $name registered (HTTP $code)"; break ;;
  esac
  attempt=$((attempt + 1))
  if [ "$attempt" -ge 90 ]; then
    echo "registering $name failed: HTTP $code" >&2
    cat "$out" >&2 || true
    exit 1
  fi
  echo "waiting for Kafka Connect at $url (HTTP $code)"
  sleep 2
done

attempt=0
while :; do
  status=$(curl -s "$url/connectors/$name/status" || true)
  running=$(printf '%s' "$status" | grep -o '"state": *"RUNNING"' | wc -l)
  if [ "$running" -ge 2 ]; then # the connector and its task
    echo "connector $name is running: $status"
    exit 0
  fi
  if printf '%s' "$status" | grep -q '"state": *"FAILED"'; then
    echo "connector $name failed: $status" >&2
    exit 1
  fi
  attempt=$((attempt + 1))
  if [ "$attempt" -ge 60 ]; then
    echo "connector $name is not running: $status" >&2
    exit 1
  fi
  sleep 2
done
