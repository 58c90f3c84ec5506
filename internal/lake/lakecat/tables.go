package lakecat

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/names"
)

// TableName names a source table's Iceberg tables: the mirror
// <Namespace>.<Name>, the bronze <Namespace>.<Name>_bronze and the
// history <Namespace>.<Name>_history.
type TableName struct {
	Namespace string
	Name      string
}

// ParseTableName reads "ns.name" (the namespace may itself contain dots:
// "a.b.orders" is namespace a.b, table orders). Errors: a name that breaks
// names.TableRule (lower case a-z, 0-9, _; nothing an engine must quote;
// bounded length), with the rule.
func ParseTableName(s string) (TableName, error) {
	if err := names.CheckTable(s); err != nil {
		return TableName{}, fmt.Errorf("lake: %w", err)
	}
	i := strings.LastIndexByte(s, '.')
	return TableName{Namespace: s[:i], Name: s[i+1:]}, nil
}

// String is "ns.name".
func (t TableName) String() string { return t.Namespace + "." + t.Name }

// Ident is the identifier of the table <Namespace>.<Name><suffix>, one of
// the source table's Iceberg tables (suffix "" is the mirror).
func (t TableName) Ident(suffix string) table.Identifier {
	return append(strings.Split(t.Namespace, "."), t.Name+suffix)
}

// Mirror is the current-state table's identifier.
func (t TableName) Mirror() table.Identifier { return t.Ident("") }

// Bronze is the append-only raw table's identifier.
func (t TableName) Bronze() table.Identifier { return t.Ident("_bronze") }

// History is the SCD type 2 table's identifier.
func (t TableName) History() table.Identifier { return t.Ident("_history") }

// IdentString renders an Iceberg identifier as dotted text ("shop.orders"),
// for messages.
func IdentString(id table.Identifier) string { return strings.Join(id, ".") }

// NamespaceIdent is the namespace's identifier (Namespace split at dots).
func (t TableName) NamespaceIdent() table.Identifier { return strings.Split(t.Namespace, ".") }

// TableProperties are set on every table the pipeline creates: format v2,
// merge-on-read row-level operations, zstd Parquet.
func TableProperties(extra map[string]string) iceberg.Properties {
	p := iceberg.Properties{
		table.PropertyFormatVersion:       "2",
		table.WriteDeleteModeKey:          table.WriteModeMergeOnRead,
		"write.update.mode":               "merge-on-read",
		"write.merge.mode":                "merge-on-read",
		"write.parquet.compression-codec": "zstd",
	}
	for k, v := range MetadataRetention {
		p[k] = v
	}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

// EnsureNamespace creates the namespace unless it exists.
func EnsureNamespace(ctx context.Context, cat catalog.Catalog, ns table.Identifier) error {
	ok, err := cat.CheckNamespaceExists(ctx, ns)
	if err != nil {
		return fmt.Errorf("lake: check namespace %v: %w", ns, err)
	}
	if ok {
		return nil
	}
	if err := cat.CreateNamespace(ctx, ns, iceberg.Properties{"owner": "lakemirror"}); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		return fmt.Errorf("lake: create namespace %v: %w", ns, err)
	}
	return nil
}

// LoadOrCreate loads ident, creating it with schema and props when it
// does not exist (losing a creation race to another writer is fine);
// within a batch's WithTableCache, the table as the batch last loaded or
// committed it (cache.go).
func LoadOrCreate(ctx context.Context, cat catalog.Catalog, ns, ident table.Identifier, schema func() (*iceberg.Schema, error), props iceberg.Properties) (*table.Table, bool, error) {
	return LoadOrCreateLaid(ctx, cat, ns, ident, schema, props, nil)
}

// LoadOrCreateLaid is LoadOrCreate for a table with a layout setting: a
// new table is created with lay's partition spec, sort order and
// compression (props' codec when lay gives none), an
// existing one (also the batch's cached one) is evolved to it when it has
// another (evolveLayout: a no-op when they match). A nil lay leaves the layout alone. Errors: also
// *LayoutError.
func LoadOrCreateLaid(ctx context.Context, cat catalog.Catalog, ns, ident table.Identifier, schema func() (*iceberg.Schema, error), props iceberg.Properties,
	lay *layout.Spec) (*table.Table, bool, error) {
	evolve := func(tbl *table.Table) (*table.Table, bool, error) {
		if lay != nil {
			var err error
			if tbl, err = evolveLayout(ctx, tbl, *lay); err != nil {
				return nil, false, err
			}
		}
		CacheTable(ctx, ident, tbl)
		return tbl, false, nil
	}
	if tbl := cachedTable(ctx, ident); tbl != nil {
		return evolve(tbl)
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err == nil {
		return evolve(tbl)
	}
	if !errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, false, fmt.Errorf("lake: load %s: %w", IdentString(ident), err)
	}
	sc, err := schema()
	if err != nil {
		return nil, false, err
	}
	if err := EnsureNamespace(ctx, cat, ns); err != nil {
		return nil, false, err
	}
	if lay != nil {
		if c, err := layout.ParseCompression(lay.Compression); err != nil {
			return nil, false, &LayoutError{Table: IdentString(ident), Err: err}
		} else if cp := c.Properties(); cp != nil {
			props = maps.Clone(props)
			maps.Copy(props, cp)
			if c.Level == 0 {
				delete(props, layout.PropCompressionLevel)
			}
		}
	}
	opts := []catalog.CreateTableOpt{catalog.WithProperties(props)}
	if lay != nil && lay.HasFields() {
		spec, order, err := partitionSpecOf(*lay, sc)
		if err != nil {
			return nil, false, &LayoutError{Table: IdentString(ident), Err: err}
		}
		opts = append(opts, catalog.WithPartitionSpec(&spec), catalog.WithSortOrder(order))
	}
	for attempt := 0; ; attempt++ {
		tbl, err = cat.CreateTable(ctx, ident, sc, opts...)
		if err == nil || attempt == 5 || !isBusy(err) {
			break
		}
		// SQLite serializes writers: another table's creation holds the lock
		time.Sleep(time.Duration(50<<attempt) * time.Millisecond)
	}
	if errors.Is(err, catalog.ErrTableAlreadyExists) {
		if tbl, err = cat.LoadTable(ctx, ident); err != nil {
			return nil, false, err
		}
		return evolve(tbl)
	}
	if err != nil {
		return nil, false, fmt.Errorf("lake: create %s: %w", IdentString(ident), err)
	}
	CacheTable(ctx, ident, tbl)
	return tbl, true, nil
}

