package merge

import "github.com/lakemirror/lakemirror/internal/cdc"

// Stored is what the primary-key index knows of a key's row in the mirror.
type Stored struct {
	Found   bool    // a row for the key exists in the mirror (live or soft-deleted)
	Seq     cdc.Seq // its `_seq`
	Deleted bool    // its soft delete (`_is_deleted`, `_deleted` in older tables)
}

// Outcome is the fate of one key after a batch.
type Outcome struct {
	Key cdc.Key
	// Changed is false when no event of the batch passed the sequence
	// guard: nothing is written for the key.
	Changed bool
	// Replaces is true when a stored row exists and must be removed (by a
	// position delete) in the same commit that adds the new version.
	Replaces bool
	Seq      cdc.Seq // `_seq` of the new version: the position of its last applied change
	Deleted  bool    // soft delete of the new version
	Op       cdc.Op  // op of the last applied change
	SourceTs int64   // µs since the epoch, of the last applied change
	// Values is the new version's column values. When ValuesFromStored is
	// set, Values is nil and the stored row's values are kept (a delete
	// whose before image has only the key). Values may hold
	// cdc.KindUnavailable entries (TOAST placeholders) that the writer
	// fills from the stored row.
	Values           *cdc.Row
	ValuesFromStored bool

	Applied    int // events that passed the guard (the last one wins; the others are collapsed)
	Stale      int // events at or below the stored position (late or replayed)
	Duplicates int // events whose position another event of the batch already had
}

// Fold applies one key's batch of changes to its stored state under the
// rules of docs/design.md: a change applies only when its Seq is above the
// current Seq (rule 3); an upsert (c, u, r) makes its after image the row
// (TOAST placeholders keep the previous value); a delete soft-deletes the
// row and keeps its last known values: the delete's before image when it
// carries values beyond the key columns (its unavailable-value placeholders
// taken like an upsert's), else the previous in-batch image, else the
// stored values (rule 4). A delete of a never-seen key yields a
// deleted row holding the before image (the key at least), so an older
// create arriving later loses to it. A per-key truncate event (op t with
// the key set, made from a table truncate by the writer) deletes the row
// only if it is live at that position: rows deleted earlier keep their
// own positions, keys never seen stay unseen, and a row a PostgreSQL
// source snapshot read after the truncate stays (the read sorts below it:
// cdc.PostgresReadAfterTruncate).
func Fold(stored Stored, g Group, keyCols []string) Outcome {
	out := Outcome{Key: g.Key, Duplicates: g.Duplicates}
	cur := stored.Seq
	fromStored := stored.Found // current values are the stored row's
	var vals *cdc.Row
	live := stored.Found && !stored.Deleted
	// PostgreSQL source snapshot reads taken after a table truncate
	// (cdc.PostgresReadAfterTruncate) sort below it but come after it:
	// they are applied right after it, and a stored read taken after one
	// of the group's truncates makes every change at or below that
	// truncate stale (floor)
	events := readsAfterTruncates(g.Events)
	var floor, lastTrunc cdc.Seq
	if stored.Found {
		for _, e := range events {
			if e.Op == cdc.OpTruncate && e.Seq > floor && cdc.PostgresReadAfterTruncate(stored.Seq, e.Seq) {
				floor = e.Seq
			}
		}
	}
	for _, e := range events {
		if e.Op == cdc.OpTruncate {
			lastTrunc = e.Seq
		}
		if e.Op == cdc.OpTruncate && (!live || cdc.PostgresReadAfterTruncate(cur, e.Seq)) {
			// truncating a deleted or unseen row changes nothing, nor
			// does truncating a row a source snapshot read after it
			continue
		}
		if stored.Found && (e.Seq <= cur || e.Seq <= floor) && !readAfter(e, lastTrunc, cur) {
			if e.Seq == stored.Seq {
				out.Duplicates++
			} else {
				out.Stale++
			}
			continue
		}
		out.Applied++
		cur = e.Seq
		out.Seq, out.Op, out.SourceTs = e.Seq, e.Op, e.SourceTs
		switch {
		case e.Op.IsUpsert():
			out.Deleted, live = false, true
			vals = carryUnavailable(e.After, vals)
			fromStored = false
		case e.Op == cdc.OpTruncate:
			out.Deleted, live = true, false
		case e.Op == cdc.OpDelete:
			live = false
			out.Deleted = true
			if e.Before.HasValuesBeyond(keyCols) {
				// an unavailable-value placeholder in the before image (an
				// Oracle LOB, a TOASTed column) is the last known value:
				// the batch's previous image, else the stored row's (the
				// writer fills what stays)
				vals, fromStored = carryUnavailable(e.Before, vals), false
			} else if vals == nil && !fromStored {
				vals = e.Before // never seen: keep what the delete carries (the key)
			}
		}
	}
	if out.Applied == 0 {
		return out
	}
	out.Changed = true
	out.Replaces = stored.Found
	out.Values, out.ValuesFromStored = vals, fromStored && vals == nil
	return out
}

// readAfter reports whether e is a PostgreSQL source snapshot read taken
// after the table truncate at t (readsAfterTruncates put it right after
// it) while the key's state cur is a streamed change or truncate at or
// below t: the read shows a later state, although its position sorts
// below cur.
func readAfter(e *cdc.Event, t, cur cdc.Seq) bool {
	if e.Op != cdc.OpRead || t == "" || cur > t {
		return false
	}
	if _, curRead := cdc.PostgresReadLSN(cur); curRead {
		return false
	}
	return cdc.PostgresReadAfterTruncate(e.Seq, t)
}

// carryUnavailable returns next with each TOAST placeholder replaced by
// the same column of prev when prev (an earlier image of the batch) has
// it. next is copied only when a value is replaced.
func carryUnavailable(next, prev *cdc.Row) *cdc.Row {
	if next == nil || prev == nil {
		return next
	}
	var out *cdc.Row
	for i, v := range next.Vals {
		if v.Kind != cdc.KindUnavailable {
			continue
		}
		pv, ok := prev.Get(next.Cols.Names[i])
		if !ok {
			continue
		}
		if out == nil {
			out = &cdc.Row{Cols: next.Cols, Vals: append([]cdc.Value(nil), next.Vals...)}
		}
		out.Vals[i] = pv
	}
	if out == nil {
		return next
	}
	return out
}
