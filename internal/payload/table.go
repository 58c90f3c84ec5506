package payload

import (
	"time"
)

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
	// ErrTypeWorkerLeaving: the activity's worker is stopping and did not
	// start the activity's work (it was waiting for the table's lock held
	// by another activity there). Retryable and benign (the SDK logs it at
	// DEBUG); workflows from the hand-over-on-stop version on list it as
	// non-retryable and claim the table again at once, older runs let
	// Temporal retry it on the worker's queue, where it is handed over
	// after the schedule-to-start timeout.
	ErrTypeWorkerLeaving = "WorkerLeaving"
)

// RecoverResult is the table's committed position as read from its Iceberg
// tables (docs/design.md: a workflow started on existing tables recovers its
// offsets from the snapshot summaries and properties).
type RecoverResult struct {
	BatchSeq int64   `json:"batch_seq"` // last committed batch sequence number (0 = none)
	BatchID  string  `json:"batch_id"`
	Offsets  Offsets `json:"offsets"`           // next offset per partition; empty = start per StartFrom
	Source   string  `json:"source"`            // which table the checkpoint came from: "mirror", "history", "bronze", "start" (the recorded start from latest: lakecat.StartRecord) or "none"
	Pending  int     `json:"pending"`           // keys awaiting a late-key rebuild
	Loaded   bool    `json:"loaded"`            // the direct initial load (load id "initial") is complete
	Catalog  string  `json:"catalog,omitempty"` // the worker's catalog identity (TableSpec.Catalog), for the workflow to record
	// Watermark, FetchedPast and NewestTx are, when the checkpoint is the
	// mirror's (Source "mirror": its history, if any, not behind it), and
	// for FetchedPast and NewestTx the table is in a source group, the
	// mirror's applied position (lakecat.PropAppliedPosition, hex), its
	// per-partition fetched positions (lakecat.PropFetchedPast) and
	// newest transaction events (lakecat.PropNewestTx): what a table
	// started again reports to its group before its first batch. Empty
	// otherwise.
	Watermark   string           `json:"watermark,omitempty"`
	FetchedPast map[int32]string `json:"fetched_past,omitempty"`
	NewestTx    map[int32]TxAt   `json:"newest_tx,omitempty"`
}

// PlanRequest asks for the next batch's offset ranges.
type PlanRequest struct {
	Spec    TableSpec `json:"spec"`
	Offsets Offsets   `json:"offsets"` // next offset per partition known to the workflow
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
	Ranges         []Range `json:"ranges"`                  // non-empty ranges only
	Records        int64   `json:"records"`                 // sum of range lengths (offsets; records may be fewer under transactions)
	Offsets        Offsets `json:"offsets"`                 // next offsets for all partitions after the batch
	HighWatermarks Offsets `json:"high_watermarks"`         // per partition, when planned (for lag)
	LogStart       Offsets `json:"log_start"`               // per partition, when planned
	TopicMissing   bool    `json:"topic_missing,omitempty"` // the topic does not exist (yet): nothing to read
	Catalog        string  `json:"catalog,omitempty"`       // the planning worker's catalog identity (TableSpec.Catalog), for the workflow to record
	// Leaving: the planning worker began to stop while the plan waited
	// for records, and the plan returned early (with what had arrived);
	// the workflow claims the table again (activities/leave.go).
	Leaving bool `json:"leaving,omitempty"`
}

// StartsAt reports whether the plan begins at offsets, the workflow's
// position, and is whole: the same partitions in both, each range (at
// most one per partition) running from the partition's offset there to
// the plan's next offset, every other partition's next offset its offset
// there. A plan made from other offsets (ApplyResult.Next after a batch
// that committed other end offsets) must not be applied; the workflow
// plans anew. Deterministic: workflows call it.
func (p Plan) StartsAt(offsets Offsets) bool {
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
	Spec  TableSpec `json:"spec"`
	Batch Batch     `json:"batch"`
	// SchemaDecision is an operator's decision on the schema change that
	// blocked this batch: "evolve" or "skip" (DecisionEvolve,
	// DecisionSkip); "" on a first attempt.
	SchemaDecision string `json:"schema_decision,omitempty"`
	// Rerun: an earlier execution of this batch failed (the workflow runs
	// it again after a block or its retries), so the batch may be
	// committed already; ApplyBatch then looks for it before fetching.
	Rerun bool `json:"rerun,omitempty"`
	// Cut, when set, bounds the batch at a source group's consistent cut
	// (docs/design.md, "Batches cut at W"): on each partition the batch
	// applies only its records below the first whose source position is
	// above Cut.W (cut.CutOffset: o_p(W)) and ends there (the result's
	// EndOffsets); the rest is the next batch's. Being in the request, it
	// is in the workflow's history, so a retried attempt applies the same
	// prefix. A bounded batch prefetches no next batch (the result's Next
	// is nil). nil: the batch as planned, today's path.
	Cut *CutBound `json:"cut,omitempty"`
}

