package activities

import (
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/layout"
)

// TaskQueue is the Temporal task queue the worker serves.
const TaskQueue = "lakemirror"

// Error types of non-retryable activity failures (temporal.ApplicationError
// types), for RetryPolicy.NonRetryableErrorTypes and for operators reading
// the Web UI.
const (
	ErrTypeUndecodable  = "UndecodableRecord" // a Kafka record is not a Debezium change event we can read
	ErrTypeUnfit        = "ValueDoesNotFit"   // a value does not fit its column's type
	ErrTypeRetentionGap = "KafkaRetentionGap" // the next offset to read was deleted by retention
	ErrTypeLogReset     = "KafkaLogReset"     // the topic's log ends below the recorded offsets (deleted and re-created)
	ErrTypeBadSpec      = "InvalidTableSpec"  // the table configuration is unusable
	// ErrTypeSourceServerChanged: changes of another MySQL or MariaDB
	// server than the table's positions come from (lake.SourceServerChangedError)
	ErrTypeSourceServerChanged = "SourceServerChanged"
	ErrTypeSchemaBlocked       = "SchemaBlocked"   // the events' schema changed in a way that needs an operator's decision
	ErrTypeQuarantineLimit     = "QuarantineLimit" // more records of one batch could not be applied than the table allows
	// ErrTypePastTrimmed: a late-key rebuild needs changes bronze
	// retention dropped (lake.PastTrimmedError); the message says how to
	// go on (`starter maintain TABLE keep-applied`, then retry).
	ErrTypePastTrimmed = "BronzePastTrimmed"
	// ErrTypeBinlogRestarted: a MySQL or MariaDB change delivered after a
	// change of its key at a higher binlog position in the same Kafka
	// partition, and no redelivery: its binlog started over
	// (lake.BinlogRestartedError)
	ErrTypeBinlogRestarted = "BinlogRestarted"
	// ErrTypeCatalogMismatch: the table records another Iceberg catalog
	// than this worker's (TableSpec.Catalog). Retryable: another worker
	// of the task queue, on the table's catalog, may take the retry; the
	// error shows in status (phase retrying) until the worker is fixed.
	ErrTypeCatalogMismatch = "CatalogMismatch"
	// ErrTypeWaitCanceled: PlanBatch's wait for records was cut short by
	// its context: the workflow cancelled it (a signal; Temporal records
	// the activity as cancelled) or the worker is shutting down (the
	// activity is retried, on this worker after its restart or on
	// another). A benign error: the SDK logs it at DEBUG, not ERROR.
	ErrTypeWaitCanceled = "WaitCanceled"
)

