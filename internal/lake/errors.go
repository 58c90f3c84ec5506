package lake

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/evolve"
	"github.com/lakemirror/lakemirror/internal/lake/rowdelta"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
)

// The exported errors of the lake adapter, in one place: the sentinels a
// caller compares with errors.Is and the error types it takes apart with
// errors.As (activities/errors.go maps them to the workflows'
// non-retryable failures).

// DeleteFormatError is rowdelta.DeleteFormatError: a table whose mirror
// or history exists with another delete format than the table's setting
// asks for.
type DeleteFormatError = rowdelta.DeleteFormatError

// ConformError is a row value that does not fit the table's column type:
// bad input, not retryable.
type ConformError struct {
	Origin cdc.Origin
	Stage  string // StageConform, StagePurged, StageSchema or StageErased
	Err    error
}

func (e *ConformError) Error() string {
	return fmt.Sprintf("lake: record %s/%d@%d does not fit the mirror table: %v", e.Origin.Topic, e.Origin.Partition, e.Origin.Offset, e.Err)
}

func (e *ConformError) Unwrap() error { return e.Err }

// RetentionError refuses a purge retention below the configured floor.
type RetentionError struct{ Retention, Floor time.Duration }

func (e *RetentionError) Error() string {
	return fmt.Sprintf("lake: purge retention %s is shorter than the floor %s (it must exceed Kafka retention and any replay)", e.Retention, e.Floor)
}

// PastTrimmedError stops a late-key rebuild whose keys' past changes
// bronze no longer holds all of: bronze retention dropped records
// ingested before Before, and the stored rows of Keys (a history
// version's opening or closing position, the mirror row's position) name
// changes that the past read back lacks. Rebuilding them from what is
// left would write a wrong history, so the rebuild stops; Sample holds up
// to 5 keys as text.
type PastTrimmedError struct {
	Table   string
	Before  time.Time
	Keys    int
	Sample  []string
	Missing cdc.Seq // the first missing position of Sample[0]
}

func (e *PastTrimmedError) Error() string {
	return fmt.Sprintf("%s: %d late keys (%s) need changes that bronze retention dropped (records ingested before %s are gone; "+
		"the first key misses its change at position %s): rebuilding them from bronze would write a wrong history, so the table stops. "+
		"To go on: `starter maintain %s keep-applied` keeps these keys' history and mirror row as applied in position order "+
		"(their late change is in the mirror, not woven into the history; counted as unwoven), then `starter retry %s`",
		e.Table, e.Keys, strings.Join(e.Sample, ", "), e.Before.UTC().Format(time.RFC3339), e.Missing.Hex(), e.Table, e.Table)
}

// SchemaBlockedError is evolve.SchemaBlockedError, and SchemaChange
// evolve.SchemaChange, for callers outside internal/lake.
type (
	SchemaBlockedError = evolve.SchemaBlockedError
	SchemaChange       = evolve.SchemaChange
)

// SourceServerChangedError: a batch holds a change of a MySQL or MariaDB
// server the table has not seen (Server) at a position below what the
// table had applied (Applied, hex `_seq`). Retrying cannot fix it.
type SourceServerChangedError struct {
	Table    string
	Server   string   // the new server's source.server_id
	Known    []string // the servers seen before (PropSourceServers)
	Position cdc.Seq  // the change's position
	Applied  cdc.Seq  // the highest position applied before it
}

func (e *SourceServerChangedError) Error() string {
	return fmt.Sprintf("lake: %s: a change of MySQL server %s (source.server_id; seen before: %s) at binlog position %s, below the %s already applied: binlog positions start over on another server (a failover), so its changes cannot be ordered against those already applied and would be dropped as stale; the table stops here. Mirror the new server into a new table from a new source snapshot, reading only the new server's changes (a new topic, or --start-from latest after the snapshot)",
		e.Table, e.Server, strings.Join(e.Known, ", "), e.Position.Hex(), e.Applied.Hex())
}

// BinlogRestartedError is tablestate.BinlogRestartedError: a MySQL or
// MariaDB change whose binlog position sits below its key's, from a
// binlog that started over. Retrying cannot fix it.
type BinlogRestartedError = tablestate.BinlogRestartedError

// QuarantineLimitError stops a batch with more records than its
// quarantine limit (non-retryable for the caller: an operator raises the
// limit or fixes the source). First is the first of them.
type QuarantineLimitError struct {
	Records int
	Limit   int
	First   QuarantineRecord
}

func (e *QuarantineLimitError) Error() string {
	return fmt.Sprintf("%d records cannot be applied (limit %d per batch); first: partition %d offset %d: %s",
		e.Records, e.Limit, e.First.Partition, e.First.Offset, e.First.Reason)
}

// ErrStateMoved is tablestate.ErrStateMoved: the local state was
// rebuilt while the batch was staged; stage the mirror again.
var ErrStateMoved = tablestate.ErrStateMoved

// ErrBatchBetweenCommits: a tombstone purge found a batch committed to
// the mirror and not yet to the history (MirrorWriter.Purge); retryable:
// the table's retry of the batch commits its history.
var ErrBatchBetweenCommits = errors.New("lake: a batch is committed to the mirror but not yet to the history (its retry is pending); the tombstone purge waits for it: retry once the table has applied its next batch")

// ErrHorizonMoved: a tombstone purge (or an erasure's guard) committed
// between the batch's Prepare (which refused changes that could resurrect
// purged or erased rows by the horizons it read) and its Stage (which
// would apply the rest against the purged table). The batch must be
// prepared again (retryable); committing it would let a replayed old
// change revive a purged key.
var ErrHorizonMoved = errors.New("lake: a tombstone purge or an erasure committed while the batch was prepared; prepare it again")
