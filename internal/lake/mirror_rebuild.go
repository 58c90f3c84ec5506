package lake

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
	"github.com/lakemirror/lakemirror/internal/merge"
)

// Rebuild recomputes each given key's mirror row from all its changes
// (every event ever seen for the key, from bronze, prepared like a batch)
// by folding them from an empty state, and replaces the stored row when
// it differs. This is what makes the mirror exact under late delivery
// when a stored row's values came from an earlier stored row (a delete
// without a before image, a TOAST placeholder): the sequence guard alone
// keeps such a row's position right but cannot know which values a late
// older change should have contributed. Only the keys' rows are read.
func (w *MirrorWriter) Rebuild(ctx context.Context, byKey map[cdc.Key][]*cdc.Event) (RebuildResult, error) {
	w.state.Settle()
	var res RebuildResult
	tbl, err := lakecat.LoadTable(ctx, w.cat, w.name.Mirror())
	if err != nil || tbl == nil {
		return res, err
	}
	if err := w.ensureIndex(ctx, tbl); err != nil {
		return res, err
	}
	sh, err := tablestate.ShapeOf(tbl.Schema(), w.keyCols)
	if err != nil {
		return res, err
	}
	var outs []merge.Outcome
	var found []cdc.Key
	for _, g := range merge.GroupByKey(tablestate.Flatten(byKey)) {
		o := merge.Fold(merge.Stored{}, g, w.keyCols)
		if !o.Changed {
			continue
		}
		o.Values = tablestate.AlignRow(o.Values, sh.Names) // past changes may predate a column
		res.Keys++
		if _, ok := w.state.Ix.Lookup(g.Key); ok {
			o.Replaces = true
			found = append(found, g.Key)
		}
		outs = append(outs, o)
	}
	stored, err := w.storedRows(ctx, tbl, sh, found)
	if err != nil {
		return res, err
	}
	changed := outs[:0]
	for _, o := range outs {
		e, ok := w.state.Ix.Lookup(o.Key)
		if ok && e.Seq == o.Seq && e.Deleted == o.Deleted && rowsEqualFilled(stored[o.Key], o.Values) {
			res.Unchanged++
			continue
		}
		changed = append(changed, o)
	}
	res.Changed = len(changed)
	props := func() (iceberg.Properties, error) {
		return iceberg.Properties{"lakemirror.rebuild-keys": fmt.Sprint(len(changed))}, nil
	}
	if w.ownsPending() { // the keys leave the mirror's pending set in the same commit
		pending, err := lakecat.ReadPending(tbl)
		if err != nil {
			return res, err
		}
		before := len(pending)
		for k := range byKey {
			delete(pending, k)
		}
		if len(pending) != before {
			props = func() (iceberg.Properties, error) {
				return iceberg.Properties{"lakemirror.rebuild-keys": fmt.Sprint(len(changed)), lakecat.PropPendingRebuild: lakecat.PendingJSON(pending)}, nil
			}
			if len(changed) == 0 { // a properties-only commit
				var mres MirrorResult
				return res, w.commitFiles(ctx, tbl, nil, nil, mirrorFiles{}, props, &mres)
			}
		}
	}
	if len(changed) == 0 {
		return res, nil
	}
	var mres MirrorResult
	entries := make([]uint32, len(changed))
	for i, o := range changed {
		entries[i] = w.state.Ix.EntryOf(o.Key)
	}
	resolved, err := w.commitRows(ctx, tbl, sh, entries, changed, stored, props, &mres)
	if err != nil {
		return res, err
	}
	res.RowsWritten, res.PositionDeletes, res.SnapshotID = mres.RowsWritten, mres.PositionDeletes, mres.SnapshotID
	return res, w.state.RecordMirror(w.state.BuiltAtBatch, entries, resolved)
}

// rowsEqualFilled compares a stored row with a folded one; a folded
// TOAST placeholder counts as equal (the stored value is what it means).
func rowsEqualFilled(stored, folded *cdc.Row) bool {
	if stored == nil || folded == nil {
		return stored == folded
	}
	for i, v := range folded.Vals {
		if v.Kind != cdc.KindUnavailable && v != stored.Vals[i] {
			return false
		}
	}
	return true
}
