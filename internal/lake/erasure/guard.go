package erasure

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/cdc/typing"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
)

// Guard is what a mirror writer's last Prepare read of the erased keys:
// the keys, the mirror's erasure horizon ("" when no key was ever erased:
// nothing is checked) and the mirror's key column types, to type keys.
// The zero Guard checks nothing.
type Guard struct {
	keys    *erasedKeys
	horizon cdc.Seq
	kt      *keyTypes
}

// Prepare loads the erased keys of name for a Prepare of its mirror tbl,
// whose key columns are keyCols (past: changes read back for a rebuild,
// which are not checked). Errors: catalog and file IO, a malformed
// horizon or erasures table.
func (g *Guard) Prepare(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, tbl *table.Table, keyCols []string, past bool) error {
	g.horizon, g.kt = "", nil
	if past {
		return nil
	}
	h, err := lakecat.SeqProp(tbl, PropErasureHorizon)
	if err != nil || h == "" {
		return err
	}
	if g.keys, err = loadErasedKeys(ctx, cat, name, g.keys); err != nil {
		return err
	}
	if g.kt, err = newKeyTypes(tbl.Schema(), keyCols); err != nil {
		return err
	}
	g.horizon = h
	return nil
}

// Active reports whether the last Prepare found an erasure horizon: only
// then is anything checked.
func (g *Guard) Active() bool { return g.horizon != "" }

// Refuses reports whether change e is of an erased key at or below its
// erasure position, and why (naming positions only). Only changes at or
// below the mirror's erasure horizon are hashed. The key is typed like
// Prepare types it (the key columns alone, so a change whose other values
// do not fit is still recognised); a key that does not type is taken as
// decoded.
func (g *Guard) Refuses(e *cdc.Event) (bool, string) {
	if g.horizon == "" || e.Seq > g.horizon || !(e.Op.IsUpsert() || e.Op == cdc.OpDelete) {
		return false, ""
	}
	k := e.Key
	if img := e.Image(); img != nil {
		if tk, err := g.kt.typedKey(img); err == nil {
			k = tk
		}
	}
	return g.keys.refuses(k, e.Seq)
}

// RefusesKeyAt reports whether key k, named by a change at position at
// (the other key of a key change: a create's old key, a delete's new
// key), is erased at or below its erasure position; false for "".
func (g *Guard) RefusesKeyAt(k cdc.Key, at cdc.Seq) bool {
	if g.horizon == "" || k == "" || at > g.horizon {
		return false
	}
	refuse, _ := g.keys.refuses(k, at)
	return refuse
}

// Erased reports whether the key of row (a row image of the key columns),
// typed like Prepare types keys, was ever erased; false when it does not
// type or the last Prepare found no erasure horizon.
func (g *Guard) Erased(row *cdc.Row) bool {
	if g.horizon == "" {
		return false
	}
	k, err := g.kt.typedKey(row)
	return err == nil && g.keys.holds(k)
}

// keyTypes types the key columns of row images to a mirror's columns, as
// the mirror writer types keys before it stores them.
type keyTypes struct {
	keyCols []string
	types   map[string]cdc.Type // the mirror's source columns (lakecat.SourceColumns)
}

// newKeyTypes reads the source column types of the mirror schema sc.
// Errors: lakecat.SystemColumnsOf's and lakecat.SourceColumns'.
func newKeyTypes(sc *iceberg.Schema, keyCols []string) (*keyTypes, error) {
	sys, err := lakecat.SystemColumnsOf(sc)
	if err != nil {
		return nil, err
	}
	cols, err := lakecat.SourceColumns(sc, sys)
	if err != nil {
		return nil, err
	}
	kt := &keyTypes{keyCols: keyCols, types: make(map[string]cdc.Type, len(cols))}
	for _, c := range cols {
		kt.types[c.Name] = c.Type
	}
	return kt, nil
}

// typedKey is the key of img with only its key columns typed to the
// table's columns. Errors: a key value that does not fit.
func (kt *keyTypes) typedKey(img *cdc.Row) (cdc.Key, error) {
	vals := make([]cdc.Value, len(kt.keyCols))
	for i, c := range kt.keyCols {
		v, ok := img.Get(c)
		if !ok {
			return "", fmt.Errorf("key column %q is missing", c)
		}
		t, ok := kt.types[c]
		if !ok {
			return "", fmt.Errorf("key column %q is not in the table", c)
		}
		tv, err := typing.Coerce(v, t)
		if err != nil {
			return "", err
		}
		vals[i] = tv
	}
	b, err := cdc.EncodeKey(nil, vals...)
	return cdc.Key(b), err
}

// TypedKey is the key of a row image (as decoded from a Kafka record key
// or value) typed to mirror's key columns, as the pipeline stores it.
// Errors: a key column missing, a value that does not fit, an
// unsupported column type.
func TypedKey(mirror *table.Table, keyCols []string, img *cdc.Row) (cdc.Key, error) {
	kt, err := newKeyTypes(mirror.Schema(), keyCols)
	if err != nil {
		return "", err
	}
	return kt.typedKey(img)
}
