package lake

import (
	"context"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
)

// The lake names of internal/lake/lakecat's most used declarations, kept
// for the callers outside internal/lake: those used ten times or more
// (TableName, ParseTableName, LoadTable, IdentString, OpenCatalog,
// CatalogConfig and five column names), and those used by
// activities/apply.go and activities/errors.go (WithTableCache,
// MirrorKeyColumns, LayoutError, ReservedColumnError). Code inside
// internal/lake uses lakecat's names.

// TableName is lakecat.TableName: a source table's name, naming its
// Iceberg tables.
type TableName = lakecat.TableName

// CatalogConfig is lakecat.CatalogConfig: which Iceberg catalog to use.
type CatalogConfig = lakecat.CatalogConfig

// LayoutError is lakecat.LayoutError: a layout a table cannot take.
type LayoutError = lakecat.LayoutError

// ReservedColumnError is lakecat.ReservedColumnError: a source column
// named like a system column.
type ReservedColumnError = lakecat.ReservedColumnError

// Column names (lakecat's).
const (
	ColSeq        = lakecat.ColSeq
	ColDeleted    = lakecat.ColDeleted
	ColValidToSeq = lakecat.ColValidToSeq
	ColIsCurrent  = lakecat.ColIsCurrent
	BronzeOffset  = lakecat.BronzeOffset
)

// ParseTableName is lakecat.ParseTableName: "ns.name" read and checked.
func ParseTableName(s string) (TableName, error) { return lakecat.ParseTableName(s) }

// IdentString is lakecat.IdentString: an identifier as dotted text.
func IdentString(id table.Identifier) string { return lakecat.IdentString(id) }

// LoadTable is lakecat.LoadTable: the table, or (nil, nil) when it does
// not exist.
func LoadTable(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*table.Table, error) {
	return lakecat.LoadTable(ctx, cat, ident)
}

// OpenCatalog is lakecat.OpenCatalog: the catalog cfg describes.
func OpenCatalog(ctx context.Context, cfg CatalogConfig) (catalog.Catalog, error) {
	return lakecat.OpenCatalog(ctx, cfg)
}

// WithTableCache is lakecat.WithTableCache: ctx with a new cache of
// loaded tables for one batch.
func WithTableCache(ctx context.Context) context.Context { return lakecat.WithTableCache(ctx) }

// MirrorKeyColumns is lakecat.MirrorKeyColumns: the key columns recorded
// on the mirror table, nil when it does not exist.
func MirrorKeyColumns(ctx context.Context, cat catalog.Catalog, name TableName) ([]string, error) {
	return lakecat.MirrorKeyColumns(ctx, cat, name)
}
