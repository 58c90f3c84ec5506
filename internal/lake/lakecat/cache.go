package lakecat

import (
	"context"
	"sync"

	"github.com/apache/iceberg-go/table"
)

// Tables loaded once per batch. A batch reads each of its Iceberg tables
// several times before it commits (the mirror when it prepares the
// events, expands truncates and stages; history when it ensures its
// columns and stages), and every load fetches and parses the table's
// whole metadata.json, whose size grows with the snapshots the table
// keeps: for a small batch the parsing was most of the batch's CPU
// (BenchmarkBatchAfterCommits). WithTableCache gives one batch a cache:
// LoadTable and LoadOrCreate return the table as this batch last loaded
// or committed it, and every commit in this package (CommitTx,
// createTable) replaces the cached table with the committed one, or drops
// it when the commit failed. A concurrent writer's commit in between is
// not seen until the next batch, as it was not between a load and the
// commit before: the commit is checked by Iceberg against the snapshot it
// was staged on and fails (retryable), and the retry starts a new cache.

type tableCacheKey struct{}

// tableCache is a batch's loaded tables by identifier (IdentString). Safe
// for concurrent use (bronze is staged beside the mirror and history).
type tableCache struct {
	mu     sync.Mutex
	tables map[string]*table.Table
}

// WithTableCache returns ctx carrying a new, empty cache of loaded tables
// for one batch (or any one unit of work that makes its own commits
// only); calls without one load every time.
func WithTableCache(ctx context.Context) context.Context {
	return context.WithValue(ctx, tableCacheKey{}, &tableCache{tables: map[string]*table.Table{}})
}

func cacheOf(ctx context.Context) *tableCache {
	c, _ := ctx.Value(tableCacheKey{}).(*tableCache)
	return c
}

// cachedTable returns ctx's cached ident, nil when there is none.
func cachedTable(ctx context.Context, ident table.Identifier) *table.Table {
	c := cacheOf(ctx)
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tables[IdentString(ident)]
}

// CacheTable records tbl (loaded or just committed) in ctx's cache; a nil
// tbl drops ident's entry.
func CacheTable(ctx context.Context, ident table.Identifier, tbl *table.Table) {
	c := cacheOf(ctx)
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if tbl == nil {
		delete(c.tables, IdentString(ident))
		return
	}
	c.tables[IdentString(ident)] = tbl
}

// CommitTx commits tx, a transaction on tbl, and keeps ctx's cache true:
// the committed table replaces tbl, or tbl is dropped when the commit
// failed (the table may have moved). Every commit of this package goes
// through it. It returns the committed table. Errors: the commit's.
func CommitTx(ctx context.Context, tbl *table.Table, tx *table.Transaction) (*table.Table, error) {
	newTbl, err := tx.Commit(ctx)
	if err != nil {
		CacheTable(ctx, tbl.Identifier(), nil)
		return nil, err
	}
	CacheTable(ctx, tbl.Identifier(), newTbl)
	return newTbl, nil
}

// HasCache reports whether ctx carries a table cache (WithTableCache).
func HasCache(ctx context.Context) bool { return cacheOf(ctx) != nil }
