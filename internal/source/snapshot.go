package source

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Chunk is one chunk of a Snapshot, handed to its callback.
type Chunk struct {
	// LSN is the snapshot's position (see Snapshot): the same for every
	// chunk of one Snapshot call. Rows read by it carry
	// cdc.PostgresSeq(0, LSN) as their `_seq`, like Debezium's own
	// snapshot reads (source.lsn = LSN, no commit LSN).
	LSN uint64
	// Snapshot is the read's transaction snapshot (pg_current_snapshot(),
	// taken by the same first statement as LSN) with LSN: the
	// transactions it did not see, whose changes a re-snapshot at
	// (LSN, 0) must let through (cdc.PostgresSnapshot.Lift).
	Snapshot cdc.PostgresSnapshot
	// Rows are the chunk's rows in key order (every column, decoded as by
	// ReadChunk). They are not reused: the callback may keep them.
	Rows []*cdc.Row
	// Last is the key of the last row (values in TableInfo.Key order):
	// the point to resume after (SnapshotFrom) once Rows are stored.
	Last []cdc.Value
	// Read counts the rows this call has read so far, Rows included
	// (progress for heartbeats).
	Read int64
	// Final reports the last chunk of the table: no row follows Last in
	// the snapshot. Its last row is Debezium's source.snapshot "last".
	Final bool
}

// Snapshot reads the whole table in key order, in chunks of up to chunk
// rows, within one REPEATABLE READ READ ONLY transaction, and calls fn
// with each chunk (never with an empty one; an empty table calls fn
// zero times). It returns the snapshot's position. An error from fn
// stops the read and is returned as is; every chunk fn accepted is
// resumable with SnapshotFrom(ctx, info, chunk.Last, …).
//
// # The position and why it is a safe `_seq`
//
// The first statement of the transaction is SELECT pg_current_wal_lsn().
// PostgreSQL takes a REPEATABLE READ transaction's snapshot at its first
// statement, so the snapshot every chunk is read from and the position
// are taken together, by that one statement. Every row reflects all
// transactions committed before the snapshot, and gets `_seq`
// cdc.PostgresSeq(0, LSN): the position Debezium gives its own snapshot
// reads (source.lsn = the WAL position read in its snapshot transaction,
// no commit LSN), so direct-load rows and Debezium snapshot rows order
// alike.
//
// Precondition: the connector's replication slot exists before the
// snapshot is taken (its restart position is at or before LSN), so that
// Debezium streams every change committed after the snapshot. Those are
// exactly the changes the rows do not show, and the sequence guard
// applies them on top because they sort higher: a streamed event's first
// word is max(lastCommitLsn, lsn) (cdc.PostgresEventWords), at least its
// own WAL position and so above 0, whatever transaction it belongs to
// (including one still in flight when the snapshot was taken). Streamed
// changes the snapshot already shows sort higher too; applying them is
// harmless: the stream also carries every later change of the row, so
// the row's latest change is what remains. Debezium's own snapshot reads
// sit at the same (0, LSN).
//
// A re-snapshot places its rows at (LSN, 0) instead (above every change
// committed before it, to repair lost events). Changes of a transaction
// the snapshot did not see can sort below that: written before LSN and
// committed after it, the first such transaction streamed carries a
// lastCommitLsn below LSN. The same first statement therefore reads
// pg_current_snapshot() (Chunk.Snapshot), which tells those transactions
// by id (cdc.PostgresSnapshot).
//
// The transaction holds back vacuum of the table's dead rows while it
// runs, as every consistent snapshot does.
func (p *Postgres) Snapshot(ctx context.Context, info TableInfo, chunk int, fn func(Chunk) error) (lsn uint64, err error) {
	return p.SnapshotFrom(ctx, info, nil, chunk, fn)
}

// SnapshotFrom is Snapshot resumed after the key after (nil: from the
// start), e.g. with the Last of the last chunk stored by an interrupted
// load. It reads the rest of the table in a new transaction, at a new
// snapshot, and returns that snapshot's (later) position, which is also
// every resumed chunk's LSN: rows read by the resumed part carry it as
// their `_seq`.
//
// Why the mixed positions are still correct: each row is read once,
// either before the interruption (keys ≤ after, at the first snapshot and
// position) or after it (keys > after, at the new snapshot and position),
// and each carries the position of the snapshot it was read in, so each
// row is exactly as the argument on Snapshot requires. Changes between
// the two snapshots are streamed with higher positions: to rows of the
// first part they apply on top, as for any change after a snapshot;
// inserts with keys ≤ after (which the resumed read does not revisit)
// arrive only through the stream; rows of the second part already show
// them, and re-applying them is the harmless case above.
func (p *Postgres) SnapshotFrom(ctx context.Context, info TableInfo, after []cdc.Value, chunk int, fn func(Chunk) error) (lsn uint64, err error) {
	plan, err := newReadPlan(info)
	if err != nil {
		return 0, err
	}
	if chunk <= 0 {
		return 0, fmt.Errorf("source: chunk size %d: must be positive", chunk)
	}
	conn, err := p.pool.Acquire(ctx)
	if err != nil {
		return 0, fmt.Errorf("source: %s: %w", info.qualified(), err)
	}
	defer conn.Release()
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return 0, fmt.Errorf("source: %s: beginning the snapshot transaction: %w", info.qualified(), err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only; after Commit a no-op

	// First statement: fixes the snapshot and reads its position and
	// the transactions it does not see.
	var text, snapText string
	if err := tx.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text, pg_current_snapshot()::text").Scan(&text, &snapText); err != nil {
		return 0, fmt.Errorf("source: %s: reading pg_current_wal_lsn(): %w", info.qualified(), err)
	}
	if lsn, err = ParseLSN(text); err != nil {
		return 0, err
	}
	snap, err := cdc.ParsePostgresSnapshot(lsn, snapText)
	if err != nil {
		return lsn, err
	}

	var read int64
	for {
		// One row more than the chunk tells whether this is the last
		// chunk; the extra row is read again by the next query.
		rows, err := plan.read(ctx, tx, after, chunk+1)
		if err != nil {
			return lsn, err
		}
		final := len(rows) <= chunk
		if !final {
			rows = rows[:chunk]
		}
		if len(rows) == 0 {
			break
		}
		read += int64(len(rows))
		last := plan.lastKey(rows)
		if err := fn(Chunk{LSN: lsn, Snapshot: snap, Rows: rows, Last: last, Read: read, Final: final}); err != nil {
			return lsn, err
		}
		if final {
			break
		}
		after = last
	}
	if err := tx.Commit(ctx); err != nil {
		return lsn, fmt.Errorf("source: %s: ending the snapshot transaction: %w", info.qualified(), err)
	}
	return lsn, nil
}
