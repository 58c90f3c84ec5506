package payload

import (
	"time"

	"github.com/lakemirror/lakemirror/internal/validate"
)

// ErrTypeClaimRefused: the worker holds its share of the tables; the
// claim is retried on the shared queue, where another worker may take it.
const ErrTypeClaimRefused = "ClaimRefused"

// ClaimAttempts is how many attempts a claim makes (each may land on
// another worker) before the workflow claims with Force, which the worker
// that gets it takes whatever it holds, so that a claim always ends (a
// stale count, every worker at its share).
const ClaimAttempts = 12

// ClaimRequest asks a worker to hold a table's state and run its
// activities.
type ClaimRequest struct {
	Table string `json:"table"`           // mirror ns.table
	Prev  string `json:"prev,omitempty"`  // the task queue of the previous holder ("": none), released or unreachable
	Force bool   `json:"force,omitempty"` // take the table whatever the worker holds (after ClaimAttempts refusals)
	// Gone says Prev took no activity in time (a hand-over, not a
	// release): its worker is known dead, and the worker taking the claim
	// stops counting it among the live workers (activities.Activities.Gone) until it
	// polls again.
	Gone bool `json:"gone,omitempty"`
}

// ClaimResult is the worker that took a claim.
type ClaimResult struct {
	// Queue is the worker's own task queue, where the table's activities
	// go from now on; "" when the worker has none (routing off): the
	// activities stay on the shared queue.
	Queue string `json:"queue"`
	// Tables is how many tables the worker holds with this one.
	Tables int `json:"tables"`
}

// InitialLoadID is the load id of a table's first direct load.
const InitialLoadID = "initial"

// LoadRequest asks for a direct load of the table from its source
// database (TableSpec.Source).
type LoadRequest struct {
	Spec       TableSpec `json:"spec"`
	LoadID     string    `json:"load_id"`    // unique per load; a retried activity resumes the load with this id
	Resnapshot bool      `json:"resnapshot"` // a re-snapshot of a streamed table: rows at (P, 0), ghost rows soft-deleted
	Chunk      int       `json:"chunk"`      // rows per chunk; 0 = Spec.LoadChunkRows()
	Position   Offsets   `json:"position"`   // the table's Kafka offsets, left as they are
}

// LoadResult is what a direct load did.
type LoadResult struct {
	LoadID  string `json:"load_id"`
	LSN     uint64 `json:"lsn"`     // WAL position of the (first) snapshot
	Rows    int64  `json:"rows"`    // rows read and applied
	Chunks  int    `json:"chunks"`  // chunks committed by this attempt
	Resumed bool   `json:"resumed"` // the load continued after a previous attempt's last chunk
	Ghosts  int    `json:"ghosts"`  // re-snapshot: live mirror rows absent from the source, soft-deleted
	Rebuilt int    `json:"rebuilt"` // keys rebuilt from bronze along the way
	// GhostsUnchecked: a re-snapshot of a table without bronze, which
	// cannot tell which live rows the source no longer has (no ghost rows
	// were deleted).
	GhostsUnchecked bool `json:"ghosts_unchecked,omitempty"`
}

// SignalResult is the execute-snapshot signal sent to the connector.
type SignalResult struct {
	Topic string `json:"topic"`
	ID    string `json:"id"`
	Value string `json:"value"`
}

// BackfillRequest asks ResolveBackfill for the ranges to re-apply.
type BackfillRequest struct {
	Spec     TableSpec `json:"spec"`
	Ranges   []Range   `json:"ranges,omitempty"` // explicit ranges, or
	From     time.Time `json:"from,omitempty"`   // everything from this time on (Kafka offset-for-time lookup)
	Position Offsets   `json:"position"`         // the table's next offsets: a backfill never reaches past them
}