// CutBound is a consistent cut a batch is bounded at.
type CutBound struct {
	// Number is the group's cut number (GroupCut.Number, from 1).
	Number int64 `json:"number"`
	// W is the cut's source commit position, hex (cdc.Seq.Hex: the
	// tables' _seq layout, cut.CommitPosition).
	W string `json:"w"`
}

// ApplyResult is what one batch did, returned to the workflow and shown in
// the Web UI.
type ApplyResult struct {
	BatchID      string        `json:"batch_id"`
	BatchSeq     int64         `json:"batch_seq"`
	Records      int           `json:"records"`       // Kafka records fetched
	Changes      int           `json:"changes"`       // row-change events decoded (c, u, d, r)
	Tombstones   int           `json:"tombstones"`    // null-value records: counted and skipped
	TxMetadata   int           `json:"tx_metadata"`   // transaction metadata events: recognized, not rows
	Quarantined  int           `json:"quarantined"`   // records kept in the quarantine table instead of applied
	SnapshotRows int           `json:"snapshot_rows"` // changes that are source snapshot reads
	SnapshotLast bool          `json:"snapshot_last"` // the batch held the source snapshot's last record
	Bronze       BronzeResult  `json:"bronze"`
	Mirror       MirrorResult  `json:"mirror"`
	History      HistoryResult `json:"history"`
	EndOffsets   Offsets       `json:"end_offsets"` // next offsets after this batch, as committed
	KeyColumns   []string      `json:"key_columns,omitempty"`
	AddedColumns []string      `json:"added_columns,omitempty"` // columns added to the tables because they first appeared in this batch
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
	// previous batch was applied (activities/prefetch.go).
	Prefetched bool `json:"prefetched,omitempty"`
	// StageSeconds is the wall time of each stage of the apply, in
	// seconds: decode (0 when prefetched), prepare, stage (the mirror's and
	// history's decisions), write (the three tables' files, concurrently),
	// commit_bronze, commit_mirror, commit_history (the Iceberg commits;
	// the history's includes recording the batch in the local state log).
	StageSeconds map[string]float64 `json:"stage_seconds,omitempty"`
	// Release: the worker holds more than its share of the tables and gave
	// this one up after the batch (activities/claim.go); the workflow claims the
	// table again on the shared queue.
	Release bool `json:"release,omitempty"`
	// Leaving: the worker began to stop while it applied the batch (its
	// commits are done); the workflow claims the table again, before a
	// late-key rebuild (activities/leave.go).
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
	// Group is what the batch did toward its source group's consistent
	// cut (docs/design.md, "Consistent cuts across a source group"): set
	// only for a table with a group (TableSpec.Group) whose batch read
	// its records from Kafka; nil otherwise: for a direct load's batch
	// (its rows fetch no partition) and a batch found committed (a rerun
	// reads no records: later batches' positions cover it).
	Group *GroupProgress `json:"group,omitempty"`
}

// GroupProgress is one batch's progress report to the table's source
// group: the events of each source transaction the batch applied and the
// source position it fetched past on each partition. The group's
// cut.Tracker takes running totals (Applied) and positions
// (FetchedPast) from these.
type GroupProgress struct {
	// TxSeen is, per source transaction id, the batch's streamed change
	// events of that transaction by identity (c, u, d and truncates,
	// written to the tables as applied, stale or duplicate alike; not
	// source snapshot reads, which belong to no transaction of the
	// transaction topic, and not records the decoder sent to quarantine),
	// so that the group counts an event redelivered (the same change at
	// a new Kafka offset after a connector restart) once, across batches
	// (cut.Tracker.AppliedEvents). The id is the one the decoder reads
	// into cdc.Event.TxID and the history's _source_tx: PostgreSQL and
	// Oracle source.txId, MySQL source.gtid. For PostgreSQL that is the
	// txId that cut.TxKey takes from the END's and the events'
	// transaction.id "txId:LSN"; SQL Server events carry no txId (their
	// transactions complete by position alone). Events without an id
	// are left out; nil when none has one.
	TxSeen map[string]TxSeen `json:"tx_seen,omitempty"`
	// TxEvents is, per source transaction id, the number of the batch's
	// streamed change events of that transaction, in results recorded
	// before TxSeen (2026-12-06): a count, which a redelivery inflates.
	// Not written any more; read for those results.
	TxEvents map[string]int64 `json:"tx_events,omitempty"`
	// FetchedPast is, per partition the batch read records of, the
	// highest source position (cdc.Seq, hex: the tables' _seq) among its
	// change events there. A partition's records are in commit order
	// (Debezium writes each transaction whole, at its commit), so the
	// table has fetched every change of that partition of every
	// transaction committed at or below it. Partitions without a change
	// event in the batch are absent; nil when there is none.
	FetchedPast map[int32]string `json:"fetched_past,omitempty"`
	// NewestTx is, per partition, the place in its source transaction
	// (TxAt) of the batch's newest streamed change event there that has a
	// transaction id and a data_collection_order; partitions without one
	// are absent, nil when there is none. The table keeps the newest per
	// partition (TableState.NewestTx, and its mirror: lakecat.PropNewestTx):
	// a table whose topic has one partition has applied every event of
	// that transaction's data collection up to it.
	NewestTx map[int32]TxAt `json:"newest_tx,omitempty"`
	// Own: the batch held a change event (a snapshot read included)
	// whose source block names the table's own data collection
	// (cdc.Event.Collection equal to TableSpec.DataCollection). The group
	// takes the table's collection as confirmed by it: until then a
	// table the group matches by a name it has not seen may be misnamed
	// (docs/design.md, "Consistent cuts across a source group").
	Own bool `json:"own,omitempty"`
}

