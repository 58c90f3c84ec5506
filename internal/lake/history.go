package lake

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/merge"
)

// Properties of the history table.
const (
	PropPendingRebuild  = "lakemirror.pending-rebuild" // JSON array of hex keys whose history awaits a rebuild from bronze
	PropHistoryTracked  = "lakemirror.history.tracked" // JSON array of tracked columns; absent = all
	PropHistoryCollapse = "lakemirror.history.collapse-tx"
)

// HistoryResult counts what one batch did to the history table.
type HistoryResult struct {
	BatchID          string `json:"batch_id"`
	BatchSeq         int64  `json:"batch_seq"`
	AlreadyCommitted bool   `json:"already_committed,omitempty"`
	Keys             int    `json:"keys"`             // keys with changes in the batch
	Opened           int    `json:"opened"`           // versions opened
	Rewritten        int    `json:"rewritten"`        // stored versions closed or updated in place
	Duplicates       int    `json:"duplicates"`       // re-delivered changes the history already holds
	Late             int    `json:"late"`             // keys with a late change, left for the rebuild step
	Pending          int    `json:"pending"`          // keys awaiting a rebuild after this batch
	RowsWritten      int    `json:"rows_written"`     // history rows written
	PositionDeletes  int    `json:"position_deletes"` // stored rows removed
	SnapshotID       int64  `json:"snapshot_id,omitempty"`
}

// HistoryWriter applies batches to one history table (SCD type 2) and
// keeps its index between batches. Not safe for concurrent use.
type HistoryWriter struct {
	cat     catalog.Catalog
	name    TableName
	keyCols []string
	opts    merge.HistoryOptions
	index   *HistoryIndex
	now     func() time.Time
}

// NewHistoryWriter returns a writer for name's history table.
func NewHistoryWriter(cat catalog.Catalog, name TableName, keyCols []string, opts merge.HistoryOptions) *HistoryWriter {
	return &HistoryWriter{cat: cat, name: name, keyCols: keyCols, opts: opts, now: time.Now}
}

// Ensure creates the history table from the mirror's columns when it does
// not exist, and adds to it any column the mirror gained since. The
// tracking options are recorded in its properties.
func (w *HistoryWriter) Ensure(ctx context.Context, mirror *table.Table) (*table.Table, error) {
	keys, _ := json.Marshal(w.keyCols)
	props := map[string]string{PropKeyColumns: string(keys), PropHistoryCollapse: fmt.Sprint(w.opts.CollapseTx)}
	if w.opts.Tracked != nil {
		t, _ := json.Marshal(w.opts.Tracked)
		props[PropHistoryTracked] = string(t)
	}
	tbl, _, err := loadOrCreate(ctx, w.cat, w.name.namespace(), w.name.History(),
		func() (*iceberg.Schema, error) { return HistorySchema(mirror.Schema(), w.keyCols) }, tableProperties(props))
	if err != nil {
		return nil, err
	}
	var missing, widened []iceberg.NestedField
	for _, f := range mirror.Schema().Fields() {
		if isSystemColumn(f.Name) {
			continue
		}
		h, ok := tbl.Schema().FindFieldByName(f.Name)
		if !ok {
			missing = append(missing, f)
			continue
		}
		if !h.Type.Equals(f.Type) {
			widened = append(widened, f) // the mirror's widening (int → long, ...), followed here
		}
	}
	if len(missing) == 0 && len(widened) == 0 {
		return tbl, nil
	}
	tx := tbl.NewTransaction()
	up := tx.UpdateSchema(true, false)
	for _, f := range missing {
		up = up.AddColumn([]string{f.Name}, f.Type, f.Doc, false, nil)
	}
	for _, f := range widened {
		up = up.UpdateColumn([]string{f.Name}, table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Val: f.Type, Valid: true}})
	}
	if err := up.Commit(); err != nil {
		return nil, fmt.Errorf("lake: add history columns: %w", err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("lake: commit history columns: %w", err)
	}
	return tbl, nil
}