// Maintenance jobs.
const (
	JobPurge   = "purge"   // physically remove soft-deleted mirror rows older than the retention window
	JobCompact = "compact" // rewrite data files with their position deletes applied
	JobExpire  = "expire"  // drop bronze past its retention, expire old Iceberg snapshots, delete orphan files
	// JobKeepApplied takes the late keys a rebuild stopped on
	// (ErrTypePastTrimmed: their past is older than bronze's retention)
	// out of the pending-rebuild set, keeping their rows as applied
	// (lake.TableWriter.KeepApplied); run on demand only.
	JobKeepApplied = "keep-applied"
)

// MaintenanceRequest asks for one maintenance job on a table.
type MaintenanceRequest struct {
	Spec           TableSpec     `json:"spec"`
	Job            string        `json:"job"`
	Retention      time.Duration `json:"retention,omitempty"`        // purge: default 30 days
	RetentionFloor time.Duration `json:"retention_floor,omitempty"`  // purge: shortest window accepted; default 7 days
	TargetFileSize int64         `json:"target_file_size,omitempty"` // compact: bytes, default 128 MiB
	RetainLast     int           `json:"retain_last,omitempty"`      // expire: snapshots kept at least, default 10
	OlderThan      time.Duration `json:"older_than,omitempty"`       // expire: snapshots younger are kept, default 5 days
	CleanOrphans   bool          `json:"clean_orphans,omitempty"`    // expire: also delete orphan files older than 3 days
	DryRun         bool          `json:"dry_run,omitempty"`          // purge: count what it would remove, write nothing
	// BronzeRetention, expire: first drop the bronze and quarantine data
	// files whose records were all ingested more than this long ago
	// (whole day partitions, maintain.TrimBronze; docs/design.md "Bronze
	// retention"); 0 keeps them for ever (the default). At least a day
	// (internal/retention.Check).
	BronzeRetention time.Duration `json:"bronze_retention,omitempty"`
}

// MaintenanceResult is what a job did, per table kind.
type MaintenanceResult struct {
	Job     string                   `json:"job"`
	Purge   *PurgeResult             `json:"purge,omitempty"`
	Compact map[string]CompactResult `json:"compact,omitempty"`
	Expire  map[string]ExpireResult  `json:"expire,omitempty"`
	// Trim is what bronze retention dropped, per table ("bronze",
	// "quarantine"), when the expire job had a BronzeRetention.
	Trim map[string]TrimResult `json:"trim,omitempty"`
	// KeptApplied: the keys keep-applied took out of the pending set
	// (hex), at most 20 listed; KeptAppliedKeys counts them all.
	KeptApplied     []string `json:"kept_applied,omitempty"`
	KeptAppliedKeys int      `json:"kept_applied_keys,omitempty"`
}

// ErrTypeErasureRefused: an erasure was refused before it changed
// anything (a branch or tag keeps a snapshot reaching a file that holds
// a key; a table with gc.enabled=false). Not retryable.
const ErrTypeErasureRefused = "ErasureRefused"

// EraseRequest asks for the erasure of keys from a table's Iceberg tables
// (docs/design.md, "Erasure"). It carries the keys' salted hashes
// (erasure.HashEraseKeys, computed by the starter against the table's
// erasures table), never their values, so Temporal's history holds none.
type EraseRequest struct {
	Spec        TableSpec   `json:"spec"`
	ID          string      `json:"id"` // the erasure's id: the EraseWorkflow's workflow id
	Keys        ErasureKeys `json:"keys"`
	RequestedBy string      `json:"requested_by"`
	RequestedAt time.Time   `json:"requested_at"`
	Force       bool        `json:"force,omitempty"` // go on where a branch or tag keeps the keys (their files stay; a warning says so)
}

// ValidationRequest asks for one validation run of a table; RunID names
// the run in the validation table (the workflow id).
type ValidationRequest struct {
	Spec  TableSpec `json:"spec"`
	RunID string    `json:"run_id"`
}

