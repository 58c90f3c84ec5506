package payload

import (
	"time"
)

// BronzeResult counts what one batch did to the bronze table (records),
// as internal/lake's bronze writer returns it and records it under
// lakecat.PropBatchResult.
type BronzeResult struct {
	BatchID    string `json:"batch_id"`
	BatchSeq   int64  `json:"batch_seq"`
	Records    int    `json:"records"`  // records in the batch
	Appended   int    `json:"appended"` // records written
	Skipped    int    `json:"skipped"`  // records already present (same topic, partition, offset)
	SnapshotID int64  `json:"snapshot_id,omitempty"`
}

// MirrorResult counts what one batch did to the mirror table. Counts are
// in events unless named rows or files. Written by internal/lake's
// mirror writer, recorded under lakecat.PropBatchResult.
type MirrorResult struct {
	BatchID          string         `json:"batch_id"`
	BatchSeq         int64          `json:"batch_seq"`
	AlreadyCommitted bool           `json:"already_committed,omitempty"` // the batch was found committed; counts are the recorded ones
	Events           int            `json:"events"`                      // row-change events in the batch (c, u, d, r)
	Keys             int            `json:"keys"`                        // distinct primary keys among them
	Applied          int            `json:"applied"`                     // events that passed the sequence guard
	AppliedOps       map[string]int `json:"applied_ops,omitempty"`       // Applied by Debezium op (c, u, d, r)
	Collapsed        int            `json:"collapsed"`                   // applied events superseded by a later change of the same key in the batch
	Stale            int            `json:"stale"`                       // events older than the stored row (late or replayed): no-ops
	Duplicates       int            `json:"duplicates"`                  // events whose position was already applied or seen in the batch: no-ops
	Inserted         int            `json:"inserted"`                    // rows written for keys new to the mirror
	Updated          int            `json:"updated"`                     // rows written that replace a stored row and are live
	Deleted          int            `json:"deleted"`                     // rows written as soft deletes
	RowsWritten      int            `json:"rows_written"`
	PositionDeletes  int            `json:"position_deletes"` // stored rows removed by position deletes
	SnapshotID       int64          `json:"snapshot_id,omitempty"`
	Watermark        string         `json:"watermark,omitempty"`     // highest _seq applied in the batch (hex)
	MaxSourceTs      int64          `json:"max_source_ts,omitempty"` // newest applied source commit time, µs since the epoch
	// Pending: keys awaiting a rebuild after this batch, kept on the mirror
	// of a table without history (internal/lake mirror_pending.go); 0 with a history.
	Pending int `json:"pending,omitempty"`
	// Woven: late keys whose rows were refolded from all their changes in
	// this batch (internal/lake weave.go); their refolded rows are among the rows written
	// when they differed from the stored ones.
	Woven int `json:"woven,omitempty"`
	// UnknownPlaceholders: values written as NULL because they were
	// unavailable-value placeholders (TOAST, Oracle LOBs) of a key with no
	// stored row and no earlier image in the batch: the source never sent
	// the value (a stream started without a source snapshot).
	UnknownPlaceholders int `json:"unknown_placeholders,omitempty"`
	// KeysMovedOntoLive: primary-key changes whose new key held a live
	// row (merge.MovedOntoLive): a key swap or shift in one statement of
	// a deferrable primary key, which Debezium's stream cannot place: a
	// key may end deleted or with another row's TOAST value.
	KeysMovedOntoLive int `json:"keys_moved_onto_live,omitempty"`
}

// HistoryResult counts what one batch did to the history table (keys,
// versions and rows as named), written by internal/lake's history writer.
type HistoryResult struct {
	BatchID          string `json:"batch_id"`
	BatchSeq         int64  `json:"batch_seq"`
	AlreadyCommitted bool   `json:"already_committed,omitempty"`
	Keys             int    `json:"keys"`              // keys with changes in the batch
	Opened           int    `json:"opened"`            // versions opened
	Rewritten        int    `json:"rewritten"`         // stored versions closed or updated in place
	Duplicates       int    `json:"duplicates"`        // re-delivered changes the history already holds
	Late             int    `json:"late"`              // keys with a late change (woven inline, or left for the rebuild step)
	Woven            int    `json:"woven,omitempty"`   // late keys whose history was replayed from all their changes in this batch
	Pending          int    `json:"pending"`           // keys awaiting a rebuild after this batch
	Unwoven          int    `json:"unwoven,omitempty"` // late keys whose past changes are gone (no bronze, a state built after them): extended by the batch's later changes, the late ones left out
	RowsWritten      int    `json:"rows_written"`      // history rows written
	PositionDeletes  int    `json:"position_deletes"`  // stored rows removed
	SnapshotID       int64  `json:"snapshot_id,omitempty"`
}

// TableRebuildResult counts what a late-key rebuild did to one table
// (lake.RebuildResult; the Mirror and History of RebuildResult).
type TableRebuildResult struct {
	Keys            int   `json:"keys"`      // keys examined
	Changed         int   `json:"changed"`   // keys whose stored rows were replaced
	Unchanged       int   `json:"unchanged"` // keys whose stored rows were already right (e.g. a replayed no-op)
	RowsWritten     int   `json:"rows_written"`
	PositionDeletes int   `json:"position_deletes"`
	SnapshotID      int64 `json:"snapshot_id,omitempty"`
}

