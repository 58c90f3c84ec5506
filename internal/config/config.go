// Package config holds the settings shared by the worker and the starter
// CLI: where Temporal, Kafka and the Iceberg catalog are. Every setting is
// a flag with an environment-variable default, so containers configure by
// environment and people by flags.
package config

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lakemirror/lakemirror/internal/lake"
)

// Environment variables read as flag defaults.
const (
	EnvTemporalAddress = "TEMPORAL_ADDRESS"   // host:port of the Temporal frontend
	EnvNamespace       = "TEMPORAL_NAMESPACE" // Temporal namespace
	EnvKafkaBrokers    = "KAFKA_BROKERS"      // comma-separated seed brokers
	EnvCatalogType     = "CATALOG_TYPE"       // sql | rest | glue
	EnvCatalogURI      = "CATALOG_URI"        // SQL DSN or REST endpoint (glue: none)
	EnvWarehouse       = "WAREHOUSE"          // warehouse location (file://, s3://, gs://, abfss://, wasbs://)
	EnvCatalogProps    = "CATALOG_PROPS"      // comma-separated k=v catalog/FileIO properties (s3.endpoint=..., gcs.*, adls.*, glue.*)
	EnvDataDir         = "LAKEMIRROR_DATA_DIR"
	EnvSchemaRegistry  = "SCHEMA_REGISTRY_URL" // Confluent-compatible schema registry for Avro records
	EnvSources         = "LAKEMIRROR_SOURCES"  // comma-separated name=postgres-dsn pairs for direct loads
	EnvStateDir        = "LAKEMIRROR_STATE_DIR"
	EnvCatalogID       = "LAKEMIRROR_CATALOG_ID"         // the catalog's identity for the workers' wiring check (lake.CatalogConfig.ID)
	EnvWorkerID        = "LAKEMIRROR_WORKER_ID"          // this worker's id: its own task queue is "<queue>@<id>" (routing)
	EnvSidecarEvery    = "LAKEMIRROR_SIDECAR_EVERY"      // write a table's state sidecar every this many batches (and on release); 0 = never
	EnvIndexMemory     = "LAKEMIRROR_INDEX_MEMORY"       // RAM for all of the worker's key indexes (bytes, or with KiB, MiB, GiB)
	EnvIndexTableMem   = "LAKEMIRROR_INDEX_TABLE_MEMORY" // RAM for one table's key index before it spills to disk
	EnvReleaseIdle     = "LAKEMIRROR_RELEASE_IDLE_STATE" // free a table's local state after it was idle this long (Go duration); 0 = never
)

// DefaultReleaseIdleState is Settings.ReleaseIdleState's default.
const DefaultReleaseIdleState = time.Hour

// Settings locate the services the pipeline talks to.
type Settings struct {
	TemporalAddress string
	Namespace       string
	KafkaBrokers    []string
	Catalog         lake.CatalogConfig
	DataDir         string            // local state: the default SQLite catalog and warehouse, the dev worker's Temporal database and Kafka log
	SchemaRegistry  string            // Confluent-compatible schema registry URL(s), comma-separated; "" = JSON records only
	Sources         map[string]string // source name → PostgreSQL DSN, for direct initial loads and re-snapshots
	// StateDir is where the worker keeps the tables' local write-path
	// state (key index spill-free; the per-key chain log, see tablestate.State):
	// a per-process directory under it, removed on exit. "" = the system
	// temp directory. Fast local disk; its size is about the tables' bronze.
	StateDir string
	// WorkerID names this worker among the workers of the task queue: it
	// also polls "<queue>@<WorkerID>", where the tables it holds run
	// (routing, docs/design.md). "" = a random id per process; a stable id
	// (the pod name) keeps a restarted worker's queue.
	WorkerID string
	// SidecarEvery is how often, in batches of a table, the worker writes
	// the table's state sidecar next to the mirror (and whenever it
	// releases a table), so that the next worker loads the state instead
	// of reading the tables; 0 = never (a sidecar found is still loaded).
	SidecarEvery int
	// IndexMemory is the RAM, in bytes, the worker's key indexes may
	// hold together, and IndexTableMemory one table's; an index past
	// either spills to local disk under StateDir (keyindex.Budget,
	// docs/design.md "Local state"). 0 = the default: an eighth of the
	// container's memory (MemoryLimit) for the worker, a quarter of the
	// worker's for a table.
	IndexMemory, IndexTableMemory int64
	// ReleaseIdleState is how long a table's local state stays in the
	// worker's memory after its last batch or job: then it is freed
	// (activities.ReleaseIdleStates; with SidecarEvery > 0 its sidecar is
	// written first) and the table's next batch loads the sidecar or
	// builds the state from the tables. 0 = never. Default
	// DefaultReleaseIdleState.
	ReleaseIdleState time.Duration

	// Connection security (security.go): TLS, mutual TLS and SASL for
	// Kafka; TLS, mutual TLS and API keys for Temporal; TLS and basic
	// auth for the schema registry.
	KafkaSecurity    KafkaSecurity
	TemporalSecurity TemporalSecurity
	RegistrySecurity RegistrySecurity
}