// TableSpec is one source table's pipeline configuration. It is carried
// in the workflow input and memo.
type TableSpec struct {
	Table      string        `json:"table"`       // Iceberg namespace.table of the mirror
	Topic      string        `json:"topic"`       // Kafka topic with the table's Debezium change events
	KeyColumns []string      `json:"key_columns"` // primary-key columns; empty = taken from the Kafka record key
	StartFrom  string        `json:"start_from"`  // where a new pipeline starts reading: "earliest" (default) or "latest"
	MaxEvents  int           `json:"max_events"`  // batch bound in records (default 5000)
	MaxWait    time.Duration `json:"max_wait"`    // batch bound in time: how long to wait for MaxEvents (default 2s)
	// HistoryColumns are the columns whose change opens a new history
	// version; empty = all. Changes to other columns update the current
	// version in place.
	HistoryColumns []string `json:"history_columns,omitempty"`
	// HistoryCollapseTx folds the changes of one source transaction into
	// one history version.
	HistoryCollapseTx bool `json:"history_collapse_tx,omitempty"`
	// Source names the source database the table can be loaded from
	// directly (a name the worker maps to a DSN with -sources), and
	// SourceTable the table there as schema.table; empty = Debezium only.
	Source      string `json:"source,omitempty"`
	SourceTable string `json:"source_table,omitempty"`
	// SignalTopic is the Debezium connector's signal topic
	// (signal.kafka.topic) for re-snapshots through the connector.
	SignalTopic string `json:"signal_topic,omitempty"`
	// Columns declares the table's column types for events without a
	// schema envelope (a table definition, schemas.LoadTableDefinition),
	// so decimals and times are not guessed; nil = from the events.
	Columns []cdc.Column `json:"columns,omitempty"`
	// LoadChunk is the rows per chunk of a direct load (default 10,000).
	LoadChunk int `json:"load_chunk,omitempty"`
	// MaxBatchEvents is how large a batch may grow while the table is
	// behind (records): with more than two batches of MaxEvents waiting, a
	// batch takes half of what is waiting, up to MaxBatchEvents, so the
	// fixed cost of a batch (three Iceberg commits, the Temporal round
	// trips) is spread over more records until the lag is down; caught up,
	// batches are MaxEvents again. 0 (or below MaxEvents) = MaxEvents: no
	// growth.
	MaxBatchEvents int `json:"max_batch_events,omitempty"`
	// MaxQuarantine is how many records of one batch may go to the
	// quarantine table before the table blocks instead (default 100).
	MaxQuarantine int `json:"max_quarantine,omitempty"`
	// WithoutBronze: the table keeps no bronze table (no append-only copy
	// of every Kafka record). What that gives up is in the docs/operating.md ("Which
	// tables"): no audit copy to replay or inspect; after a worker lost its
	// local state, late changes of keys applied before are not woven into
	// their history (counted as unwoven); a re-snapshot cannot tell ghost
	// rows. Zero value = bronze kept, so specs recorded before the option
	// existed keep their tables.
	WithoutBronze bool `json:"without_bronze,omitempty"`
	// WithoutHistory: the table keeps no SCD type 2 history table (a
	// mirror-only table, or bronze + mirror). Late changes then need no
	// rebuild: the mirror's position guard alone keeps it right.
	WithoutHistory bool `json:"without_history,omitempty"`
	// Catalog is the identity of the Iceberg catalog the table lives in
	// (lake.CatalogConfig.Identity: type, URI and warehouse without
	// credentials, or the operator's --catalog-id), recorded by the
	// workflow from the first worker that recovers or plans it; every
	// activity of a worker with another catalog refuses the table
	// (ErrTypeCatalogMismatch). "" = not recorded yet (any worker).
	Catalog string `json:"catalog,omitempty"`
	// Layout is the partition fields and sort order of the mirror, history
	// and bronze tables (internal/layout; docs/configuration.md). Zero:
	// unpartitioned, unsorted mirror and history, bronze by ingestion day.
	// A change applies to the files written after it (partition
	// evolution); compaction rewrites the older ones.
	Layout layout.Tables `json:"layout,omitzero"`
	// DeleteFormat is how the mirror and history remove replaced rows
	// (internal/layout.DeleteFormat; docs/readers.md): "" or "position"
	// for Iceberg v2 position deletes, "dv" for Iceberg v3 deletion
	// vectors (the mirror and history are then created with
	// format-version 3). Fixed when the tables are created: a worker
	// finding a table of the other format stops the table
	// (ErrTypeBadSpec, lake.DeleteFormatError), and a settings update
	// cannot change it.
	DeleteFormat layout.DeleteFormat `json:"delete_format,omitempty"`
}

// batchBudget is the number of records the next batch may take when
// avail records are waiting beyond the table's position: MaxEvents, or
// while more than two such batches wait, half of what waits, up to
// MaxBatchEvents.
func (s TableSpec) batchBudget(avail int64) int64 {
	budget := int64(s.MaxEvents)
	if int64(s.MaxBatchEvents) > budget && avail > 2*budget {
		budget = min(int64(s.MaxBatchEvents), avail/2)
	}
	return budget
}

// Tables lists the tables the spec keeps, in commit order: some of
// "bronze", "mirror", "history" (the mirror always).
func (s TableSpec) Tables() []string {
	var out []string
	if !s.WithoutBronze {
		out = append(out, "bronze")
	}
	out = append(out, "mirror")
	if !s.WithoutHistory {
		out = append(out, "history")
	}
	return out
}

// Defaults fills zero fields with their defaults.
func (s TableSpec) Defaults() TableSpec {
	if s.StartFrom == "" {
		s.StartFrom = "earliest"
	}
	if s.MaxEvents <= 0 {
		s.MaxEvents = 5000
	}
	if s.MaxWait <= 0 {
		s.MaxWait = 2 * time.Second
	}
	if s.MaxQuarantine <= 0 {
		s.MaxQuarantine = 100
	}
	return s
}