// PurgeResult counts what a tombstone purge did, or for a dry run
// (lake.MirrorWriter.PurgeDryRun) what it would do.
type PurgeResult struct {
	Deleted    int    `json:"deleted"`               // soft-deleted rows examined
	Purged     int    `json:"purged"`                // rows physically removed (dry run: that would be removed)
	Horizon    string `json:"horizon"`               // purge horizon after the run (hex _seq; dry run: it would have)
	Cutoff     string `json:"cutoff"`                // deletes older than this were purged (RFC 3339)
	SnapshotID int64  `json:"snapshot_id,omitempty"` // the mirror snapshot the purge committed; 0 when it committed nothing
	DryRun     bool   `json:"dry_run,omitempty"`     // nothing was written
}

// CompactResult counts what a compaction of one table did (lake.Compact);
// sizes in bytes.
type CompactResult struct {
	FilesBefore        int   `json:"files_before"`         // live data files before
	DeleteFilesBefore  int   `json:"delete_files_before"`  // live position-delete files and deletion vectors before
	Rewritten          int   `json:"rewritten"`            // data files rewritten
	Added              int   `json:"added"`                // data files written
	RemovedDeleteFiles int   `json:"removed_delete_files"` // position-delete files dropped because every file they referenced was rewritten, and deletion vectors of rewritten files
	BytesBefore        int64 `json:"bytes_before"`
	BytesAfter         int64 `json:"bytes_after"`
	SnapshotID         int64 `json:"snapshot_id,omitempty"`
}

// ExpireResult counts what snapshot expiry and orphan cleanup of one table
// did; OrphanBytes in bytes.
type ExpireResult struct {
	SnapshotsBefore int   `json:"snapshots_before"`
	SnapshotsAfter  int   `json:"snapshots_after"`
	OrphansDeleted  int   `json:"orphans_deleted"`
	OrphanBytes     int64 `json:"orphan_bytes"`
}

// TrimResult is what one bronze retention run did to one table (bronze
// or the quarantine): files and rows dropped whole, files and rows kept,
// and the files kept because neither a time partition nor a bound on
// `_ingested_at` tells when their records came.
type TrimResult struct {
	Retention    time.Duration `json:"retention"`
	Cutoff       string        `json:"cutoff"` // RFC 3339: records ingested before it are past the retention
	At           string        `json:"at"`     // RFC 3339: when the run decided
	FilesDropped int           `json:"files_dropped"`
	RowsDropped  int64         `json:"rows_dropped"`
	FilesKept    int           `json:"files_kept"`
	RowsKept     int64         `json:"rows_kept"`
	FilesUnknown int           `json:"files_unknown,omitempty"` // kept: no time partition or bound on _ingested_at
	DeleteFiles  int           `json:"delete_files_dropped,omitempty"`
	SnapshotID   int64         `json:"snapshot_id,omitempty"`
}

// ErasureKeys is what an erasure request carries instead of the keys
// themselves (erasure.HashEraseKeys): the values never reach Temporal. No
// JSON tags: its JSON keys are the field names.
type ErasureKeys struct {
	Hashes     []string // hex HMAC-SHA256 of each encoded key under the table's salt, in the order given
	KeyColumns []string // the mirror's key columns
	SaltID     string   // the salt's fingerprint (the first 16 hex digits of its SHA-256)
}

// EraseResult is what an erasure did (erasure.Erase), recorded in the
// table's erasures table.
type EraseResult struct {
	ID          string                      `json:"id"`
	RequestedBy string                      `json:"requested_by"`
	RequestedAt time.Time                   `json:"requested_at"`
	CompletedAt time.Time                   `json:"completed_at"`
	Keys        int                         `json:"keys"`
	Position    string                      `json:"position"` // changes of the keys at or below this _seq (hex) are refused from now on
	Tables      map[string]EraseTableResult `json:"tables"`   // by kind: bronze, mirror, history, quarantine, purged
	Warnings    []string                    `json:"warnings,omitempty"`
	// AlreadyCompleted: the erasure had completed before; the result is
	// the one it recorded.
	AlreadyCompleted bool `json:"already_completed,omitempty"`
}

// EraseTableResult is what an erasure did to one table.
type EraseTableResult struct {
	// Rows counts the rows of the keys in the data files deleted from
	// storage: the live rows and the earlier versions position deletes hid.
	Rows               int64    `json:"rows"`
	FilesRewritten     []string `json:"files_rewritten,omitempty"` // data files of the current snapshot written again without the keys' rows
	FilesAdded         []string `json:"files_added,omitempty"`     // the files written in their place
	DeleteFilesRemoved int      `json:"delete_files_removed,omitempty"`
	FilesDeleted       []string `json:"files_deleted,omitempty"`     // data files that held a key, deleted from storage
	SnapshotsExpired   []int64  `json:"snapshots_expired,omitempty"` // Iceberg snapshots expired because they reached such a file
}

// Schema decisions an operator takes on a blocked schema change
// (ApplyRequest.SchemaDecision).
const (
	DecisionEvolve = "evolve" // accept: keep the table's types (values that do not fit go to quarantine), keep dropped columns (future rows NULL)
	DecisionSkip   = "skip"   // quarantine this batch's row changes that carry the changed schema
)