// Bind registers the settings' flags on fs, with defaults from the
// environment. Call Finish after fs.Parse.
func (s *Settings) Bind(fs *flag.FlagSet) *Binding {
	b := &Binding{s: s}
	fs.StringVar(&s.TemporalAddress, "temporal-address", env(EnvTemporalAddress, "127.0.0.1:7233"), "Temporal frontend host:port (env "+EnvTemporalAddress+")")
	fs.StringVar(&s.Namespace, "namespace", env(EnvNamespace, "default"), "Temporal namespace (env "+EnvNamespace+")")
	fs.StringVar(&b.brokers, "kafka-brokers", env(EnvKafkaBrokers, "127.0.0.1:19092"), "comma-separated Kafka seed brokers (env "+EnvKafkaBrokers+")")
	fs.StringVar(&s.Catalog.Type, "catalog-type", env(EnvCatalogType, "sql"), "Iceberg catalog type: sql, rest or glue (AWS Glue Data Catalog) (env "+EnvCatalogType+")")
	fs.StringVar(&s.Catalog.URI, "catalog-uri", env(EnvCatalogURI, ""), "catalog URI: a database/sql DSN for sql (default: SQLite in the data dir), the endpoint for rest; none for glue (glue.endpoint in --catalog-props) (env "+EnvCatalogURI+")")
	fs.StringVar(&s.Catalog.Warehouse, "warehouse", env(EnvWarehouse, ""), "warehouse location: file:///path, s3://bucket/prefix, gs://bucket/prefix, abfss://container@account.dfs.core.windows.net/prefix or wasbs://container@account.blob.core.windows.net/prefix (default: the data dir; required for glue) (env "+EnvWarehouse+")")
	fs.StringVar(&s.Catalog.ID, "catalog-id", env(EnvCatalogID, ""), "the catalog's name for the check that every worker of a table uses the table's catalog (default: type, URI and warehouse without credentials); give workers that reach one catalog under different addresses the same id (env "+EnvCatalogID+")")
	fs.StringVar(&b.props, "catalog-props", env(EnvCatalogProps, ""), "comma-separated k=v catalog and FileIO properties (s3.*, gcs.*, adls.*, glue.*), e.g. s3.endpoint=http://minio:9000,s3.region=us-east-1; credentials left out come from the environment (AWS_*, GOOGLE_APPLICATION_CREDENTIALS, STORAGE_EMULATOR_HOST, AZURE_STORAGE_*) (env "+EnvCatalogProps+")")
	fs.StringVar(&s.SchemaRegistry, "schema-registry", env(EnvSchemaRegistry, ""), "worker only: Confluent-compatible schema registry URL(s) for Avro records (AvroConverter), comma-separated (env "+EnvSchemaRegistry+")")
	fs.StringVar(&b.sources, "sources", env(EnvSources, ""), "worker only: comma-separated name=postgres://... source databases for direct loads (env "+EnvSources+"); DSNs stay on the worker")
	fs.StringVar(&s.StateDir, "state-dir", env(EnvStateDir, ""), "worker only: directory for the tables' local write-path state (a per-process directory under it, removed on exit; default: the system temp directory) (env "+EnvStateDir+")")
	fs.StringVar(&s.WorkerID, "worker-id", env(EnvWorkerID, ""), "worker only: this worker's id; its own task queue is <queue>@<id>, where the tables it holds run (default: random per process; the dev worker keeps its own in <data-dir>/worker-id) (env "+EnvWorkerID+")")
	fs.IntVar(&s.SidecarEvery, "sidecar-every", envInt(EnvSidecarEvery, 0), "worker only: write a table's local state sidecar next to its mirror every this many batches, and when the worker releases the table, so another worker loads it instead of reading the tables; 0 = never (env "+EnvSidecarEvery+")")
	fs.StringVar(&b.indexMemory, "index-memory", env(EnvIndexMemory, ""), "worker only: RAM for all of the worker's key indexes together, e.g. 3GiB; past it a table's index spills to local disk under the state dir (default: an eighth of the container's memory, cgroup memory.max or MemTotal) (env "+EnvIndexMemory+")")
	fs.StringVar(&b.indexTable, "index-table-memory", env(EnvIndexTableMem, ""), "worker only: RAM for one table's key index before it spills to local disk, e.g. 512MiB (default: a quarter of --index-memory) (env "+EnvIndexTableMem+")")
	fs.StringVar(&b.releaseIdle, "release-idle-state", env(EnvReleaseIdle, DefaultReleaseIdleState.String()), "worker only: free a table's local state (key index, chain log) once the table had no batch for this long, e.g. 30m; its next batch loads the sidecar (written at the release with --sidecar-every) or builds the state from the tables; 0 = never (env "+EnvReleaseIdle+")")
	fs.StringVar(&s.DataDir, "data-dir", env(EnvDataDir, ".lakemirror"), "directory for local state: the default SQLite catalog and warehouse, and the dev worker's Temporal database and Kafka log (env "+EnvDataDir+")")
	s.bindSecurity(fs)
	return b
}

