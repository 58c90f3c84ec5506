package runner

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/lakemirror/lakemirror/internal/config"
	"github.com/lakemirror/lakemirror/internal/devstack"
)

// Search attributes the pipeline keeps on table workflows (Web UI filters).
var SearchAttributes = map[string]enumspb.IndexedValueType{
	"LakemirrorTable":  enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"LakemirrorTopic":  enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"LakemirrorPhase":  enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"LakemirrorPaused": enumspb.INDEXED_VALUE_TYPE_BOOL,
}

// DevOptions configures the embedded stack.
type DevOptions struct {
	DataDir   string // SQLite files, warehouse and Kafka log; "" = in memory and a temp dir for the lake
	GRPCPort  int    // Temporal frontend; 0 = free port (the -dev default is 7233)
	UIPort    int    // Web UI; 0 = GRPCPort+1000, -1 = none
	KafkaPort int    // kfake broker; 0 = free port (the -dev default is 19092)
	// KafkaBrokers, when set, are an external Kafka to use instead of the
	// embedded broker (embedded Temporal and catalog, real Kafka).
	KafkaBrokers []string
	Logger       *slog.Logger
}

// Dev is the embedded stack: Temporal with the Web UI, a Kafka broker and
// a local SQLite Iceberg catalog, with Settings pointing at them.
type Dev struct {
	Temporal *devstack.Temporal
	Kafka    *devstack.Kafka
	Settings config.Settings
	tempDir  string
}

// StartDev starts the embedded services. With a DataDir everything
// persists there (temporal.db, kafka/, catalog.db, warehouse/) and a
// restart continues where it stopped.
func StartDev(ctx context.Context, o DevOptions) (*Dev, error) {
	d := &Dev{}
	dir := o.DataDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "lakemirror-dev-")
		if err != nil {
			return nil, err
		}
		dir, d.tempDir = tmp, tmp
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("runner: data dir: %w", err)
	}
	topts := devstack.TemporalOptions{GRPCPort: o.GRPCPort, UIPort: o.UIPort, SearchAttributes: SearchAttributes, Logger: o.Logger}
	kopts := devstack.KafkaOptions{Port: o.KafkaPort}
	if o.DataDir != "" {
		topts.DBFile = filepath.Join(dir, "temporal.db")
		kopts.DataDir = filepath.Join(dir, "kafka")
	}
	var err error
	if d.Temporal, err = devstack.StartTemporal(ctx, topts); err != nil {
		d.Stop()
		return nil, err
	}
	brokers := o.KafkaBrokers
	if len(brokers) == 0 {
		if d.Kafka, err = devstack.StartKafka(kopts); err != nil {
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
func (d *Dev) Stop() {
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
