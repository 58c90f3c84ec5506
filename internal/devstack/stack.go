package devstack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/lakemirror/lakemirror/internal/config"
)

// StackOptions configures the embedded stack.
type StackOptions struct {
	DataDir   string // SQLite files, warehouse and Kafka log; "" = in memory and a temp dir for the lake
	GRPCPort  int    // Temporal frontend; 0 = free port (the dev worker's default is 7233)
	UIPort    int    // Web UI; 0 = GRPCPort+1000, -1 = none
	KafkaPort int    // kfake broker; 0 = free port (the dev worker's default is 19092)
	// KafkaBrokers, when set, are an external Kafka to use instead of the
	// embedded broker (embedded Temporal and catalog, real Kafka).
	KafkaBrokers []string
	// SearchAttributes are registered on Temporal's namespace: the ones the
	// table workflows set (workflows.SearchAttributeTypes). Required; the
	// caller passes them so that internal/ does not import workflows (and,
	// through activities, schemas).
	SearchAttributes map[string]enumspb.IndexedValueType
	Logger           *slog.Logger
}

// Stack is the embedded stack: Temporal with the Web UI, a Kafka broker and
// a local SQLite Iceberg catalog, with Settings pointing at them.
type Stack struct {
	Temporal *Temporal
	Kafka    *Kafka
	Settings config.Settings
	tempDir  string
}

// StartStack starts the embedded services: Temporal (with
// o.SearchAttributes, the search attributes the table workflows set), a
// Kafka broker unless KafkaBrokers are given, and Settings for a SQLite
// catalog and warehouse in the data dir. With a DataDir everything
// persists there (temporal.db, kafka/, catalog.db, warehouse/) and a
// restart continues where it stopped.
func StartStack(ctx context.Context, o StackOptions) (*Stack, error) {
	if len(o.SearchAttributes) == 0 {
		return nil, errors.New("devstack: StackOptions.SearchAttributes is empty (pass workflows.SearchAttributeTypes)")
	}
	d := &Stack{}
	dir := o.DataDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "lakemirror-dev-")
		if err != nil {
			return nil, err
		}
		dir, d.tempDir = tmp, tmp
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("devstack: data dir: %w", err)
	}
	topts := TemporalOptions{GRPCPort: o.GRPCPort, UIPort: o.UIPort, SearchAttributes: o.SearchAttributes, Logger: o.Logger}
	kopts := KafkaOptions{Port: o.KafkaPort}
	if o.DataDir != "" {
		topts.DBFile = filepath.Join(dir, "temporal.db")
		kopts.DataDir = filepath.Join(dir, "kafka")
	}
	var err error
	if d.Temporal, err = StartTemporal(ctx, topts); err != nil {
		d.Stop()
		return nil, err
	}
	brokers := o.KafkaBrokers
	if len(brokers) == 0 {
		if d.Kafka, err = StartKafka(kopts); err != nil {
			d.Stop()
			return nil, err
		}
		brokers = d.Kafka.Brokers()
	}
	d.Settings = config.Settings{
		TemporalAddress: d.Temporal.HostPort(),
		Namespace:       d.Temporal.Namespace(),
		KafkaBrokers:    brokers,
		DataDir:         dir,
	}
	d.Settings.Catalog.LocalDir, d.Settings.Catalog.Type = dir, "sql"
	return d, nil
}

// Stop stops the services (and removes the temp dir of an in-memory stack).
func (d *Stack) Stop() {
	if d.Kafka != nil {
		d.Kafka.Stop()
	}
	if d.Temporal != nil {
		_ = d.Temporal.Stop()
	}
	if d.tempDir != "" {
		_ = os.RemoveAll(d.tempDir)
	}
}
