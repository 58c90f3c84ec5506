package lake

import (
	"context"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/localstate"
	"github.com/lakemirror/lakemirror/internal/lake/scd2"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
	"github.com/lakemirror/lakemirror/internal/merge"
)

// Apply writes one batch's row changes (ops c, u, d, r; events prepared
// by Prepare) to the mirror as one row-delta commit: new row versions in
// one data file and the rows they replace as position deletes, with the
// batch's bookkeeping in the snapshot summary and the table properties. A
// batch whose sequence number the table already holds is not written
// again: Apply returns the recorded result with AlreadyCommitted set and
// the recorded end offsets. Apply is Stage, then Write and Commit of the
// stage.
//
// Errors: catalog and file IO failures (retryable) and commit conflicts
// when another writer changed the table (retryable: the index is rebuilt
// on the next call).
func (w *MirrorWriter) Apply(ctx context.Context, b Batch, events []*cdc.Event) (MirrorResult, Offsets, error) {
	w.state.Settle()
	s, err := w.Stage(ctx, b, events)
	if err != nil {
		return s.res, nil, err
	}
	if err := s.Write(ctx); err != nil {
		return s.res, nil, err
	}
	return s.Commit(ctx)
}

// MirrorStage is one batch's mirror changes: decided by Stage (the
// sequence guard and the merge rules, against the key index), written to
// files by Write (which only reads the index and so can run while the
// batch's bronze and history files are written) and published by Commit.
type MirrorStage struct {
	w        *MirrorWriter
	b        Batch
	res      MirrorResult
	done     bool    // nothing to write: res and offsets are final
	offsets  Offsets // when done
	tbl      *table.Table
	sh       *tablestate.Shape
	plan     *tablestate.Plan
	outs     []merge.Outcome
	outGroup []int    // the plan group of each outcome
	entries  []uint32 // the index entry of each outcome
	stored   map[cdc.Key]*cdc.Row
	pending  map[cdc.Key]bool // the mirror's pending-rebuild set after the batch (nil: kept by the history)
	props    func() (iceberg.Properties, error)
	files    mirrorFiles
	written  bool
}