// isBusy recognizes a SQLite catalog's "database is locked" (SQLITE_BUSY).
func isBusy(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "database is locked") || strings.Contains(err.Error(), "SQLITE_BUSY"))
}

// LoadTable loads a table, returning (nil, nil) when it does not exist;
// within a batch's WithTableCache, the table as the batch last loaded or
// committed it (cache.go).
func LoadTable(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*table.Table, error) {
	if tbl := cachedTable(ctx, ident); tbl != nil {
		return tbl, nil
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lake: load %s: %w", IdentString(ident), err)
	}
	CacheTable(ctx, ident, tbl)
	return tbl, nil
}

// KeyColumnsOf reads the key columns recorded on a mirror table.
func KeyColumnsOf(tbl *table.Table) ([]string, error) {
	t := tbl.Properties()[PropKeyColumns]
	if t == "" {
		return nil, fmt.Errorf("lake: table %s has no %s property; it was not created by this pipeline", IdentString(tbl.Identifier()), PropKeyColumns)
	}
	var cols []string
	if err := json.Unmarshal([]byte(t), &cols); err != nil {
		return nil, fmt.Errorf("lake: bad %s: %w", PropKeyColumns, err)
	}
	return cols, nil
}

// TopicOf returns the Kafka topic whose batches tbl holds (the
// lakemirror.topic its last batch commit recorded), or "" when it holds
// none.
func TopicOf(tbl *table.Table) string { return tbl.Properties()[PropTopic] }

// MirrorKeyColumns returns the key columns recorded on the mirror table,
// or nil when the mirror does not exist.
func MirrorKeyColumns(ctx context.Context, cat catalog.Catalog, name TableName) ([]string, error) {
	tbl, err := LoadTable(ctx, cat, name.Mirror())
	if err != nil || tbl == nil {
		return nil, err
	}
	return KeyColumnsOf(tbl)
}

// MetadataRetention are the table properties that bound the metadata.json
// files a table keeps (Iceberg's write.metadata.* properties, honoured by
// iceberg-go's commits): the 20 previous versions, older ones deleted
// after each commit. Set on every table at creation and added by the
// first commit to a table created without them.
var MetadataRetention = map[string]string{
	table.MetadataDeleteAfterCommitEnabledKey: "true",
	table.MetadataPreviousVersionsMaxKey:      "20",
}

// Erasures is the erasures table's identifier.
func (t TableName) Erasures() table.Identifier { return t.Ident("_erasures") }

// Purged is the purged-keys table's identifier.
func (t TableName) Purged() table.Identifier { return t.Ident("_purged") }

// Quarantine returns the quarantine table's identifier.
func (t TableName) Quarantine() table.Identifier { return t.Ident("_quarantine") }

// Validation is the validation table's identifier: <ns>.<table>_validation.
func (t TableName) Validation() table.Identifier { return t.Ident("_validation") }

// Scratch is the scratch table attempt (1, 2, …) of a validation run
// re-applies into: <table>_reapply_<first 8 hex digits of SHA-256 of
// runID>_<attempt>, in the table's namespace (its own purged-keys table
// is never created). Attempts have tables of their own: an attempt
// Temporal gave up on may still be running.
func (t TableName) Scratch(runID string, attempt int) TableName {
	sum := sha256.Sum256([]byte(runID))
	return TableName{Namespace: t.Namespace, Name: fmt.Sprintf("%s%s_%d", t.Name+ScratchInfix, hex.EncodeToString(sum[:4]), attempt)}
}

// ScratchInfix separates a table's name from its scratch tables' suffix.
const ScratchInfix = "_reapply_"

// SidecarPath is where the state sidecar (internal/lake's sidecar.go) of
// the table whose mirror lives at location is written:
// "<location>/lakemirror/state.lms".
func SidecarPath(location string) string {
	return strings.TrimSuffix(location, "/") + "/lakemirror/state.lms"
}
