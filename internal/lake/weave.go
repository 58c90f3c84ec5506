package lake

import (
	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
	"github.com/lakemirror/lakemirror/internal/merge"
)

// Late keys woven inline (docs/design.md rule 6, "the late path"). A key
// whose batch holds a change older than its stored row that was never seen
// before is late: its mirror row must be the fold of all its changes and
// its history the replay of all of them. When the local state log holds
// every past change of the table (State.EventsLogged), the mirror stage
// reads the key's past changes from the log once, and both writers rebuild
// the key from them in the batch's own commits: the mirror row refolded
// (replaced only when it differs), the history's live rows replaced by the
// replayed versions (only when they differ). No pending-rebuild set, no
// RebuildKeys step, no extra commit. When the log lacks past changes (the
// state was built from tables with rows and bronze was not read yet) the
// key joins the pending-rebuild set as before and RebuildKeys reads them.

// weave decides key group g's mirror outcome when its batch holds changes
// at or below its stored position (o, the guarded fold, has Stale > 0) and
// the log holds every past change: it reads the key's past changes and
// reports whether one of g's older changes was never seen (the key is
// late). For a late key it returns every change of the key (past and
// batch, grouped; the history replays it) and the refolded outcome: the
// fold of all changes from nothing, replacing the stored row, or o itself
// when the stored row already is that fold. Changes that were seen before
// (redeliveries) leave the key not late and o as it is. Errors: local
// state log failures.
func (w *MirrorWriter) weave(g merge.Group, st merge.Stored, o merge.Outcome, sh *tablestate.Shape) (*merge.Group, merge.Outcome, error) {
	past, storedVals, err := w.state.PastChanges(g.Key, sh)
	if err != nil {
		return nil, o, err
	}
	if err := w.fillLogged(past, sh, keyChainDepth); err != nil {
		return nil, o, err
	}
	if r, ok := merge.FindBinlogRestart(append(append([]*cdc.Event(nil), past...), g.Events...)); ok {
		return nil, o, w.binlogRestarted(r, false)
	}
	seen := make(map[cdc.Seq]bool, len(past))
	for _, e := range past {
		seen[e.Seq] = true
	}
	late := false
	for _, e := range g.Events {
		if e.Seq < st.Seq && !seen[e.Seq] {
			late = true
			break
		}
	}
	if !late {
		return nil, o, nil
	}
	all := merge.GroupByKey(append(past, g.Events...)) // past first: a redelivered change keeps its recorded form
	if len(all) != 1 {
		return nil, o, nil // never: every change is the key's
	}
	full := &all[0]
	f := merge.Fold(merge.Stored{}, *full, w.keyCols)
	// past changes keep the layout they were recorded in (a column added
	// since is missing from them): the row goes into today's columns
	f.Values = tablestate.AlignRow(f.Values, sh.Names)
	if st.Found && f.Seq == st.Seq && f.Deleted == st.Deleted && rowsEqualFilled(storedVals, f.Values) {
		return full, o, nil // the stored row is the fold already (o then changes nothing)
	}
	f.Replaces = st.Found
	f.Applied, f.Stale, f.Duplicates = o.Applied, o.Stale, o.Duplicates
	return full, f, nil
}
