package source

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Describe reads the columns of schema.table (names as stored in the
// catalog, case-sensitive; the table may be a plain, partitioned or
// materialized table) in ordinal order, each typed as Debezium's
// PostgreSQL connector and the schemas decoder type it (see the package
// doc), and its key columns: keyCols in that order when given, else the
// primary key's columns in index order.
//
// It returns an error when the table does not exist; when a column's type
// is not supported (naming every such column and its type); when there is
// no primary key and no keyCols; when a key column does not exist, is an
// array, or is nullable; and when keyCols are not covered by a unique
// index (keyset pagination over a key that is not unique would skip the
// rows sharing a key at a chunk boundary). Those errors match
// ErrDefinition; errors talking to the database do not (retry them).
func (p *Postgres) Describe(ctx context.Context, schema, table string, keyCols []string) (TableInfo, error) {
	info := TableInfo{Schema: schema, Table: table}
	var relid uint32
	var relkind string
	err := p.pool.QueryRow(ctx, `
		SELECT c.oid, c.relkind::text, current_database()
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = $2`, schema, table).Scan(&relid, &relkind, &info.Database)
	if err != nil {
		if isNoRows(err) {
			return info, definition("source: table %s.%s does not exist", schema, table)
		}
		return info, fmt.Errorf("source: describing %s.%s: %w", schema, table, err)
	}
	if relkind != "r" && relkind != "p" && relkind != "m" {
		return info, definition("source: %s.%s is not a table (relkind %q)", schema, table, relkind)
	}

	attrs, err := p.attributes(ctx, relid)
	if err != nil {
		return info, fmt.Errorf("source: describing %s.%s: %w", schema, table, err)
	}
	types, err := p.types(ctx, attrs)
	if err != nil {
		return info, fmt.Errorf("source: describing %s.%s: %w", schema, table, err)
	}
	var unsupported []string
	for _, a := range attrs {
		ci, err := mapColumn(a, types)
		if err != nil {
			unsupported = append(unsupported, fmt.Sprintf("column %q has type %s: %v", a.name, a.format, err))
			continue
		}
		info.Columns = append(info.Columns, ci)
	}
	if len(unsupported) > 0 {
		return info, definition("source: table %s.%s: unsupported column types: %s (supported: %s)",
			schema, table, strings.Join(unsupported, "; "), supportedTypes)
	}

	if len(keyCols) == 0 {
		if keyCols, err = p.primaryKey(ctx, relid); err != nil {
			return info, fmt.Errorf("source: describing %s.%s: %w", schema, table, err)
		}
		if len(keyCols) == 0 {
			return info, definition("source: table %s.%s has no primary key and no key columns were given: "+
				"name the key columns (as in Debezium's message.key.columns); they must be NOT NULL and covered by a unique index", schema, table)
		}
	}
	if err := p.checkKey(ctx, relid, info, keyCols); err != nil {
		return info, err
	}
	info.Key = append([]string(nil), keyCols...)
	return info, nil
}

// attributes reads the table's live columns in ordinal order.
func (p *Postgres) attributes(ctx context.Context, relid uint32) ([]attrRow, error) {
	rows, err := p.pool.Query(ctx, `
		SELECT a.attname, a.atttypid, a.atttypmod, a.attnotnull,
		       format_type(a.atttypid, a.atttypmod), quote_ident(n.nspname) || '.' || quote_ident(t.typname)
		FROM pg_attribute a
		JOIN pg_type t ON t.oid = a.atttypid JOIN pg_namespace n ON n.oid = t.typnamespace
		WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
		ORDER BY a.attnum`, relid)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []attrRow
	for rows.Next() {
		var a attrRow
		if err := rows.Scan(&a.name, &a.typid, &a.typmod, &a.notNull, &a.format, &a.sqlType); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// types reads the pg_type rows of the columns' types and of every type
// they refer to (array elements, domain bases), with enum labels.
func (p *Postgres) types(ctx context.Context, attrs []attrRow) (map[uint32]pgTypeRow, error) {
	oids := make([]int64, len(attrs))
	for i, a := range attrs {
		oids[i] = int64(a.typid)
	}
	rows, err := p.pool.Query(ctx, `
		WITH RECURSIVE ty(oid) AS (
			SELECT unnest($1::int8[])::oid
			UNION
			SELECT v.x FROM ty JOIN pg_type t ON t.oid = ty.oid
			CROSS JOIN LATERAL (VALUES (t.typelem), (t.typbasetype)) v(x)
			WHERE v.x <> 0
		)
		SELECT t.oid, t.typname, n.nspname, t.typtype::text, t.typcategory::text,
		       t.typelem, t.typbasetype, t.typtypmod,
		       coalesce((SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)
		                 FROM pg_enum e WHERE e.enumtypid = t.oid), '')
		FROM ty JOIN pg_type t ON t.oid = ty.oid JOIN pg_namespace n ON n.oid = t.typnamespace`, oids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[uint32]pgTypeRow)
	for rows.Next() {
		var t pgTypeRow
		if err := rows.Scan(&t.oid, &t.name, &t.nsp, &t.typtype, &t.category, &t.elem, &t.base, &t.typmod, &t.labels); err != nil {
			return nil, err
		}
		out[t.oid] = t
	}
	return out, rows.Err()
}

// primaryKey returns the primary key's columns in index order (none when
// the table has no primary key).
func (p *Postgres) primaryKey(ctx context.Context, relid uint32) ([]string, error) {
	rows, err := p.pool.Query(ctx, `
		SELECT a.attname
		FROM pg_index i
		CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
		WHERE i.indrelid = $1 AND i.indisprimary
		ORDER BY k.ord`, relid)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// checkKey checks that the key columns exist, are scalar and NOT NULL,
// and are unique (some valid, non-partial unique index on plain columns
// has all its key columns among them).
func (p *Postgres) checkKey(ctx context.Context, relid uint32, info TableInfo, keyCols []string) error {
	names := make([]string, 0, len(keyCols))
	seen := map[string]bool{}
	for _, k := range keyCols {
		if seen[k] {
			return definition("source: key column %q of %s is named twice", k, info.qualified())
		}
		seen[k] = true
		var col *ColumnInfo
		for i := range info.Columns {
			if info.Columns[i].Name == k {
				col = &info.Columns[i]
			}
		}
		switch {
		case col == nil:
			return definition("source: key column %q is not a column of %s", k, info.qualified())
		case col.Array:
			return definition("source: key column %q of %s is an array (%s): not supported as a key", k, info.qualified(), col.PGType)
		case col.Optional:
			return definition("source: key column %q of %s is nullable: keyset pagination needs NOT NULL key columns (a NULL key sorts outside every key range)", k, info.qualified())
		}
		names = append(names, k)
	}
	var unique bool
	err := p.pool.QueryRow(ctx, `
		SELECT EXISTS (
			SELECT 1 FROM pg_index i
			WHERE i.indrelid = $1 AND i.indisunique AND i.indisvalid
			  AND i.indpred IS NULL AND i.indexprs IS NULL
			  AND NOT EXISTS (
				SELECT 1
				FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
				JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
				WHERE k.ord <= i.indnkeyatts AND NOT (a.attname = ANY($2::text[]))))`, relid, names).Scan(&unique)
	if err != nil {
		return fmt.Errorf("source: describing %s: %w", info.qualified(), err)
	}
	if !unique {
		return definition("source: key columns (%s) of %s are not covered by a primary key or unique index: "+
			"keyset pagination over a non-unique key would skip rows sharing a key at chunk boundaries", strings.Join(names, ", "), info.qualified())
	}
	return nil
}

func isNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }
