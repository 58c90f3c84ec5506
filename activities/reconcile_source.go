package activities

import (
	"context"
	"fmt"
	"strings"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/source"
)

// sourceReader is what reconciliation reads from a source database:
// chunks in key order and rows by key, each with the read's position.
// source.Postgres and source.MySQL implement it.
type sourceReader interface {
	ReadChunkAt(ctx context.Context, info source.TableInfo, after []cdc.Value, limit int) ([]*cdc.Row, []cdc.Value, source.Position, error)
	ReadKeys(ctx context.Context, info source.TableInfo, keys [][]cdc.Value) ([]*cdc.Row, source.Position, error)
	Close()
}

// openSource resolves the request's source (a name the worker maps to a
// DSN with -sources, else a DSN given directly), connects and describes
// the table ("schema.table" for PostgreSQL, "database.table" for MySQL
// and MariaDB). Errors: an unknown name or bad table name (non-retryable),
// connection and catalog errors of the database.
func (a *Activities) openSource(ctx context.Context, spec TableSpec, name, table string) (sourceReader, source.TableInfo, error) {
	var info source.TableInfo
	dsn, ok := a.Sources[name]
	if !ok {
		if !source.IsDSN(name) {
			return nil, info, badSpec(fmt.Errorf("table %s: source %q is not configured on this worker (-sources name=dsn) and is not a DSN", spec.Table, name))
		}
		dsn = name
	}
	ns, tbl, ok := strings.Cut(table, ".")
	if !ok || ns == "" || tbl == "" {
		return nil, info, badSpec(fmt.Errorf("table %s: source table %q is not schema.table (database.table for MySQL)", spec.Table, table))
	}
	if source.IsMySQLDSN(dsn) {
		m, err := source.OpenMySQL(ctx, dsn)
		if err != nil {
			return nil, info, sourceError(err)
		}
		if info, err = m.Describe(ctx, ns, tbl, spec.KeyColumns); err != nil {
			m.Close()
			return nil, info, sourceError(err)
		}
		return m, info, nil
	}
	pg, err := source.Open(ctx, dsn)
	if err != nil {
		return nil, info, sourceError(err)
	}
	if info, err = pg.Describe(ctx, ns, tbl, spec.KeyColumns); err != nil {
		pg.Close()
		return nil, info, sourceError(err)
	}
	return pg, info, nil
}
