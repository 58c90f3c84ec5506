package source

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Position is where a source read was taken: the `_seq` a row read then
// is compared and repaired at (Seq), and its text for messages. See
// ReadChunkAt (PostgreSQL) and MySQL.ReadChunkAt for how each is taken
// and why its Seq sorts above every change the read shows and below
// every change it does not.
type Position struct {
	Seq  cdc.Seq `json:"seq"`
	Text string  `json:"text"` // "0/16B3748" (PostgreSQL) or "mysql-bin.000003:1234" (MySQL)
	// PostgreSQL: the WAL position; MySQL: the binlog file's name and the
	// position in it.
	LSN  uint64 `json:"lsn,omitempty"`
	File string `json:"file,omitempty"`
	Pos  uint64 `json:"pos,omitempty"`
	// Snapshot (PostgreSQL): the read's transaction snapshot, whose
	// invisible transactions' changes a repair at (LSN, 0) must let
	// through (recorded like a re-snapshot's, cdc.PostgresSnapshot.Lift).
	Snapshot *cdc.PostgresSnapshot `json:"snapshot,omitempty"`
}

// pgPosition is the position of a PostgreSQL read at WAL position lsn:
// (lsn, 0), the re-snapshot position (Renderer.ValueAt): above every
// change committed before lsn, below every change written after it.
func pgPosition(snap cdc.PostgresSnapshot) Position {
	return Position{Seq: cdc.PostgresSeq(snap.LSN, 0), Text: FormatLSN(snap.LSN), LSN: snap.LSN, Snapshot: &snap}
}

// ReadChunkAt is ReadChunk that also returns the read's position: the
// transaction's first statement is SELECT pg_current_wal_lsn(), which
// fixes its REPEATABLE READ snapshot, so the rows show exactly the
// transactions committed before that WAL position P; the position's Seq
// is (P, 0) (see Snapshot for why that orders against streamed changes).
func (p *Postgres) ReadChunkAt(ctx context.Context, info TableInfo, after []cdc.Value, limit int) (rows []*cdc.Row, last []cdc.Value, pos Position, err error) {
	plan, err := newReadPlan(info)
	if err != nil {
		return nil, nil, pos, err
	}
	err = p.readOnly(ctx, info, func(tx pgx.Tx, snap cdc.PostgresSnapshot) error {
		pos = pgPosition(snap)
		rows, err = plan.read(ctx, tx, after, limit)
		return err
	})
	if err != nil {
		return nil, nil, pos, err
	}
	return rows, plan.lastKey(rows), pos, nil
}

// ReadKeys reads the rows of the given keys (each in info.Key order) in
// one REPEATABLE READ READ ONLY transaction whose position is taken as
// by ReadChunkAt, with WHERE (k1, …) IN ((…), …) ORDER BY the key. Keys
// the table does not hold return no row. At most 1,000 keys per call.
func (p *Postgres) ReadKeys(ctx context.Context, info TableInfo, keys [][]cdc.Value) (rows []*cdc.Row, pos Position, err error) {
	if len(keys) > 1000 {
		return nil, pos, fmt.Errorf("source: %d keys in one read: at most 1000", len(keys))
	}
	plan, err := newReadPlan(info)
	if err != nil {
		return nil, pos, err
	}
	err = p.readOnly(ctx, info, func(tx pgx.Tx, snap cdc.PostgresSnapshot) error {
		pos = pgPosition(snap)
		if len(keys) == 0 {
			return nil
		}
		rows, err = plan.readKeys(ctx, tx, keys)
		return err
	})
	return rows, pos, err
}

// readOnly runs fn in a REPEATABLE READ READ ONLY transaction after its
// first statement, SELECT pg_current_wal_lsn(), pg_current_snapshot(),
// with the read's snapshot (its WAL position and the transactions it
// does not see).
func (p *Postgres) readOnly(ctx context.Context, info TableInfo, fn func(pgx.Tx, cdc.PostgresSnapshot) error) error {
	tx, err := p.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("source: %s: beginning a transaction: %w", info.qualified(), err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only; after Commit a no-op
	var text, snapText string
	if err := tx.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text, pg_current_snapshot()::text").Scan(&text, &snapText); err != nil {
		return fmt.Errorf("source: %s: reading pg_current_wal_lsn(): %w", info.qualified(), err)
	}
	lsn, err := ParseLSN(text)
	if err != nil {
		return err
	}
	snap, err := cdc.ParsePostgresSnapshot(lsn, snapText)
	if err != nil {
		return err
	}
	if err := fn(tx, snap); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("source: %s: ending the transaction: %w", info.qualified(), err)
	}
	return nil
}

// readKeys runs the keyed query for the given keys.
func (p *readPlan) readKeys(ctx context.Context, q querier, keys [][]cdc.Value) ([]*cdc.Row, error) {
	var sql strings.Builder
	sql.WriteString(p.selct)
	var lhs strings.Builder
	for i, k := range p.info.Key {
		if i > 0 {
			lhs.WriteString(", ")
		}
		lhs.WriteString("src." + ident(k))
	}
	sql.WriteString(" WHERE (" + lhs.String() + ") IN (")
	var args []any
	for n, key := range keys {
		if len(key) != len(p.keyIdx) {
			return nil, fmt.Errorf("source: %s: key has %d values, the key has %d columns", p.info.qualified(), len(key), len(p.keyIdx))
		}
		if n > 0 {
			sql.WriteString(", ")
		}
		sql.WriteString("(")
		for i, v := range key {
			arg, wire, err := keyArg(v)
			if err != nil {
				return nil, fmt.Errorf("source: %s: key column %q: %w", p.info.qualified(), p.info.Key[i], err)
			}
			if i > 0 {
				sql.WriteString(", ")
			}
			args = append(args, arg)
			sql.WriteString("$" + strconv.Itoa(len(args)) + "::pg_catalog." + wire)
			if t := p.info.Columns[p.keyIdx[i]].SQLType; t != "" {
				sql.WriteString("::" + t)
			}
		}
		sql.WriteString(")")
	}
	sql.WriteString(")")
	// the ORDER BY … LIMIT tail, with a limit that holds every key
	sql.WriteString(p.order + "$" + strconv.Itoa(len(args)+1))
	args = append(args, int64(len(keys)))
	return p.query(ctx, q, sql.String(), args)
}
