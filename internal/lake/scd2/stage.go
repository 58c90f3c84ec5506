package scd2

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"slices"

	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/localstate"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// run stages, writes and commits one batch.
func (w *HistoryWriter) run(ctx context.Context, b payload.Batch, plan *tablestate.Plan) (payload.HistoryResult, error) {
	s, err := w.stage(ctx, b, plan)
	if err != nil {
		return s.res, err
	}
	if err := s.Write(ctx); err != nil {
		return s.res, err
	}
	return s.Commit(ctx)
}

// HistoryStage is one batch's history changes: begun by StageAfter (the
// table loaded, the local state checked), decided and written to files by
// Write (reading each changed key's open version from the local state log,
// so it can run while the batch's bronze and mirror files are written)
// and published by Commit.
type HistoryStage struct {
	w       *HistoryWriter
	b       payload.Batch
	res     payload.HistoryResult
	done    bool // nothing to write or commit: res is final
	tbl     *table.Table
	sh      *tablestate.Shape
	plan    *tablestate.Plan
	pending map[cdc.Key]bool
	writes  []tablestate.KeyedVersion
	removed []parquetio.RowLoc
	changes []tablestate.KeyChange
	files   historyWritten
	written bool
}

// StageAfter begins batch b's history stage after the same batch's
// mirror stage on this writer's State, whose plan (MirrorStage.PlanFor)
// it reuses (nil: every key's position before the batch is then unknown
// and every key is late). Errors: catalog and local state failures, and
// tablestate.ErrStateMoved when checking the history table rebuilt the state the
// plan was decided on.
func (w *HistoryWriter) StageAfter(ctx context.Context, b payload.Batch, events []*cdc.Event, plan *tablestate.Plan) (*HistoryStage, error) {
	w.state.Settle()
	if plan == nil || plan.Batch != b.Seq || !plan.SameEvents(events) {
		plan = tablestate.NewPlan(b.Seq, events)
	}
	return w.stage(ctx, b, plan)
}

func (w *HistoryWriter) stage(ctx context.Context, b payload.Batch, plan *tablestate.Plan) (*HistoryStage, error) {
	s := &HistoryStage{w: w, b: b, plan: plan, res: payload.HistoryResult{BatchID: b.ID, BatchSeq: b.Seq}}
	tbl, err := lakecat.LoadTable(ctx, w.cat, w.name.History())
	if err != nil {
		return s, err
	}
	if tbl == nil {
		s.done = true
		return s, nil
	}
	if cp, err := lakecat.ReadCheckpoint(tbl); err != nil {
		return s, err
	} else if cp.BatchSeq >= b.Seq && b.Load == nil {
		lakecat.RecordedResult(cp, b, &s.res)
		s.res.AlreadyCommitted = true
		s.done = true
		return s, nil
	}
	st := w.state
	resolved := plan.Ix != nil
	if err := st.EnsureHistory(ctx, tbl); err != nil {
		return s, err
	}
	if resolved && plan.Ix != st.Ix {
		return s, tablestate.ErrStateMoved
	}
	if err := plan.Resolve(st.Ix); err != nil {
		st.Invalidate()
		return s, err
	}
	if s.sh, err = tablestate.ShapeOf(tbl.Schema(), w.keyCols); err != nil {
		return s, err
	}
	if s.pending, err = lakecat.ReadPending(tbl); err != nil {
		return s, err
	}
	s.tbl = tbl
	return s, nil
}

