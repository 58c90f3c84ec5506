#!/usr/bin/env bash
# An Apache Kafka single-node KRaft broker (combined broker + controller) on
# 127.0.0.1 for `run.sh --kafka apache`, from Maven Central, at the version
# the real-stack suite pins (scripts/realstack/versions.env):
#
#   kafka.sh setup CACHE                  resolve the broker's jars into CACHE/kafka-<version>/libs (once;
#                                         reuses the real-stack suite's cache when it has them)
#   kafka.sh start CACHE DIR PORT CTRL    format a fresh log dir under DIR and start the broker;
#                                         prints its pid (also in DIR/kafka.pid) once PORT accepts
#   kafka.sh stop DIR                     stop the broker started in DIR (TERM, then KILL), by its pid
#
# The server settings are the real-stack suite's (scripts/realstack/services.sh
# start_kafka), with a 1 GiB heap.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KAFKA_VERSION=4.3.0 LOG4J_VERSION=2.25.4 MVN_DEPENDENCY_PLUGIN=3.8.1
# shellcheck source=../realstack/versions.env
[ -f "$here/../realstack/versions.env" ] && . "$here/../realstack/versions.env"

libs_dir() { # CACHE: the jars, preferring the real-stack suite's cache
  local rs=${LAKEMIRROR_CACHE:-${HOME:-/root}/.cache/lakemirror-realstack}/kafka-$KAFKA_VERSION
  if [ -f "$rs/.complete" ]; then echo "$rs/libs"; else echo "$1/kafka-$KAFKA_VERSION/libs"; fi
}

cmd=${1:?setup|start|stop}
case "$cmd" in
setup)
  cache=${2:?CACHE}
  libs=$(libs_dir "$cache")
  [ -d "$libs" ] && [ -f "$(dirname "$libs")/.complete" ] && exit 0
  command -v mvn >/dev/null || { echo "kafka.sh: mvn is required" >&2; exit 1; }
  build="$cache/build-kafka-$KAFKA_VERSION"
  mkdir -p "$build"
  dep() { printf '    <dependency><groupId>%s</groupId><artifactId>%s</artifactId><version>%s</version></dependency>\n' "$1" "$2" "$3"; }
  cat >"$build/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>lakemirror.bench</groupId>
  <artifactId>kafka-broker</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
$(dep org.apache.kafka kafka_2.13 "$KAFKA_VERSION")
$(dep org.apache.logging.log4j log4j-slf4j-impl "$LOG4J_VERSION")
  </dependencies>
</project>
EOF
  echo "kafka.sh: resolving org.apache.kafka:kafka_2.13:$KAFKA_VERSION from Maven Central into $libs" >&2
  rm -rf "$libs.tmp"
  if ! mvn -B -q -f "$build/pom.xml" "org.apache.maven.plugins:maven-dependency-plugin:$MVN_DEPENDENCY_PLUGIN:copy-dependencies" \
    -DincludeScope=runtime -DoutputDirectory="$libs.tmp" >"$build/mvn.log" 2>&1; then
    tail -n 30 "$build/mvn.log" >&2
    echo "kafka.sh: maven could not resolve the broker (log $build/mvn.log)" >&2
    exit 1
  fi
  rm -rf "$libs" && mv "$libs.tmp" "$libs"
  touch "$(dirname "$libs")/.complete"
  ;;
start)
  cache=${2:?CACHE} dir=${3:?DIR} port=${4:?PORT} ctrl=${5:?CTRLPORT}
  libs=$(libs_dir "$cache")
  [ -d "$libs" ] || { echo "kafka.sh: run kafka.sh setup first" >&2; exit 1; }
  rm -rf "$dir" && mkdir -p "$dir/data"
  cat >"$dir/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$ctrl
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$ctrl
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data
num.partitions=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
log.retention.hours=-1
log.retention.bytes=-1
num.network.threads=2
num.io.threads=2
background.threads=2
EOF
  cat >"$dir/log4j2.properties" <<EOF
status = warn
appender.f.type = File
appender.f.name = F
appender.f.fileName = $dir/kafka.log
appender.f.layout.type = PatternLayout
appender.f.layout.pattern = [%d] %p %m (%c)%n
rootLogger = WARN, F
EOF
  kj() { java -Xms128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dlog4j2.configurationFile="$dir/log4j2.properties" -cp "$libs/*" "$@"; }
  id=$(kj kafka.tools.StorageTool random-uuid 2>>"$dir/kafka.log")
  kj kafka.tools.StorageTool format -t "$id" -c "$dir/server.properties" >>"$dir/kafka.log" 2>&1 ||
    { tail -n 20 "$dir/kafka.log" >&2; echo "kafka.sh: storage format failed" >&2; exit 1; }
  nohup java -Xmx1g -Xms256m -XX:+UseSerialGC -Dlog4j2.configurationFile="$dir/log4j2.properties" -Dkafka.logs.dir="$dir" \
    -cp "$libs/*" kafka.Kafka "$dir/server.properties" >"$dir/kafka.out" 2>&1 &
  pid=$!
  echo "$pid" >"$dir/kafka.pid"
  for _ in $(seq 480); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$pid"; exit 0; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  tail -n 20 "$dir/kafka.out" "$dir/kafka.log" >&2 || true
  kill "$pid" 2>/dev/null || true
  echo "kafka.sh: the broker did not listen on 127.0.0.1:$port" >&2
  exit 1
  ;;
stop)
  dir=${2:?DIR}
  [ -f "$dir/kafka.pid" ] || exit 0
  pid=$(cat "$dir/kafka.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 120); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/kafka.pid"
  ;;
*)
  echo "usage: kafka.sh setup|start|stop ..." >&2
  exit 2
  ;;
esac