// TxAt is a change event's place in its source transaction (Debezium
// provide.transaction.metadata=true: the envelope's `transaction`
// block).
type TxAt struct {
	ID    string `json:"id"`    // the transaction id, as GroupProgress.TxSeen's
	Order int64  `json:"order"` // its data_collection_order: its place, from 1, among the transaction's events of its data collection
	Seq   string `json:"seq"`   // its source position (hex: the tables' _seq)
}

// MergeFetchedPast returns m (per partition a position every change at
// or below it has been fetched on: GroupProgress.FetchedPast, hex of one
// width; nil none) with add's, the higher per partition (text order is
// position order), and whether any of m's moved. m is changed in place
// when not nil.
func MergeFetchedPast(m, add map[int32]string) (map[int32]string, bool) {
	moved := false
	for p, h := range add {
		if h > m[p] {
			if m == nil {
				m = map[int32]string{}
			}
			m[p], moved = h, true
		}
	}
	return m, moved
}

// MergeNewestTx returns m (per partition the newest change event's place
// in its transaction kept so far; nil none) with add's (a batch's
// GroupProgress.NewestTx): each partition of add replaces m's unless
// m's is at a higher position (a batch re-applying older records). m is
// changed in place when not nil.
func MergeNewestTx(m, add map[int32]TxAt) map[int32]TxAt {
	for p, x := range add {
		if o, ok := m[p]; ok && o.Seq > x.Seq { // hex of one width: text order is position order
			continue
		}
		if m == nil {
			m = map[int32]TxAt{}
		}
		m[p] = x
	}
	return m
}

// TxSeen is one transaction's change events in a batch, by identity:
// Orders their `transaction.data_collection_order` values (Debezium
// provide.transaction.metadata=true: from 1, the event's place among its
// transaction's events of the table's data collection), as closed ranges
// [lo, hi] of consecutive values, sorted, disjoint, not adjacent
// (cut.Orders: one pair when the batch holds a run of the transaction's
// events); Seqs the source positions (cdc.Seq hex, the tables' _seq),
// sorted and distinct, of its events that carry no order (no transaction
// block); Last the highest position (hex) of its events in the batch, by
// which the group tells a redelivery of a transaction it has cut past
// (cut.Tracker.AppliedEvents).
type TxSeen struct {
	Orders [][2]int64 `json:"orders,omitempty"`
	Seqs   []string   `json:"seqs,omitempty"`
	Last   string     `json:"last,omitempty"`
}

// WovenKeys is how many late keys the batch rebuilt from all their
// changes in its own commits (internal/lake weave.go): the history's
// count, or the mirror's for a table without history; 0 in results
// recorded before late keys were woven.
func (r *ApplyResult) WovenKeys() int { return max(r.History.Woven, r.Mirror.Woven) }

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
	Mirror    TableRebuildResult `json:"mirror"`
	History   TableRebuildResult `json:"history"`
	// Unwoven: late keys of a table without bronze whose earlier changes
	// this worker's local state does not hold: their late change is in the
	// mirror but not woven into their history.
	Unwoven int `json:"unwoven,omitempty"`
}

// StateUsage is a table's local state on the worker holding it
// (docs/design.md, "Local state"), in bytes, as of the table's last
// batch: its key index in RAM and on local disk (an index past its budget
// spills to disk, keeping the batch's entries in RAM), its chain log on
// local disk, and the worker's budget for the indexes (0: unbounded).
type StateUsage struct {
	IndexKeys           int64 `json:"index_keys"`             // keys the index holds
	IndexSpilled        bool  `json:"index_spilled"`          // the index lives on local disk
	IndexRAMBytes       int64 `json:"index_ram_bytes"`        // the index's RAM: hash table and entries, and a spilled index's memtables
	IndexDiskBytes      int64 `json:"index_disk_bytes"`       // the spilled index's store on local disk
	LogBytes            int64 `json:"log_bytes"`              // the chain log on local disk
	WorkerIndexRAMBytes int64 `json:"worker_index_ram_bytes"` // RAM of every table's index on this worker
	WorkerBudgetBytes   int64 `json:"worker_budget_bytes"`    // RAM the worker's indexes may hold together (--index-memory)
	TableBudgetBytes    int64 `json:"table_budget_bytes"`     // RAM one table's index may hold (--index-table-memory)
	CacheBytes          int64 `json:"cache_bytes"`            // the spilled indexes' shared block cache, within the worker's budget
}