// Write decides each key's new versions (merge.Replay from its open
// version, read from the local state log) and writes them as one data
// file and the stored rows they replace as one position-delete file. A
// key with a change at or below its position before the batch that the
// history does not show is late: it joins the pending-rebuild set.
// Errors: local state and file IO failures.
func (s *HistoryStage) Write(ctx context.Context) error {
	if s.done || s.written {
		return nil
	}
	w, st, plan, res := s.w, s.w.state, s.plan, &s.res
	res.Keys = len(plan.Groups)
	// the versions go to the file in chunks, encoded while the next keys
	// are decided (file.go)
	hf := newHistoryFile(ctx, s.tbl, s.sh)
	defer hf.abort() // a no-op once finished
	// sized for the usual case, no growing by copying: a key writes at
	// most one version per event plus its rewritten open version (a woven
	// late key may write more), changes and removes one each
	rows := len(plan.Groups)
	for _, g := range plan.Groups {
		rows += len(g.Events)
	}
	s.writes = slices.Grow(s.writes, rows)
	s.changes = slices.Grow(s.changes, len(plan.Groups))
	s.removed = slices.Grow(s.removed, len(plan.Groups))
	// a key's whole past can be replayed: from bronze, or from the log
	// when the table has no bronze
	rebuildable := !w.withoutBronze || st.EventsComplete()
	for i, g := range plan.Groups {
		if n := len(s.writes); n-hf.queued >= historyChunkRows {
			hf.queue(s.writes[hf.queued:n:n])
		}
		if plan.Known && plan.Woven != nil && plan.Woven[i] != nil { // late, woven inline (weave.go)
			if err := s.weave(i, g.Key, plan.Woven[i]); err != nil {
				return err
			}
			continue
		}
		if s.pending[g.Key] || !plan.Known || plan.BinlogSuspect[g.Key] || plan.Refill[g.Key] || plan.Rebuild[g.Key] {
			if !s.pending[g.Key] {
				res.Late++
			}
			s.pending[g.Key] = true
			continue
		}
		pre, late := plan.Pre[i], false
		var lateBinlog *cdc.Event // a late Kafka-delivered MySQL change
		var fresh []*cdc.Event
		var live []localstate.HistRow
		liveRead := false
		for _, e := range g.Events {
			if pre == "" || e.Seq > pre {
				fresh = append(fresh, e)
				continue
			}
			if !liveRead {
				var err error
				if live, err = st.LiveRows(g.Key); err != nil {
					return err
				}
				liveRead = true
			}
			switch seen, err := seenBefore(st, g.Key, e, live, g.Events); {
			case err != nil:
				return err
			case seen:
				res.Duplicates++
			default:
				late = true
				if lateBinlog == nil && e.Seq < pre && merge.BinlogDelivered(e) {
					lateBinlog = e
				}
			}
		}
		if late {
			res.Late++
			if rebuildable {
				s.pending[g.Key] = true
				continue
			}
			if lateBinlog != nil { // nothing to tell a binlog restart from a redelivery (merge/binlog.go)
				return &tablestate.BinlogRestartedError{Table: w.name.String(), Key: hex.EncodeToString([]byte(g.Key)), Change: lateBinlog,
					Above: &cdc.Event{Key: g.Key, Seq: pre}, Ambiguous: true}
			}
			res.Unwoven++ // the batch's changes above the key's position still apply
		}
		if len(fresh) == 0 {
			continue
		}
		open, openVals, err := st.OpenVersion(plan.Entries[i], g.Key)
		if err != nil {
			return err
		}
		if open != nil && rebuildable && merge.NeedsReplayFromStart(open.Seq, fresh) {
			// the open version may be a source snapshot re-read's
			// (merge/reread.go): replayed from all changes, like a late key
			s.pending[g.Key] = true
			res.Late++
			continue
		}
		var prev *merge.Version
		var prevLoc parquetio.RowLoc
		switch {
		case open != nil:
			prev, prevLoc = open.Version(tablestate.AlignRow(openVals, s.sh.Names)), parquetio.RowLoc{File: open.File, Pos: open.Pos}
		case needsPrevValues(fresh):
			// a TOAST placeholder after the key's last version closed: its
			// value is that version's, read from the table (rare)
			if prev, prevLoc, err = w.lastClosedVersion(ctx, s.tbl, s.sh, g.Key); err != nil {
				return err
			}
		}
		out, replaces := merge.Replay(prev, fresh, w.opts)
		c := tablestate.KeyChange{Group: i, First: len(s.writes), N: len(out), OpenChanged: replaces || len(out) > 0}
		if replaces {
			s.removed = append(s.removed, prevLoc)
			loc := prevLoc
			c.Removed = &loc
			res.Rewritten++
		}
		for _, v := range out {
			if prev == nil || v.Seq != prev.Seq {
				res.Opened++
			}
			s.writes = append(s.writes, tablestate.KeyedVersion{Key: g.Key, V: v})
		}
		s.changes = append(s.changes, c)
	}
	for k := range plan.Refill { // key-change creates to fill again (mirror_keychange.go)
		if rebuildable && plan.Known {
			s.pending[k] = true
		}
	}
	for k := range plan.Rebuild { // also those listed without a change in the batch (refills)
		if rebuildable {
			s.pending[k] = true
		}
	}
	res.Pending = len(s.pending)
	n := len(s.writes)
	hf.queue(s.writes[hf.queued:n:n])
	var err error
	if s.files, err = w.finishFiles(ctx, s.tbl, hf, s.removed); err != nil {
		return err
	}
	res.RowsWritten, res.PositionDeletes = len(s.writes), len(s.removed)
	s.written = true
	return nil
}

