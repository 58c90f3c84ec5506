// Command dev is the lakemirror dev worker: the worker (./worker) plus an
// embedded dev stack in the same process: a Temporal dev server with the
// Web UI (ports -dev-temporal-port and +1000: 7233 and 8233), a Kafka
// broker (-dev-kafka-port, 19092; an explicit -kafka-brokers or
// KAFKA_BROKERS uses that Kafka instead) and a SQLite Iceberg catalog,
// persisted under -data-dir; an explicit catalog (-catalog-uri,
// -warehouse, -catalog-type other than sql) is used instead of the local
// one. Its worker id (-worker-id) defaults to the one persisted in
// <data-dir>/worker-id (devstack.WorkerID), so a restarted dev worker
// takes its tables back at once instead of after the hand-over wait.
//
//	go run ./worker/dev                 # what `worker -dev` was
//	go build -o bin/worker-dev ./worker/dev
//
// It links go.temporal.io/server and the Web UI, which the production
// worker does not. Flags and exit codes are the worker's.
package main

import (
	"context"
	"flag"
	"log/slog"
	"os"

	"github.com/lakemirror/lakemirror/internal/config"
	"github.com/lakemirror/lakemirror/internal/devstack"
	"github.com/lakemirror/lakemirror/worker/internal/workercmd"
	"github.com/lakemirror/lakemirror/workflows"
)

func main() {
	os.Exit(workercmd.Main(context.Background(), "worker-dev", os.Args[1:], os.Stdout, os.Stderr, &stack{}))
}

// stack starts devstack.StartStack for the worker.
type stack struct {
	grpcPort, kafkaPort int
}

func (d *stack) Bind(fs *flag.FlagSet) {
	fs.IntVar(&d.grpcPort, "dev-temporal-port", 7233, "the embedded Temporal's frontend port (Web UI on port+1000)")
	fs.IntVar(&d.kafkaPort, "dev-kafka-port", 19092, "the embedded Kafka broker's port (unless -kafka-brokers or KAFKA_BROKERS names a Kafka)")
	fs.Bool("dev", true, "accepted for command lines of the former `worker -dev`: the dev worker always runs the embedded stack")
}

func (d *stack) Start(ctx context.Context, s *config.Settings, explicit func(flag, env string) bool, logger *slog.Logger) (func(), error) {
	opts := devstack.StackOptions{DataDir: s.DataDir, GRPCPort: d.grpcPort, KafkaPort: d.kafkaPort, SearchAttributes: workflows.SearchAttributeTypes, Logger: logger}
	if explicit("kafka-brokers", config.EnvKafkaBrokers) {
		opts.KafkaBrokers = s.KafkaBrokers // embedded Temporal and catalog, the given Kafka
	}
	st, err := devstack.StartStack(ctx, opts)
	if err != nil {
		return nil, err
	}
	workerID, err := devWorkerID(*s, explicit)
	if err != nil {
		st.Stop()
		return nil, err
	}
	*s = withStack(*s, st.Settings, opts.KafkaBrokers != nil, workerID)
	logger.Info("dev stack up", "worker_id", workerID, "temporal", s.TemporalAddress, "web_ui", st.Temporal.UIURL(), "embedded_kafka", st.Kafka != nil,
		"kafka", s.KafkaBrokers, "data_dir", s.DataDir)
	return st.Stop, nil
}

// withStack is the dev worker's settings: the embedded stack's (Temporal,
// Kafka unless an external one is given, the local catalog) with the
// worker's own from the flags kept: an explicit catalog, the external
// Kafka's security, sources, schema registry, state dir, the local state's
// sidecar, index budget and idle release, and workerID.
func withStack(given, stack config.Settings, externalKafka bool, workerID string) config.Settings {
	s := stack
	if c := given.Catalog; c.URI != "" || c.Warehouse != "" || c.Type != "sql" {
		s.Catalog = c // an explicit catalog wins over the local one
	} else {
		s.Catalog.ID = c.ID
	}
	if externalKafka {
		s.KafkaSecurity = given.KafkaSecurity
	}
	s.Sources, s.SchemaRegistry, s.RegistrySecurity, s.StateDir, s.WorkerID = given.Sources, given.SchemaRegistry, given.RegistrySecurity, given.StateDir, workerID
	s.SidecarEvery, s.IndexMemory, s.IndexTableMemory, s.ReleaseIdleState = given.SidecarEvery, given.IndexMemory, given.IndexTableMemory, given.ReleaseIdleState
	return s
}

// devWorkerID is the dev worker's id: the one given (-worker-id or
// LAKEMIRROR_WORKER_ID), else the one persisted in its data dir
// (devstack.WorkerID), else "" (no data dir: a random id per process).
func devWorkerID(s config.Settings, explicit func(flag, env string) bool) (string, error) {
	if explicit("worker-id", config.EnvWorkerID) || s.DataDir == "" {
		return s.WorkerID, nil
	}
	return devstack.WorkerID(s.DataDir)
}