// Stage decides what batch b does to the mirror: it loads the table,
// recognises a batch already committed, makes the local state reflect the
// table, groups the events by key and folds each key's changes onto its
// stored guard state. Errors: catalog and local state failures.
func (w *MirrorWriter) Stage(ctx context.Context, b Batch, events []*cdc.Event) (*MirrorStage, error) {
	w.state.Settle()
	s := &MirrorStage{w: w, b: b, res: MirrorResult{BatchID: b.ID, BatchSeq: b.Seq}}
	w.plan = nil
	tbl, err := lakecat.LoadTable(ctx, w.cat, w.name.Mirror())
	if err != nil {
		return s, err
	}
	if tbl == nil {
		s.done, s.offsets = true, b.EndOffsets // no mirror yet and nothing to create it from: bookkeeping stays in bronze
		return s, nil
	}
	if cp, err := ReadCheckpoint(tbl); err != nil {
		return s, err
	} else if cp.BatchSeq >= b.Seq && b.Load == nil {
		w.plan = tablestate.NewPlan(b.Seq, events) // positions before the batch unknown
		s.done, s.res, s.offsets = true, lakecat.RecordedMirrorResult(cp, b), cp.EndOffsets
		if cp.BatchSeq == b.Seq && !w.ownsPending() {
			// the history's commit of the batch retried (a worker killed
			// after the mirror's): the keys the mirror found late are
			// known by name, every other key's changes follow the
			// history's versions
			pre, rebuild, ok, err := lakecat.ReadBatchLateKeys(tbl, b.Seq)
			if err != nil {
				return s, err
			}
			if ok {
				p := tablestate.NewPlan(b.Seq, events)
				p.Pre = make([]cdc.Seq, len(p.Groups))
				for i, g := range p.Groups {
					p.Pre[i] = pre[g.Key]
				}
				p.Known, p.Rebuild, s.plan = true, rebuild, p
			}
		}
		return s, nil
	}
	checked := w.prepared
	w.prepared = nil
	if checked != nil && *checked != purgeFence(tbl) {
		return s, ErrHorizonMoved // a purge committed after Prepare checked the batch against the horizon
	}
	if s.sh, err = tablestate.ShapeOf(tbl.Schema(), w.keyCols); err != nil {
		return s, err
	}
	if err := w.ensureIndex(ctx, tbl); err != nil {
		return s, err
	}
	s.tbl = tbl
	ix := w.state.Ix
	// a table whose commits predate PropAppliedPosition: start it at the
	// highest position its mirror rows hold (one pass over the index)
	applied := tbl.Properties()[PropAppliedPosition]
	if applied == "" {
		applied = ix.MaxSeq().Hex()
	}
	appliedSeq, err := cdc.ParseSeqHex(applied)
	if err != nil {
		appliedSeq = ix.MaxSeq() // a malformed property: the highest position the index holds
	}
	servers, newServers, err := sourceServers(lakecat.IdentString(tbl.Identifier()), tbl.Properties()[PropSourceServers], appliedSeq, events)
	if err != nil {
		return s, err
	}
	// keys whose MySQL changes in the batch go back in position
	// (merge/binlog.go): a restart, or a redelivery of a change from
	// before the batch, which only the key's past changes tell
	suspects := binlogSuspects(events)
	plan := tablestate.NewPlan(b.Seq, events)
	if err := plan.Resolve(ix); err != nil {
		w.state.Invalidate()
		return s, err
	}
	plan.Pre = make([]cdc.Seq, len(plan.Groups))
	plan.Known = true
	plan.WovenChecked = w.state.EventsLogged()
	s.plan = plan
	res := &s.res
	res.Keys = len(plan.Groups)
	s.outs = make([]merge.Outcome, 0, len(plan.Groups))
	s.outGroup = make([]int, 0, len(plan.Groups))
	if w.ownsPending() {
		if s.pending, err = lakecat.ReadPending(tbl); err != nil {
			return s, err
		}
	}
	// key-change creates the local state could not fill exactly are
	// rebuilt from bronze with their old keys' changes, and those applied
	// before their old key's changes below them arrived are rebuilt once
	// such a change comes (fillFromOldKeys); without bronze, only from a
	// log that holds every change (else they keep the values they got:
	// docs/design.md, Known gaps)
	refill := w.refill
	heirs, done := w.state.HeirsToRefill(plan.Groups, w.keyCols)
	plan.HeirsDone = done
	for _, k := range heirs {
		if refill == nil {
			refill = map[cdc.Key]bool{}
		}
		refill[k] = true
	}
	plan.LogRaw = w.rawAfter
	// the log leaves such a create out (Plan.loggedEvents): the
	// key's past is read from bronze again
	leaveOut := func(k cdc.Key) {
		if plan.NoLog == nil {
			plan.NoLog = map[cdc.Key]bool{}
		}
		plan.NoLog[k] = true
		delete(w.state.KeysLogged, k)
	}
	for _, k := range w.unlogged {
		leaveOut(k)
	}
	if len(refill) > 0 && (!w.withoutBronze || w.state.EventsLogged()) {
		plan.Refill = refill // the pending sets take them after the keys' own changes (weave drops a key woven)
		if !w.state.EventsLogged() {
			for k := range refill {
				leaveOut(k)
			}
		}
	}
	w.refill, w.rawAfter, w.unlogged = nil, nil, nil
	res.UnknownPlaceholders += w.unknownFromOldKeys
	w.unknownFromOldKeys = 0
	// new keys of key changes whose old keys' changes below them came
	// late in this batch (lateHeirs), refilled like plan.refill's
	var lateHeirs map[cdc.Key]bool
	// with a history: the batch's late keys and their `_seq` before it,
	// and the keys the history rebuilds (lakecat.PropBatchLateKeys)
	var late map[cdc.Key]cdc.Seq
	rebuild := map[cdc.Key]bool{}
	if !w.ownsPending() {
		late = map[cdc.Key]cdc.Seq{}
	}
	for i, g := range plan.Groups {
		res.Events += len(g.Events) + g.Duplicates
		st := ix.StoredAt(plan.Entries[i])
		if st.Found {
			plan.Pre[i] = st.Seq
		}
		for _, e := range g.Events { // the events Fold applies: those above the stored position
			if !st.Found || e.Seq > st.Seq {
				if res.AppliedOps == nil {
					res.AppliedOps = map[string]int{}
				}
				res.AppliedOps[e.Op.String()]++
			} else if late != nil { // late or redelivered: the history checks it against its versions
				late[g.Key] = st.Seq
			}
		}
		o := merge.Fold(st, g, w.keyCols)
		res.KeysMovedOntoLive += merge.MovedOntoLive(st, g)
		res.Applied += o.Applied
		res.Stale += o.Stale
		res.Duplicates += o.Duplicates
		if r, ok := suspects[g.Key]; ok {
			switch {
			case plan.WovenChecked:
				if err := w.checkBinlogPast(g.Key, r.raw, s.sh); err != nil {
					return s, err
				}
			case w.withoutBronze: // no past to tell a restart from a redelivery
				return s, w.binlogRestarted(r.BinlogRestart, true)
			case s.pending != nil: // rebuilt from bronze (not checked there: docs/design.md, Known gaps)
				s.pending[g.Key] = true
			default: // the history stage puts the key in its pending set
				if plan.BinlogSuspect == nil {
					plan.BinlogSuspect = map[cdc.Key]bool{}
				}
				plan.BinlogSuspect[g.Key] = true
			}
		}
		if o.Stale == 0 && o.Duplicates > g.Duplicates && plan.WovenChecked && binlogAt(g, st.Seq) {
			// a MySQL change at the stored position: a redelivery, or a
			// restarted binlog reusing it (merge/binlog.go)
			if err := w.checkBinlogPast(g.Key, g.Events, s.sh); err != nil {
				return s, err
			}
		}
		switch {
		case o.Stale > 0 && plan.WovenChecked: // late or replayed: woven inline when late (weave.go)
			full, wo, err := w.weave(g, st, o, s.sh)
			if err != nil {
				return s, err
			}
			if full != nil {
				if plan.Woven == nil {
					plan.Woven = make([]*merge.Group, len(plan.Groups))
				}
				plan.Woven[i], o = full, wo
				res.Woven++
				for _, k := range w.lateHeirs(full.Events, g.Events, st.Seq) {
					if lateHeirs == nil {
						lateHeirs = map[cdc.Key]bool{}
					}
					lateHeirs[k] = true
				}
				if s.pending != nil {
					delete(s.pending, g.Key)
				}
			}
		case o.Stale > 0 && s.pending != nil: // late or replayed: refolded by RebuildKeys (mirror_pending.go)
			if w.withoutBronze {
				if e := binlogBelow(g, st.Seq); e != nil { // RebuildKeys has no past to tell a restart from a redelivery
					return s, w.binlogRestarted(merge.BinlogRestart{Change: e, Above: &cdc.Event{Key: g.Key, Seq: st.Seq}}, true)
				}
			}
			s.pending[g.Key] = true
		}
		if o.Changed {
			res.Collapsed += o.Applied - 1
			s.outs = append(s.outs, o)
			s.outGroup = append(s.outGroup, i)
		}
	}
	for k := range lateHeirs { // woven: the log holds every change (weave.go)
		if plan.Refill == nil {
			plan.Refill = map[cdc.Key]bool{}
		}
		plan.Refill[k] = true
	}
	if s.pending != nil {
		for k := range plan.Refill {
			s.pending[k] = true
		}
	}
	if !w.ownsPending() {
		for k := range plan.BinlogSuspect {
			rebuild[k] = true
		}
		for k := range plan.Refill {
			rebuild[k] = true
		}
	}
	s.entries = make([]uint32, len(s.outs))
	for j, gi := range s.outGroup {
		s.entries[j] = plan.Entries[gi]
	}
	truncs, hasTruncs, err := truncatesJSON(tbl, events)
	if err != nil {
		return s, err
	}
	if s.stored, err = w.storedValuesFor(ctx, tbl, s.sh, s.outs); err != nil {
		return s, err
	}
	res.Pending = len(s.pending)
	hadPending := tbl.Properties()[scd2.PropPendingRebuild] != ""
	hadHeirs := tbl.Properties()[tablestate.PropKeyChangeHeirs] != ""
	readPos := tbl.Properties()[lakecat.PropReadPosition]
	for _, ev := range events {
		if l, ok := cdc.PostgresReadLSN(ev.Seq); ok {
			readPos = max(readPos, cdc.PostgresSeq(l, 0).Hex()) // hex of one width: text order is position order
		}
	}
	s.props = func() (iceberg.Properties, error) {
		p, err := lakecat.BatchProps(b, s.res)
		if err == nil {
			if ap := max(applied, s.res.Watermark); ap != "" {
				p[PropAppliedPosition] = ap
			}
			if readPos != "" {
				p[lakecat.PropReadPosition] = readPos
			}
			if b.Tally != nil && len(b.Tally.FetchedPast) > 0 {
				if fp, moved := lakecat.MergeFetchedPast(tbl.Properties()[lakecat.PropFetchedPast], b.Tally.FetchedPast); moved {
					p[lakecat.PropFetchedPast] = fp
				}
			}
			if b.Tally != nil && len(b.Tally.NewestTx) > 0 {
				if nt, moved := lakecat.MergeNewestTx(tbl.Properties()[lakecat.PropNewestTx], b.Tally.NewestTx); moved {
					p[lakecat.PropNewestTx] = nt
				}
			}
		}
		if err == nil && hasTruncs {
			p[PropTruncates] = truncs
		}
		if err == nil && newServers {
			p[PropSourceServers] = servers
		}
		if err == nil && (len(s.pending) > 0 || hadPending) {
			p[scd2.PropPendingRebuild] = lakecat.PendingJSON(s.pending)
		}
		if err == nil && !w.ownsPending() {
			p[lakecat.PropBatchLateKeys] = lakecat.BatchLateKeysJSON(b.Seq, late, rebuild)
		}
		if err == nil && (len(w.state.Heirs) > 0 || hadHeirs) {
			p[tablestate.PropKeyChangeHeirs] = tablestate.HeirsJSON(w.state.Heirs, plan.HeirsDone)
		}
		return p, err
	}
	return s, nil
}