// RecoverResult is the table's committed position as read from its Iceberg
// tables (docs/design.md: a workflow started on existing tables recovers its
// offsets from the snapshot summaries and properties).
type RecoverResult struct {
	BatchSeq int64        `json:"batch_seq"` // last committed batch sequence number (0 = none)
	BatchID  string       `json:"batch_id"`
	Offsets  lake.Offsets `json:"offsets"`           // next offset per partition; empty = start per StartFrom
	Source   string       `json:"source"`            // which table the checkpoint came from: "mirror", "history", "bronze", "start" (the recorded start from latest: lake.StartRecord) or "none"
	Pending  int          `json:"pending"`           // keys awaiting a late-key rebuild
	Loaded   bool         `json:"loaded"`            // the direct initial load (load id "initial") is complete
	Catalog  string       `json:"catalog,omitempty"` // the worker's catalog identity (TableSpec.Catalog), for the workflow to record
}

// PlanRequest asks for the next batch's offset ranges.
type PlanRequest struct {
	Spec    TableSpec    `json:"spec"`
	Offsets lake.Offsets `json:"offsets"` // next offset per partition known to the workflow
	// IdleWait: when nothing at all is waiting at MaxWait, keep waiting
	// (heartbeating) up to this long for a first record before returning an
	// empty plan, so an idle table costs an activity per IdleWait instead
	// of one per MaxWait. 0 = return at MaxWait (requests recorded before
	// the field existed).
	IdleWait time.Duration `json:"idle_wait,omitempty"`
	// TopicWasMissing: the workflow's last plan found no topic. With
	// StartFrom "latest" its partitions then start at their log start
	// (StartOffsets): every record of a topic created after the table
	// started was produced after it.
	TopicWasMissing bool `json:"topic_was_missing,omitempty"`
}

// Plan is the next batch's exact offset ranges, chosen by PlanBatch and
// recorded in workflow history before the batch is applied.
type Plan struct {
	Ranges         []lake.Range `json:"ranges"`                  // non-empty ranges only
	Records        int64        `json:"records"`                 // sum of range lengths (offsets; records may be fewer under transactions)
	Offsets        lake.Offsets `json:"offsets"`                 // next offsets for all partitions after the batch
	HighWatermarks lake.Offsets `json:"high_watermarks"`         // per partition, when planned (for lag)
	LogStart       lake.Offsets `json:"log_start"`               // per partition, when planned
	TopicMissing   bool         `json:"topic_missing,omitempty"` // the topic does not exist (yet): nothing to read
	Catalog        string       `json:"catalog,omitempty"`       // the planning worker's catalog identity (TableSpec.Catalog), for the workflow to record
	// Leaving: the planning worker began to stop while the plan waited
	// for records, and the plan returned early (with what had arrived);
	// the workflow claims the table again (leave.go).
	Leaving bool `json:"leaving,omitempty"`
}

// StartsAt reports whether the plan begins at offsets, the workflow's
// position, and is whole: the same partitions in both, each range (at
// most one per partition) running from the partition's offset there to
// the plan's next offset, every other partition's next offset its offset
// there. A plan made from other offsets (ApplyResult.Next after a batch
// that committed other end offsets) must not be applied; the workflow
// plans anew. Deterministic: workflows call it.
func (p Plan) StartsAt(offsets lake.Offsets) bool {
	if len(p.Offsets) != len(offsets) {
		return false
	}
	ranged := map[int32]bool{}
	for _, r := range p.Ranges {
		from, ok := offsets[r.Partition]
		if !ok || ranged[r.Partition] || r.From != from || r.To < r.From || r.To != p.Offsets[r.Partition] {
			return false
		}
		ranged[r.Partition] = true
	}
	// the result does not depend on the order of the iteration
	//workflowcheck:ignore
	for part, next := range p.Offsets {
		from, ok := offsets[part]
		if !ok || (!ranged[part] && next != from) {
			return false
		}
	}
	return true
}

// ApplyRequest is one batch to apply.
type ApplyRequest struct {
	Spec  TableSpec  `json:"spec"`
	Batch lake.Batch `json:"batch"`
	// SchemaDecision is an operator's decision on the schema change that
	// blocked this batch: "evolve" or "skip" (lake.DecisionEvolve,
	// lake.DecisionSkip); "" on a first attempt.
	SchemaDecision string `json:"schema_decision,omitempty"`
	// Rerun: an earlier execution of this batch failed (the workflow runs
	// it again after a block or its retries), so the batch may be
	// committed already; ApplyBatch then looks for it before fetching.
	Rerun bool `json:"rerun,omitempty"`
}

// RebuildRequest asks for the late-key rebuild of a table: the keys its
// history table lists as pending.
type RebuildRequest struct {
	Spec     TableSpec `json:"spec"`
	AfterSeq int64     `json:"after_seq"` // the batch that left the keys pending (for the Web UI)
}

