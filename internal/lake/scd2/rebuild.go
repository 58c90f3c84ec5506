package scd2

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/localstate"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// Pending returns the keys awaiting a rebuild (nil when the history
// table does not exist).
func (w *HistoryWriter) Pending(ctx context.Context) ([]cdc.Key, error) {
	w.state.Settle()
	tbl, err := lakecat.LoadTable(ctx, w.cat, w.name.History())
	if err != nil || tbl == nil {
		return nil, err
	}
	return lakecat.PendingKeys(tbl)
}

// Rebuild replaces each given key's whole history with the history of
// all its changes (every event ever seen for the key, from the local state
// log or bronze, in any order and with duplicates; prepared like a batch),
// in one commit that also removes the keys from the pending-rebuild set
// (docs/design.md rule 6: the late path). A key whose stored versions already
// equal the rebuilt ones is left alone. The stored versions come from the
// local state: only the keys' rows are touched.
func (w *HistoryWriter) Rebuild(ctx context.Context, byKey map[cdc.Key][]*cdc.Event) (payload.TableRebuildResult, error) {
	w.state.Settle()
	var res payload.TableRebuildResult
	tbl, err := lakecat.LoadTable(ctx, w.cat, w.name.History())
	if err != nil || tbl == nil {
		return res, err
	}
	if err := w.state.EnsureHistory(ctx, tbl); err != nil {
		return res, err
	}
	sh, err := tablestate.ShapeOf(tbl.Schema(), w.keyCols)
	if err != nil {
		return res, err
	}
	pending, err := lakecat.ReadPending(tbl)
	if err != nil {
		return res, err
	}
	var writes []tablestate.KeyedVersion
	var removed []parquetio.RowLoc
	var changes []tablestate.KeyChange
	plan := &tablestate.Plan{Batch: w.state.BuiltAtBatch, Groups: merge.GroupByKey(tablestate.Flatten(byKey))}
	for gi, g := range plan.Groups {
		res.Keys++
		delete(pending, g.Key)
		vs, _ := merge.Replay(nil, g.Events, w.opts)
		stored, err := w.state.LiveRows(g.Key)
		if err != nil {
			return res, err
		}
		if sameVersions(stored, vs, w.opts) {
			res.Unchanged++
			continue
		}
		res.Changed++
		for _, r := range stored {
			removed = append(removed, parquetio.RowLoc{File: r.File, Pos: r.Pos})
		}
		changes = append(changes, tablestate.KeyChange{Group: gi, First: len(writes), N: len(vs), OpenChanged: true, Reset: true})
		for _, v := range vs {
			writes = append(writes, tablestate.KeyedVersion{Key: g.Key, V: v})
		}
	}
	for k := range byKey { // keys with no change events at all
		delete(pending, k)
	}
	props := iceberg.Properties{"lakemirror.rebuild-keys": fmt.Sprint(res.Keys)}
	locs, err := w.commit(ctx, tbl, sh, writes, removed, props, pending, nil, &res.RowsWritten, &res.PositionDeletes, &res.SnapshotID)
	if err != nil {
		return res, err
	}
	return res, w.state.RecordChanges(plan, &tablestate.HistChanges{Locs: locs, Writes: writes, Changes: changes})
}

// sameVersions compares stored rows with rebuilt versions by identity,
// interval and row hash. With tracked columns (o.Tracked) the hash covers
// only those, and a version's other values (its last change's) may differ
// at the same hash and interval: a late change of an untracked column
// inside a version. The stored rows' values are not in the local state,
// so such versions are never taken as the same (the key's versions are
// rewritten, identical ones included).
func sameVersions(stored []localstate.HistRow, vs []merge.Version, o merge.HistoryOptions) bool {
	if len(stored) != len(vs) || o.Tracked != nil {
		return false
	}
	for i, v := range vs {
		s := stored[i]
		if s.Seq != v.Seq || s.ToSeq != v.ToSeq || s.Hash != v.Hash || s.From != v.From || s.To != v.To || s.Tx != v.OpenTx {
			return false
		}
	}
	return true
}