// Write writes the stage's data and position-delete files. Errors: file
// IO failures (retryable).
func (s *MirrorStage) Write(ctx context.Context) error {
	if s.done || s.written {
		return nil
	}
	f, err := s.w.writeRows(ctx, s.tbl, s.sh, s.entries, s.outs, s.stored, &s.res)
	if err != nil {
		return err
	}
	s.files, s.written = f, true
	return nil
}

// Commit publishes the written files and the batch's bookkeeping in one
// commit, moves the key index and hands each key's new values to the
// history writer (or, without one, records them in the local state log).
// Errors: commit failures, including conflicts (retryable: the state is
// rebuilt next time).
func (s *MirrorStage) Commit(ctx context.Context) (MirrorResult, Offsets, error) {
	if s.done {
		return s.res, s.offsets, nil
	}
	if err := s.Write(ctx); err != nil {
		return s.res, nil, err
	}
	w := s.w
	if err := w.commitFiles(ctx, s.tbl, s.entries, s.outs, s.files, s.props, &s.res); err != nil {
		return s.res, nil, err
	}
	plan := s.plan
	w.plan = plan
	plan.Mirror = make([]*cdc.Row, len(plan.Groups))
	for j, gi := range s.outGroup {
		plan.Mirror[gi] = s.files.resolved[j]
	}
	s.done, s.offsets = true, s.b.EndOffsets
	if w.state.EventsBy == localstate.RecMirror { // no history writer: the mirror records the batch
		w.state.RecordAsync(plan, nil, true)
		return s.res, s.offsets, nil
	}
	w.state.Pending = plan // the history writer records it with its own changes
	return s.res, s.offsets, nil
}

// PlanFor is the stage's batch plan for the history writer on state st
// (HistoryWriter.StageAfter): nil when the stage is nil, has no plan, or
// is on another State or batch than b.
func (s *MirrorStage) PlanFor(st *tablestate.State, b Batch) *tablestate.Plan {
	if s == nil || s.plan == nil || s.w.state != st || s.b.Seq != b.Seq {
		return nil
	}
	return s.plan
}