// ValidationResult is one validation run: each check's result (in the
// order partitioning, transitions, continuity, watermark, replay,
// reapply; all but watermark need bronze and are listed in Skipped
// without it, with the reason in SkipReasons; reapply is also skipped
// when the mirror's newest commits hold no run of batches), how many failed, the
// table's source watermark (the applied position, hex `_seq`, "" when
// nothing was applied) and event-time watermark (the newest source commit
// time up to which every partition the table reads is applied,
// validate.EventTimeWatermark; without bronze the newest among the
// mirror's rows; UTC, zero when none), and the validation
// table's snapshot holding the run's rows. The worker's metrics get
// lakemirror_validation_failed per check and the run's time.
type ValidationResult struct {
	Table              string            `json:"table"`
	RunID              string            `json:"run_id"`
	CheckedAt          time.Time         `json:"checked_at"`
	Checks             []validate.Result `json:"checks"`
	Failed             int               `json:"failed"`
	Skipped            []string          `json:"skipped,omitempty"`
	SkipReasons        map[string]string `json:"skip_reasons,omitempty"` // why each skipped check was skipped
	SourceWatermark    string            `json:"source_watermark,omitempty"`
	EventTimeWatermark time.Time         `json:"event_time_watermark,omitzero"`
	Snapshot           int64             `json:"snapshot"`
}

// ReconcileRequest asks for one reconciliation of a table's mirror
// against its source database (docs/validation.md, "Reconciliation"). Zero values
// take the defaults named.
type ReconcileRequest struct {
	Spec  TableSpec `json:"spec"`
	RunID string    `json:"run_id"`
	// Source names the source database: a name the worker maps to a DSN
	// (-sources name=dsn; default Spec.Source), or a DSN (PostgreSQL
	// URL or key=value string; mysql:// URL or go-sql-driver DSN), which
	// is then recorded in the workflow's history.
	Source string `json:"source,omitempty"`
	// SourceTable is schema.table (PostgreSQL) or database.table (MySQL,
	// MariaDB); default Spec.SourceTable.
	SourceTable string `json:"source_table,omitempty"`
	// Chunk is the rows per key range read from the source, each range in
	// its own REPEATABLE READ READ ONLY transaction (default 1,000, at
	// most 10,000).
	Chunk int `json:"chunk,omitempty"`
	// Pause is the pause between two chunk reads (default 100 ms; a
	// negative value: none).
	Pause time.Duration `json:"pause,omitempty"`
	// SettleFloor and SettleCeiling bound the settling period, the p99
	// of bronze's recent source-commit-to-apply delays (defaults 30 s and
	// 1 h; a negative floor: 0).
	SettleFloor   time.Duration `json:"settle_floor,omitempty"`
	SettleCeiling time.Duration `json:"settle_ceiling,omitempty"`
	// CatchUpTimeout is how long to wait for the mirror to pass a read
	// position before failing the attempt (default 1 h; it is retried).
	CatchUpTimeout time.Duration `json:"catch_up_timeout,omitempty"`
	// Repair re-reads every confirmed difference's key from the source
	// and writes it through the guarded merge at the read's position;
	// ghost rows are soft-deleted there.
	Repair bool `json:"repair,omitempty"`
}

// ReconcileResult is one reconciliation run: the checks' results
// (reconcile-ghost, reconcile-missing, reconcile-changed, then op-balance
// when the table keeps bronze; the last is listed in Skipped without it),
// how many failed, the confirmed differences (at most 1,000), the
// settling period used and the p99 it came from, the run's scope and,
// with Repair, the keys repaired by kind and the repair's position.
type ReconcileResult struct {
	Table       string                  `json:"table"`
	RunID       string                  `json:"run_id"`
	CheckedAt   time.Time               `json:"checked_at"`
	Checks      []validate.Result       `json:"checks"`
	Failed      int                     `json:"failed"`
	Skipped     []string                `json:"skipped,omitempty"`
	Diffs       []validate.Diff         `json:"diffs,omitempty"`
	Scope       validate.ReconcileScope `json:"scope"`
	Settling    time.Duration           `json:"settling"`
	MeasuredP99 time.Duration           `json:"measured_p99"`
	Repaired    map[string]int          `json:"repaired,omitempty"`
	RepairedAt  string                  `json:"repaired_at,omitempty"`
	Snapshot    int64                   `json:"snapshot"`
}
