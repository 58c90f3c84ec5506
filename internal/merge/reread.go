package merge

import "github.com/lakemirror/lakemirror/internal/cdc"

// Source snapshot re-reads (docs/design.md rule 6). A PostgreSQL source
// snapshot read sits at (0, L), L the snapshot's WAL position
// (cdc.PostgresEventWords): below every streamed change, so that it never
// overrides one. A Debezium blocking snapshot taken when a key already has
// streamed changes therefore sorts before them, and replayed there it
// would open a version ahead of the key's real ones (its `_valid_from`
// the read's time, after the `_valid_to` the next change gives it). Such a
// read re-reads a state the key's changes already give, and opens no
// version, when its positions show it:
//
//   - S, the key's streamed changes written below L (cdc.PostgresWritten),
//     spans two or more transactions: the read shows the state after the
//     last of them, or, when that one was still in flight at L, after the
//     one before it (PostgreSQL row locks: a change of a row by another
//     transaction is written after the first one committed);
//   - S is one transaction whose first change of the key is a create, or
//     a direct re-snapshot's read at (P, 0) (lakemirror's own): the row
//     the read shows exists after it (in flight at L, a created row would
//     not have been read);
//   - S is one transaction and the key has an earlier read (L' < L): the
//     read shows the state the earlier one shows (when that transaction
//     was in flight at L, it was at L' too) or the transaction's.
//
// A table truncate in S was written before the read
// (cdc.PostgresReadAfterTruncate), so the row the read shows was created
// after it: S and the earlier reads count from the last such truncate on.
//
// A read with S empty precedes every change of the key and opens its
// first version. The earliest read with S one transaction that updates or
// deletes the row first is left where its position puts it: in flight at
// L, that transaction comes after the read, which then shows the only
// state before it the key has; only the clock could tell the two cases
// apart (rule 1 orders by position only). Changes without a transaction
// id count as one transaction.

// rereads reports, for each leading source snapshot read of events (one
// key's changes, ascending by Seq), whether it re-reads a state the key's
// changes give (see above); prev is the key's stored latest version's
// position ("" when none), counted as a read when it is one. It returns
// nil when no event is such a re-read; the slice has one entry per
// leading read otherwise.
func rereads(prev cdc.Seq, events []*cdc.Event) []bool {
	reads := leadingReads(events)
	if reads == 0 || reads == len(events) {
		return nil
	}
	var out []bool
	for i := range reads {
		if reread(prev, events, reads, i) {
			if out == nil {
				out = make([]bool, reads)
			}
			out[i] = true
		}
	}
	return out
}

// DropsReread reports whether the history replay of a key's changes
// (events: all of one key's changes, in any order, duplicates allowed)
// drops e, one of them, as a source snapshot re-read that opens no
// version (see rereads).
func DropsReread(events []*cdc.Event, e *cdc.Event) bool {
	if _, ok := cdc.PostgresReadLSN(e.Seq); !ok || e.Op != cdc.OpRead {
		return false
	}
	g := GroupByKey(events)
	if len(g) != 1 {
		return false
	}
	sorted := g[0].Events
	drop := rereads("", sorted)
	for i := range drop {
		if drop[i] && sorted[i].Seq == e.Seq {
			return true
		}
	}
	return false
}