// seenBefore reports whether change e of key k, at or below the key's
// position, was seen before: the history holds its version (knows), or
// it is a PostgreSQL source snapshot re-read (merge.DropsReread) of the
// key's changes, all of which the local state log holds, e among them: a
// re-read opens no version, so only the log tells a redelivered one, and
// replaying the key would change nothing. batch is the key's changes in
// the batch. Errors: local state log failures.
func seenBefore(st *tablestate.State, k cdc.Key, e *cdc.Event, live []localstate.HistRow, batch []*cdc.Event) (bool, error) {
	if knows(live, e.Seq) {
		return true, nil
	}
	if _, read := cdc.PostgresReadLSN(e.Seq); !read || e.Op != cdc.OpRead || !st.EventsComplete() {
		return false, nil
	}
	past, err := st.KeyEvents(k)
	if err != nil {
		return false, err
	}
	logged := slices.ContainsFunc(past, func(p *cdc.Event) bool { return p.Seq == e.Seq })
	return logged && merge.DropsReread(append(past, batch...), e), nil
}

// weave replaces the live history rows of late key k (group i of the
// plan) with the replay of all its changes (full, from the mirror stage's
// weave), unless they already are those versions; the key leaves the
// pending-rebuild set. Errors: local state log failures.
func (s *HistoryStage) weave(i int, k cdc.Key, full *merge.Group) error {
	res := &s.res
	res.Late++
	res.Woven++
	delete(s.pending, k)
	vs, _ := merge.Replay(nil, full.Events, s.w.opts)
	stored, err := s.w.state.LiveRows(k)
	if err != nil {
		return err
	}
	if sameVersions(stored, vs, s.w.opts) {
		return nil
	}
	for _, r := range stored {
		s.removed = append(s.removed, parquetio.RowLoc{File: r.File, Pos: r.Pos})
	}
	res.Rewritten += len(stored)
	s.changes = append(s.changes, tablestate.KeyChange{Group: i, First: len(s.writes), N: len(vs), OpenChanged: true, Reset: true})
	for _, v := range vs {
		s.writes = append(s.writes, tablestate.KeyedVersion{Key: k, V: v})
	}
	res.Opened += max(0, len(vs)-len(stored))
	return nil
}

// Commit publishes the written files with the batch's bookkeeping and the
// pending-rebuild set in one commit, then starts recording each key's row
// changes, new mirror values (when the mirror writer of this State
// committed the batch) and history changes in the local state log, in the
// background (State.RecordAsync). Errors: commit failures, including
// conflicts (retryable: the state is rebuilt next time).
func (s *HistoryStage) Commit(ctx context.Context) (payload.HistoryResult, error) {
	if s.done {
		return s.res, nil
	}
	if err := s.Write(ctx); err != nil {
		return s.res, err
	}
	w, st := s.w, s.w.state
	props, err := lakecat.BatchProps(s.b, nil)
	if err != nil {
		return s.res, err
	}
	props[PropPendingRebuild] = lakecat.PendingJSON(s.pending)
	if s.b.Load == nil { // a load chunk records its cursor, not a batch result
		r, err := json.Marshal(s.res)
		if err != nil {
			return s.res, err
		}
		props[lakecat.PropBatchResult] = string(r)
	}
	locs, err := w.commitFiles(ctx, s.tbl, s.files, props, &s.res.SnapshotID)
	if err != nil {
		return s.res, err
	}
	s.done = true
	withMirror := st.Pending == s.plan && s.plan.Mirror != nil && s.plan.Ix == st.Ix
	if st.Pending == s.plan {
		st.Pending = nil
	}
	if !withMirror {
		s.plan.Mirror = nil
	}
	st.RecordAsync(s.plan, &tablestate.HistChanges{Locs: locs, Writes: s.writes, Changes: s.changes}, withMirror)
	return s.res, nil
}
