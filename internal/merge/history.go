package merge

import "github.com/lakemirror/lakemirror/internal/cdc"

// HistoryOptions configure the SCD type 2 rules of one table.
type HistoryOptions struct {
	// Tracked lists the columns whose change opens a new version; nil =
	// every column. A change to other columns only updates the current
	// version's values.
	Tracked []string
	// CollapseTx folds all changes of one source transaction into one
	// version (events with equal, non-empty TxID).
	CollapseTx bool
}

// Version is one row of the history table: the state of a key between
// two changes.
type Version struct {
	Seq    cdc.Seq  // position of the change that opened the version (its id)
	From   int64    // `_valid_from`: source commit time of that change, µs since the epoch (0 = unknown)
	ToSeq  cdc.Seq  // `_valid_to_seq`: position of the change that closed it; "" while current
	To     int64    // `_valid_to`: source commit time of that change, µs (0 = unknown or current)
	Values *cdc.Row // column values of the version
	Hash   string   // RowHash of the tracked columns
	OpenTx string   // `_source_tx`: source transaction that opened the version ("" unknown)
}

// Current reports whether the version is still open.
func (v *Version) Current() bool { return v.ToSeq == "" }

// Replay extends a key's history with changes, under docs/design.md rule 6:
// a real change (tracked values differ, by RowHash) closes the open
// version at its position and opens a new one; an update that leaves the
// tracked values unchanged opens nothing (its other values replace the
// open version's); a delete closes the open version and opens nothing; a
// create after a delete opens a version after the gap; source snapshot
// reads count as creates (but a PostgreSQL source snapshot read that
// re-reads a state the key's changes give opens nothing, reread.go); a
// per-key truncate closes the open version like a delete. TOAST
// placeholders take the previous version's value, so they never make a
// change. events must be one key's changes,
// ascending by Seq and distinct, all after prev's last change.
//
// prev is the key's latest version (open or closed) or nil for a key
// without history. Replay returns the versions to write and whether the
// stored prev row must be replaced: when prev was modified (closed, or its
// values updated in place) its new state comes first in out; when it was
// dropped (created and deleted in one collapsed transaction) it is absent.
// With prev nil and all of a key's changes, Replay builds the key's whole
// history, so history never depends on how changes were split into
// batches.
func Replay(prev *Version, events []*cdc.Event, o HistoryOptions) (out []Version, replacesPrev bool) {
	var prevSeq cdc.Seq
	if prev != nil {
		prevSeq = prev.Seq
	}
	// seed: the values of the last re-read dropped that hold for the
	// first version too, for its TOAST placeholders when it has no
	// earlier one (rereadSeed)
	var seed *cdc.Row
	if drop := rereads(prevSeq, events); drop != nil {
		kept := make([]*cdc.Event, 0, len(events))
		var last *cdc.Event
		for i, e := range events {
			if i >= len(drop) || !drop[i] {
				kept = append(kept, e)
			} else {
				last = e
			}
		}
		events = kept
		if last != nil {
			seed = rereadSeed(last, kept)
		}
	}
	events = readsAfterTruncates(events)
	prevChanged, prevDropped := false, false
	var cur *Version // the latest version, a copy we may modify
	if prev != nil {
		c := *prev
		if c.Values != nil {
			// compare by the hash of today's definition, not the stored one
			// (rows written before RowHash skipped NULLs hash differently)
			c.Hash = RowHash(c.Values, o.Tracked)
		}
		cur = &c
	}
	var opened []Version
	latest := func() *Version {
		if len(opened) > 0 {
			return &opened[len(opened)-1]
		}
		return cur
	}
	touch := func(v *Version) {
		if v == cur {
			prevChanged = true
		}
	}
	for _, e := range events {
		last := latest()
		sameTx := o.CollapseTx && e.TxID != "" && last != nil && last.OpenTx == e.TxID
		switch {
		case e.Op.IsUpsert():
			prevVals := seed
			if last != nil {
				prevVals = last.Values
			}
			vals := carryUnavailable(e.After, prevVals)
			h := RowHash(vals, o.Tracked)
			if last != nil && last.Current() && (h == last.Hash || sameTx) {
				// no new version: untracked columns, a no-op update, or a change in the same transaction
				if !rowsEqual(last.Values, vals) || last.Hash != h {
					last.Values, last.Hash = vals, h
					touch(last)
				}
				continue
			}
			if last != nil && last.Current() {
				closeAt(last, e)
				touch(last)
			}
			opened = append(opened, Version{Seq: e.Seq, From: e.SourceTs, Values: vals, Hash: h, OpenTx: e.TxID})
		case e.Op == cdc.OpDelete || e.Op == cdc.OpTruncate:
			if last == nil || !last.Current() {
				continue // nothing open: a delete of an unseen or already deleted key opens nothing
			}
			if sameTx && last.OpenTx == e.TxID { // created and deleted in one collapsed transaction: no version
				if last == cur {
					cur, prevDropped = nil, true
				} else {
					opened = opened[:len(opened)-1]
				}
				continue
			}
			closeAt(last, e)
			touch(last)
		}
	}
	if prevChanged && cur != nil {
		out = append(out, *cur)
	}
	return append(out, opened...), prevChanged || prevDropped
}

// closeAt closes version v at change e: `_valid_to_seq` is e's position
// and `_valid_to` its commit time. A version never ends before it starts:
// when e committed before v's `_valid_from`, that is lowered to e's time,
// leaving an empty interval. That happens to a version a source snapshot
// read opened (its time is when the connector read the row, later than
// the snapshot's consistent point, while a change committed during the
// snapshot sorts after the read by position) and to lakemirror's own
// direct load (its time is the load's wall clock).
func closeAt(v *Version, e *cdc.Event) {
	v.ToSeq, v.To = e.Seq, e.SourceTs
	if v.To != 0 && v.From > v.To {
		v.From = v.To
	}
}

func rowsEqual(a, b *cdc.Row) bool {
	if a == nil || b == nil {
		return a == b
	}
	if len(a.Vals) != len(b.Vals) {
		return false
	}
	for i := range a.Vals {
		if a.Vals[i] != b.Vals[i] || a.Cols.Names[i] != b.Cols.Names[i] {
			return false
		}
	}
	return true
}