// rereadSeed returns the values of the dropped re-read r that hold for the
// key's first version too (events: the key's kept changes, ascending): the
// columns no change written below r's LSN sets (a TOAST placeholder keeps
// the value), nil when such a change deletes the row or truncates the
// table (the read then shows a later row). Replay fills the first
// version's placeholders from it, as merge.Fold fills the mirror row's
// from the read sorting first.
func rereadSeed(r *cdc.Event, events []*cdc.Event) *cdc.Row {
	if r.After == nil {
		return nil
	}
	l, _ := cdc.PostgresReadLSN(r.Seq)
	set := map[string]bool{}
	for _, e := range events {
		if w, ok := cdc.PostgresWritten(e.Seq); !ok || w >= l {
			continue
		}
		if !e.Op.IsUpsert() {
			return nil
		}
		if e.After == nil {
			continue
		}
		for i, v := range e.After.Vals {
			if v.Kind != cdc.KindUnavailable {
				set[e.After.Cols.Names[i]] = true
			}
		}
	}
	var names []string
	var vals []cdc.Value
	for i, v := range r.After.Vals {
		if n := r.After.Cols.Names[i]; !set[n] {
			names, vals = append(names, n), append(vals, v)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return &cdc.Row{Cols: cdc.NewColumns(names), Vals: vals}
}

// leadingReads returns how many of events (ascending by Seq) are
// PostgreSQL source snapshot reads at (0, L) before the first other event.
func leadingReads(events []*cdc.Event) int {
	reads := 0
	for reads < len(events) && events[reads].Op == cdc.OpRead {
		if _, ok := cdc.PostgresReadLSN(events[reads].Seq); !ok {
			break
		}
		reads++
	}
	return reads
}

// reread decides for the read events[i] (one of the first reads events,
// the rest being streamed changes).
func reread(prev cdc.Seq, events []*cdc.Event, reads, i int) bool {
	l, _ := cdc.PostgresReadLSN(events[i].Seq)
	// a table truncate of S is before the read (cdc.PostgresReadAfterTruncate):
	// the row the read shows was created after it, so only S's changes
	// after the last one, and earlier reads after it, can give its state
	cut := truncatedBefore(l, events[reads:])
	var first *cdc.Event // the earliest change of S after cut
	for _, e := range events[reads:] {
		w, ok := cdc.PostgresWritten(e.Seq)
		switch {
		case !ok || w >= l || w <= cut:
		case first == nil:
			first = e
		case e.TxID != first.TxID:
			return true // two transactions
		}
	}
	switch {
	case first == nil:
		return false
	case first.Op == cdc.OpCreate, first.Op == cdc.OpRead:
		// a create, or lakemirror's own re-snapshot read at (P, 0): the
		// row exists after it
		return true
	}
	earlier := func(s cdc.Seq) bool {
		l2, ok := cdc.PostgresReadLSN(s)
		return ok && l2 < l && l2 > cut
	}
	if earlier(prev) {
		return true
	}
	for j := range i {
		if earlier(events[j].Seq) {
			return true
		}
	}
	return false
}

// truncatedBefore returns the WAL position of the last table truncate
// (per-key op t) among streamed that was written below the source snapshot
// LSN l, 0 when none.
func truncatedBefore(l uint64, streamed []*cdc.Event) uint64 {
	var cut uint64
	for _, e := range streamed {
		if w, ok := cdc.PostgresWritten(e.Seq); ok && w < l && e.Op == cdc.OpTruncate {
			cut = max(cut, w)
		}
	}
	return cut
}

// readsAfterTruncates returns events (one key's changes, ascending by
// Seq) with each leading PostgreSQL source snapshot read that was taken
// after a table truncate of the key (cdc.PostgresReadAfterTruncate) moved
// to just after the last such truncate: its position (0, L) sorts below
// the truncate, but the row it shows was created after it, so replayed
// first it would be closed by the truncate. Reads keep their order among
// themselves; events is returned as is when no read moves.
func readsAfterTruncates(events []*cdc.Event) []*cdc.Event {
	reads := leadingReads(events)
	if reads == 0 || reads == len(events) {
		return events
	}
	cuts := make([]uint64, reads)
	moved := false
	for i := range reads {
		l, _ := cdc.PostgresReadLSN(events[i].Seq)
		cuts[i] = truncatedBefore(l, events[reads:])
		moved = moved || cuts[i] > 0
	}
	if !moved {
		return events
	}
	out := make([]*cdc.Event, 0, len(events))
	for i := range reads {
		if cuts[i] == 0 {
			out = append(out, events[i])
		}
	}
	for _, e := range events[reads:] {
		out = append(out, e)
		if w, ok := cdc.PostgresWritten(e.Seq); ok && e.Op == cdc.OpTruncate {
			for i := range reads {
				if cuts[i] == w {
					out = append(out, events[i])
				}
			}
		}
	}
	return out
}

// NeedsReplayFromStart reports whether a key whose latest stored version
// was opened at open must have its history replayed from all its changes
// rather than extended by the batch's changes fresh (ascending, all above
// open): open is a PostgreSQL source snapshot read's position and a change
// of fresh was written below the read's LSN, so the read may be a re-read
// that opens no version (see rereads); extending would keep it. Only
// changes delivered out of source order, or written by a transaction in
// flight when the snapshot was taken, do this.
func NeedsReplayFromStart(open cdc.Seq, fresh []*cdc.Event) bool {
	l, ok := cdc.PostgresReadLSN(open)
	if !ok {
		return false
	}
	for _, e := range fresh {
		if w, ok := cdc.PostgresWritten(e.Seq); ok && w < l {
			return true
		}
	}
	return false
}