// RebuildResult is what a late-key rebuild did.
type RebuildResult struct {
	Keys      int                `json:"keys"`       // keys rebuilt
	KeySample []string           `json:"key_sample"` // up to 20 of them, as key column values
	Events    int                `json:"events"`     // bronze records read for them
	Mirror    lake.RebuildResult `json:"mirror"`
	History   lake.RebuildResult `json:"history"`
	// Unwoven: late keys of a table without bronze whose earlier changes
	// this worker's local state does not hold: their late change is in the
	// mirror but not woven into their history.
	Unwoven int `json:"unwoven,omitempty"`
}

// ApplyResult is what one batch did, returned to the workflow and shown in
// the Web UI.
type ApplyResult struct {
	BatchID      string             `json:"batch_id"`
	BatchSeq     int64              `json:"batch_seq"`
	Records      int                `json:"records"`       // Kafka records fetched
	Changes      int                `json:"changes"`       // row-change events decoded (c, u, d, r)
	Tombstones   int                `json:"tombstones"`    // null-value records: counted and skipped
	TxMetadata   int                `json:"tx_metadata"`   // transaction metadata events: recognized, not rows
	Quarantined  int                `json:"quarantined"`   // records kept in the quarantine table instead of applied
	SnapshotRows int                `json:"snapshot_rows"` // changes that are source snapshot reads
	SnapshotLast bool               `json:"snapshot_last"` // the batch held the source snapshot's last record
	Bronze       lake.BronzeResult  `json:"bronze"`
	Mirror       lake.MirrorResult  `json:"mirror"`
	History      lake.HistoryResult `json:"history"`
	EndOffsets   lake.Offsets       `json:"end_offsets"` // next offsets after this batch, as committed
	KeyColumns   []string           `json:"key_columns,omitempty"`
	AddedColumns []string           `json:"added_columns,omitempty"` // columns added to the tables because they first appeared in this batch
	// CarriedDeleteValues: values of deletes' before images that did not
	// fit their column (e.g. 3.14 in a column inferred as long): the
	// deletes applied, those columns keeping the key's last known value.
	// Their raw records are in bronze.
	CarriedDeleteValues int `json:"carried_delete_values,omitempty"`
	// SourceTsFromKafka counts the changes whose _source_ts is their Kafka
	// record timestamp: the source gave no commit time (source.ts_ms and
	// ts_us 0 or missing, and no envelope ts_ms; docs/design.md, "Source
	// commit time").
	SourceTsFromKafka int `json:"source_ts_from_kafka,omitempty"`

	// Prefetched: the records were fetched and decoded ahead, while the
	// previous batch was applied (prefetch.go).
	Prefetched bool `json:"prefetched,omitempty"`
	// StageSeconds is the wall time of each stage of the apply, in
	// seconds: decode (0 when prefetched), prepare, stage (the mirror's and
	// history's decisions), write (the three tables' files, concurrently),
	// commit_bronze, commit_mirror, commit_history (the Iceberg commits;
	// the history's includes recording the batch in the local state log).
	StageSeconds map[string]float64 `json:"stage_seconds,omitempty"`
	// Release: the worker holds more than its share of the tables and gave
	// this one up after the batch (claim.go); the workflow claims the
	// table again on the shared queue.
	Release bool `json:"release,omitempty"`
	// Leaving: the worker began to stop while it applied the batch (its
	// commits are done); the workflow claims the table again, before a
	// late-key rebuild (leave.go).
	Leaving bool `json:"leaving,omitempty"`
	// State is the table's local state on the worker after the batch:
	// its key index in RAM and on local disk, its chain log, and the
	// worker's index budget (nil: the worker had no state for it).
	State *StateUsage `json:"state,omitempty"`
	// Next is the plan of the batch after this one, from this batch's end
	// offsets, when a full batch (MaxEvents records) was already waiting
	// as this one began (the plan its prefetch fetched): the workflow
	// applies it without a PlanBatch round trip (plan-in-apply version
	// marker). nil: none waiting, a load or backfill batch, or a worker
	// without Kafka; the workflow plans with PlanBatch.
	Next *Plan `json:"next,omitempty"`
}

// WovenKeys is how many late keys the batch rebuilt from all their
// changes in its own commits (internal/lake weave.go): the history's
// count, or the mirror's for a table without history; 0 in results
// recorded before late keys were woven.
func (r *ApplyResult) WovenKeys() int { return max(r.History.Woven, r.Mirror.Woven) }
