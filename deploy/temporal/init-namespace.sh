#!/bin/sh
# Creates the Temporal namespace and registers the custom search
# attributes the lakemirror table workflows set (Web UI filters such as
# `LakemirrorPaused = true`). Runs in temporalio/admin-tools; idempotent.
set -eu

address=${TEMPORAL_ADDRESS:-temporal:7233}
namespace=${TEMPORAL_NAMESPACE:-default}

attempt=0
until temporal operator cluster health --address "$address" >/dev/null 2>&1; do
  attempt=$((attempt + 1))
  if [ "$attempt" -ge 60 ]; then
    echo "Temporal at $address is not healthy" >&2
    exit 1
  fi
  echo "waiting for Temporal at $address"
  sleep 2
done

temporal operator namespace describe --address "$address" --namespace "$namespace" >/dev/null 2>&1 ||
  temporal operator namespace create --address "$address" --namespace "$namespace" --retention 168h

# name:type pairs; keep in sync with runner.SearchAttributes (deploy's test checks it).
for sa in LakemirrorTable:Keyword LakemirrorTopic:Keyword LakemirrorPhase:Keyword LakemirrorPaused:Bool; do
  name=${sa%%:*}
  type=${sa#*:}
  attempt=0
  until temporal operator search-attribute create --address "$address" --namespace "$namespace" \
    --name "$name" --type "$type"; do
    attempt=$((attempt + 1))
    if [ "$attempt" -ge 10 ]; then
      echo "could not register search attribute $name" >&2
      exit 1
    fi
    sleep 2 # the namespace may not be visible to every frontend yet
  done
done
temporal operator search-attribute list --address "$address" --namespace "$namespace"
