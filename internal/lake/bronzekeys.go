package lake

import (
	"context"
	"fmt"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
)

// LiveKeysBelow returns the mirror's live keys whose `_seq` is below seq:
// the candidates of a re-snapshot's ghost check.
func (w *MirrorWriter) LiveKeysBelow(ctx context.Context, seq cdc.Seq) ([]cdc.Key, error) {
	w.state.Settle()
	tbl, err := lakecat.LoadTable(ctx, w.cat, w.name.Mirror())
	if err != nil || tbl == nil {
		return nil, err
	}
	if err := w.ensureIndex(ctx, tbl); err != nil {
		return nil, err
	}
	var out []cdc.Key
	w.state.Ix.Each(func(k cdc.Key, e keyindex.Entry) {
		if !e.Deleted && e.Seq < seq {
			out = append(out, k)
		}
	})
	return out, nil
}

// StoredRows returns the mirror's stored values (source columns, in the
// mirror's column order) of keys, each of which must have a mirror row,
// from the local state log (the table for keys the log lacks). Errors:
// catalog and file IO failures, a key without a stored row.
func (w *MirrorWriter) StoredRows(ctx context.Context, keys []cdc.Key) (map[cdc.Key]*cdc.Row, error) {
	w.state.Settle()
	tbl, err := lakecat.LoadTable(ctx, w.cat, w.name.Mirror())
	if err != nil {
		return nil, err
	}
	if tbl == nil {
		return nil, fmt.Errorf("lake: %s: no mirror table to read stored rows from", w.name)
	}
	if err := w.ensureIndex(ctx, tbl); err != nil {
		return nil, err
	}
	sh, err := tablestate.ShapeOf(tbl.Schema(), w.keyCols)
	if err != nil {
		return nil, err
	}
	rows, err := w.storedRows(ctx, tbl, sh, keys)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if rows[k] == nil {
			return nil, fmt.Errorf("lake: %s: no stored mirror row for key %x", w.name, string(k))
		}
	}
	return rows, nil
}
