package source

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// ReadChunk reads the next chunk of the table in key order: at most limit
// rows whose key is greater than after (the key of the last row of the
// previous chunk, as returned in last; nil starts at the beginning),
//
//	SELECT cols FROM t WHERE (k1, k2) > ($1, $2) ORDER BY k1, k2 LIMIT limit
//
// in its own REPEATABLE READ READ ONLY transaction. Rows hold every
// column of info in order (one *cdc.Columns shared by the chunk), each
// value decoded exactly into the cdc.Value of the column's type (see the
// package doc). last is the key of the last row (values in info.Key
// order), nil when rows is empty: the end of the table. Memory is bounded
// by one chunk.
//
// Consecutive calls read different snapshots: use Snapshot for one
// consistent read of the whole table.
func (p *Postgres) ReadChunk(ctx context.Context, info TableInfo, after []cdc.Value, limit int) (rows []*cdc.Row, last []cdc.Value, err error) {
	plan, err := newReadPlan(info)
	if err != nil {
		return nil, nil, err
	}
	tx, err := p.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, nil, fmt.Errorf("source: %s: beginning a transaction: %w", info.qualified(), err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only; after Commit a no-op
	if rows, err = plan.read(ctx, tx, after, limit); err != nil {
		return nil, nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, nil, fmt.Errorf("source: %s: ending the transaction: %w", info.qualified(), err)
	}
	return rows, plan.lastKey(rows), nil
}

// readPlan is the keyset query of one table.
type readPlan struct {
	info   TableInfo
	cols   *cdc.Columns // shared by every row read with this plan
	keyIdx []int
	selct  string // "SELECT … FROM … AS src"
	order  string // " ORDER BY src.k1, … LIMIT "
}

// readTypes are the types a column may be read as (ColumnInfo.Read).
var readTypes = map[string]bool{
	"bool": true, "int2": true, "int4": true, "int8": true, "float4": true, "float8": true,
	"numeric": true, "text": true, "varchar": true, "bpchar": true, "bytea": true, "uuid": true,
	"date": true, "time": true, "timestamp": true, "timestamptz": true,
}

func newReadPlan(info TableInfo) (*readPlan, error) {
	keyIdx, err := info.keyIndexes()
	if err != nil {
		return nil, err
	}
	if len(info.Columns) == 0 {
		return nil, definition("source: table %s has no columns", info.qualified())
	}
	var b strings.Builder
	b.WriteString("SELECT ")
	for i := range info.Columns {
		ci := &info.Columns[i]
		if !readTypes[ci.Read] {
			return nil, definition("source: column %q: cannot read type %q", ci.Name, ci.Read)
		}
		if i > 0 {
			b.WriteString(", ")
		}
		// Cast to the read type: enums, json, jsonb and xml to their text
		// (what Debezium sends), domains to their base type. The cast is
		// a no-op for every other column.
		b.WriteString("src." + ident(ci.Name) + "::pg_catalog." + ci.Read)
		if ci.Array {
			b.WriteString("[]")
		}
	}
	b.WriteString(" FROM " + ident(info.Schema) + "." + ident(info.Table) + " AS src")
	var o strings.Builder
	o.WriteString(" ORDER BY ")
	for i, k := range info.Key {
		if i > 0 {
			o.WriteString(", ")
		}
		// Qualified: an unqualified name would sort by the select list's
		// cast expression (an enum by its text), not by the column.
		o.WriteString("src." + ident(k))
	}
	o.WriteString(" LIMIT ")
	return &readPlan{info: info, cols: cdc.NewColumns(info.names()), keyIdx: keyIdx, selct: b.String(), order: o.String()}, nil
}

func ident(s string) string { return pgx.Identifier{s}.Sanitize() }

// querier runs a query (a pgx.Tx).
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// read runs the keyset query for up to limit rows after the key after.
func (p *readPlan) read(ctx context.Context, q querier, after []cdc.Value, limit int) ([]*cdc.Row, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("source: chunk size %d: must be positive", limit)
	}
	var sql strings.Builder
	sql.WriteString(p.selct)
	args := make([]any, 0, len(after)+1)
	if after != nil {
		if len(after) != len(p.keyIdx) {
			return nil, fmt.Errorf("source: %s: resume key has %d values, the key has %d columns", p.info.qualified(), len(after), len(p.keyIdx))
		}
		var lhs, rhs strings.Builder
		for i, v := range after {
			arg, wire, err := keyArg(v)
			if err != nil {
				return nil, fmt.Errorf("source: %s: resume key column %q: %w", p.info.qualified(), p.info.Key[i], err)
			}
			if i > 0 {
				lhs.WriteString(", ")
				rhs.WriteString(", ")
			}
			lhs.WriteString("src." + ident(p.info.Key[i]))
			rhs.WriteString("$" + strconv.Itoa(i+1) + "::pg_catalog." + wire)
			if t := p.info.Columns[p.keyIdx[i]].SQLType; t != "" {
				rhs.WriteString("::" + t) // the column's type: compare (and order) as the column does
			}
			args = append(args, arg)
		}
		sql.WriteString(" WHERE (" + lhs.String() + ") > (" + rhs.String() + ")")
	}
	sql.WriteString(p.order + "$" + strconv.Itoa(len(args)+1))
	args = append(args, int64(limit))
	return p.query(ctx, q, sql.String(), args)
}

// query runs a query of the plan's select list and decodes its rows.
func (p *readPlan) query(ctx context.Context, q querier, sql string, args []any) ([]*cdc.Row, error) {
	cells := make([]cell, len(p.info.Columns))
	dests := make([]any, len(cells))
	for i := range p.info.Columns {
		c, err := newCell(&p.info.Columns[i])
		if err != nil {
			return nil, err
		}
		cells[i], dests[i] = c, c.dest()
	}
	rs, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("source: reading %s: %w", p.info.qualified(), err)
	}
	defer rs.Close()
	var out []*cdc.Row
	for rs.Next() {
		if err := rs.Scan(dests...); err != nil {
			return nil, fmt.Errorf("source: reading %s: %w", p.info.qualified(), err)
		}
		vals := make([]cdc.Value, len(cells))
		for i, c := range cells {
			v, err := c.value()
			if err != nil {
				return nil, fmt.Errorf("source: reading %s: column %q (%s): %w", p.info.qualified(), p.info.Columns[i].Name, p.info.Columns[i].PGType, err)
			}
			vals[i] = v
		}
		out = append(out, &cdc.Row{Cols: p.cols, Vals: vals})
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("source: reading %s: %w", p.info.qualified(), err)
	}
	return out, nil
}

// lastKey is the key of the last row, nil for no rows.
func (p *readPlan) lastKey(rows []*cdc.Row) []cdc.Value {
	if len(rows) == 0 {
		return nil
	}
	return p.keyOf(rows[len(rows)-1])
}

func (p *readPlan) keyOf(r *cdc.Row) []cdc.Value {
	k := make([]cdc.Value, len(p.keyIdx))
	for i, j := range p.keyIdx {
		k[i] = r.Vals[j]
	}
	return k
}