// Apply extends the history with one batch's prepared row changes, in one
// commit carrying the batch's bookkeeping. preSeq holds, per key of the
// batch, the mirror's `_seq` before the batch (the highest position
// applied to the key; absent for new keys); known is false when those are
// unknown (the mirror had committed the batch already), and then every
// key of the batch is treated as late.
//
// A key whose changes all follow preSeq is extended in order from its
// stored latest version, reading only that row. A key with a change at or
// below preSeq that the history does not show (it neither opened nor
// closed a version) is late: it is added to the table's pending-rebuild
// set, which RebuildFromEvents resolves from bronze. Keys already pending
// stay pending. Errors: catalog, file IO and commit conflicts (retryable).
func (w *HistoryWriter) Apply(ctx context.Context, b Batch, events []*cdc.Event, preSeq map[cdc.Key]cdc.Seq, known bool) (HistoryResult, error) {
	res := HistoryResult{BatchID: b.ID, BatchSeq: b.Seq}
	tbl, err := LoadTable(ctx, w.cat, w.name.History())
	if err != nil || tbl == nil {
		return res, err
	}
	if cp, err := ReadCheckpoint(tbl); err != nil {
		return res, err
	} else if cp.BatchSeq >= b.Seq && b.Load == nil {
		recordedResult(cp, b, &res)
		res.AlreadyCommitted = true
		return res, nil
	}
	if err := w.ensureIndex(ctx, tbl); err != nil {
		return res, err
	}
	sh, err := shapeOf(tbl.Schema(), w.keyCols)
	if err != nil {
		return res, err
	}
	pending, err := readPending(tbl)
	if err != nil {
		return res, err
	}
	groups := merge.GroupByKey(rowChanges(events))
	res.Keys = len(groups)
	type job struct {
		key    cdc.Key
		prev   *histRow
		events []*cdc.Event
	}
	var jobs []job
	for _, g := range groups {
		if pending[g.Key] || !known {
			if !pending[g.Key] {
				res.Late++
			}
			pending[g.Key] = true
			continue
		}
		pre, late := preSeq[g.Key], false
		var fresh []*cdc.Event
		for _, e := range g.Events {
			switch {
			case pre == "" || e.Seq > pre:
				fresh = append(fresh, e)
			case w.index.knows(g.Key, e.Seq):
				res.Duplicates++
			default:
				late = true
			}
		}
		if late {
			pending[g.Key] = true
			res.Late++
			continue
		}
		if len(fresh) == 0 {
			continue
		}
		j := job{key: g.Key, events: fresh}
		if vs := w.index.Versions(g.Key); len(vs) > 0 {
			j.prev = &vs[len(vs)-1]
		}
		jobs = append(jobs, j)
	}
	var prevRows []cdc.Key
	for _, j := range jobs {
		if j.prev != nil {
			prevRows = append(prevRows, j.key)
		}
	}
	values, err := w.readVersionValues(ctx, tbl, sh, prevRows)
	if err != nil {
		return res, err
	}
	var writes []keyedVersion
	var removed []keyedRow
	for _, j := range jobs {
		var prev *merge.Version
		if j.prev != nil {
			prev = j.prev.version(values[j.key])
		}
		out, replaces := merge.Replay(prev, j.events, w.opts)
		if replaces {
			removed = append(removed, keyedRow{key: j.key, row: *j.prev})
			res.Rewritten++
		}
		for _, v := range out {
			if prev == nil || v.Seq != prev.Seq {
				res.Opened++
			}
			writes = append(writes, keyedVersion{key: j.key, v: v})
		}
	}
	res.Pending = len(pending)
	props, err := batchProps(b, nil)
	if err != nil {
		return res, err
	}
	result := func() (string, error) {
		r, err := json.Marshal(res)
		return string(r), err
	}
	if b.Load != nil {
		result = nil // a load chunk records its cursor, not a batch result
	}
	if err := w.commit(ctx, tbl, sh, writes, removed, props, pending, result, &res.RowsWritten, &res.PositionDeletes, &res.SnapshotID); err != nil {
		return res, err
	}
	return res, nil
}