// Binding completes Settings after flag parsing.
type Binding struct {
	s                       *Settings
	brokers, props, sources string
	indexMemory, indexTable string
	releaseIdle             string
}

// Finish completes the settings after flag parsing: splits lists, makes
// the data dir absolute. It returns an error for a malformed property.
func (b *Binding) Finish() error {
	s := b.s
	s.KafkaBrokers = splitList(b.brokers)
	s.finishSecurity()
	props, err := ParseProps("--catalog-props (env "+EnvCatalogProps+")", b.props)
	if err != nil {
		return err
	}
	s.Catalog.Props = props
	if s.Sources, err = ParseProps("--sources (env "+EnvSources+")", b.sources); err != nil {
		return err
	}
	if s.IndexMemory, err = ParseBytes(b.indexMemory); err != nil {
		return fmt.Errorf("config: --index-memory: %w", err)
	}
	if s.IndexTableMemory, err = ParseBytes(b.indexTable); err != nil {
		return fmt.Errorf("config: --index-table-memory: %w", err)
	}
	if s.ReleaseIdleState, err = time.ParseDuration(strings.TrimSpace(b.releaseIdle)); err != nil || s.ReleaseIdleState < 0 {
		return fmt.Errorf("config: --release-idle-state (env %s): %q is not a duration of 0 or more, such as 30m or 2h", EnvReleaseIdle, b.releaseIdle)
	}
	if s.DataDir != "" {
		abs, err := filepath.Abs(s.DataDir)
		if err != nil {
			return err
		}
		s.DataDir = abs
	}
	s.Catalog.LocalDir = s.DataDir
	return nil
}

// ParseProps reads the setting what ("--catalog-props (env
// CATALOG_PROPS)", named in errors) as "k=v,k=v": keys and values trimmed
// of spaces, a value running to the next comma (so it cannot hold one).
// Empty input gives an empty map. The values are often secrets (S3 keys,
// DSNs with passwords), so errors name the setting and the entry's number
// (from 1) or a key, never an entry's text: an entry without "=" (also
// the tail of a value a comma split, named by the key before it), an
// empty key, a key given twice.
func ParseProps(what, text string) (map[string]string, error) {
	out := map[string]string{}
	prev := ""
	for i, kv := range splitList(text) {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		switch {
		case !ok && prev != "":
			return nil, fmt.Errorf(`config: %s: entry %d, after %q, has no "=": a value cannot contain a comma (entries are not shown: they may hold secrets)`, what, i+1, prev)
		case !ok:
			return nil, fmt.Errorf(`config: %s: entry %d is not k=v: it has no "=" (entries are not shown: they may hold secrets)`, what, i+1)
		case k == "":
			return nil, fmt.Errorf(`config: %s: entry %d has no key before its "="`, what, i+1)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("config: %s: key %q is given twice (entry %d)", what, k, i+1)
		}
		out[k] = strings.TrimSpace(v)
		prev = k
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// envInt is env's value of key as an integer, def when unset or not one.
func envInt(key string, def int) int {
	if v, err := strconv.Atoi(env(key, "")); err == nil {
		return v
	}
	return def
}
