package lake

import (
	"context"
	"slices"

	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/localstate"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
)

// fillFromOldKeys resolves the TOAST placeholders of creates made by a
// primary-key update (events with OldKey): PostgreSQL logs an unchanged
// TOASTed value only as "unchanged", so Debezium's create for the new key
// carries the placeholder and the value is the old key's as it was just
// before the update (docs/design.md rule 4). Each placeholder takes the
// value of the newest change of the old key below the create that knows
// it (an upsert's after image, a delete's full before image, the old
// key's delete at the create's own position included: Debezium gives
// both the update's position; a key-only before image and the old key's
// own placeholders know nothing and are passed over), among the batch's
// changes and, when the local state log holds every past change of the
// old key, the logged ones; else the mirror's stored row of the old key
// when it is not past the create. Without any, the placeholder stays (the
// writer keeps it as NULL for a new key). Creates are filled in position
// order, so a chain of key changes in one batch passes values along.
// Events are prepared (aligned to sh).
//
// It returns the new keys whose values it could not tell exactly, which
// the stage lists for a rebuild from bronze (plan.refill): the log lacks
// the old key's past (a state built from the tables) and the old key's
// stored row is past the create, or the batch holds changes of the old
// key below its stored row (late ones change what the row knows), or a
// value came from a create listed so (a chain). A batch of past changes
// (past: read back from bronze with every change of the old keys, ahead
// of a rebuild) is exact and returns none.
func (w *MirrorWriter) fillFromOldKeys(ctx context.Context, tbl *table.Table, sh *tablestate.Shape, events []*cdc.Event, past bool) (map[cdc.Key]bool, error) {
	var need []*cdc.Event
	for _, e := range events {
		if e.OldKey != "" && e.Op.IsUpsert() && localstate.HasUnavailable(e.After) {
			need = append(need, e)
		}
	}
	if len(need) == 0 {
		return nil, nil
	}
	if err := w.ensureIndex(ctx, tbl); err != nil {
		return nil, err
	}
	slices.SortStableFunc(need, func(a, b *cdc.Event) int { return a.Seq.Compare(b.Seq) })
	olds := map[cdc.Key]*oldKeyPast{}
	for _, e := range need {
		if olds[e.OldKey] == nil {
			o := &oldKeyPast{logged: past || w.state.KeyLogged(e.OldKey)}
			if ent, ok := w.state.Ix.Lookup(e.OldKey); ok {
				o.stored, o.at, o.deleted = true, ent.Seq, ent.Deleted
			}
			olds[e.OldKey] = o
		}
	}
	for _, e := range events {
		if o := olds[e.Key]; o != nil {
			o.changes = append(o.changes, e)
		}
	}
	for k, o := range olds {
		if o.logged && !past {
			logged, err := w.loggedChanges(k, sh, keyChainDepth)
			if err != nil {
				return nil, err
			}
			o.changes = append(o.changes, logged...)
		}
		slices.SortStableFunc(o.changes, func(a, b *cdc.Event) int { return b.Seq.Compare(a.Seq) })
	}
	// a first pass finds the creates the changes cannot fill alone; their
	// old keys' stored rows are read at once
	var fromStored []cdc.Key
	for _, e := range need {
		o := olds[e.OldKey]
		if o.storedUsable(e) && !w.fillFromChanges(slices.Clone(e.After.Vals), e, o.changes, o.floor(e), nil) && !slices.Contains(fromStored, e.OldKey) {
			fromStored = append(fromStored, e.OldKey)
		}
	}
	if len(fromStored) > 0 {
		stored, err := w.storedRows(ctx, tbl, sh, fromStored)
		if err != nil {
			return nil, err
		}
		for k, r := range stored {
			olds[k].row = r
		}
	}
	var refill map[cdc.Key]bool
	listed := map[*cdc.Event]bool{} // creates whose new keys are listed
	for _, e := range need {
		o := olds[e.OldKey]
		vals := slices.Clone(e.After.Vals)
		chained := false
		if !w.fillFromChanges(vals, e, o.changes, o.floor(e), func(from *cdc.Event) { chained = chained || listed[from] }) && o.storedUsable(e) && o.row != nil {
			for i, v := range vals {
				if v.Kind == cdc.KindUnavailable {
					vals[i] = o.row.Vals[i]
				}
			}
		}
		if !past && (chained || !o.logged && o.inexact(e)) {
			if refill == nil {
				refill = map[cdc.Key]bool{}
			}
			refill[e.Key] = true
			listed[e] = true
		}
		listedHeir := !past && !o.complete(e) && w.state.AddHeir(e.OldKey, tablestate.Heir{Key: e.Key, At: e.Seq})
		if !past && w.state.ChainHeirs(e) {
			listedHeir = true
		}
		if listedHeir {
			// the old key's changes below e still to come fill it again: the
			// log keeps e as it came (read back, it is filled from the
			// old key's logged changes: fillLogged), or, when it lacks the
			// old key's past, not at all (a rebuild reads bronze)
			if o.logged {
				if w.rawAfter == nil {
					w.rawAfter = map[*cdc.Event]*cdc.Row{}
				}
				w.rawAfter[e] = e.After
			} else {
				w.unlogged = append(w.unlogged, e.Key)
			}
		}
		for i, v := range vals {
			if v.Kind == cdc.KindUnavailable {
				// the old key's value is not known: NULL, never the new
				// key's own earlier row (another row's value)
				vals[i] = cdc.Null()
				if !past {
					w.unknownFromOldKeys++
				}
			}
		}
		// the create's before image (none: Debezium's creates carry
		// none, and the merge rules read an upsert's never) keeps the
		// after image as it came, placeholders and all: the local state
		// log keeps it, so that a change of the old key below the create
		// that arrives later fills it again when read back (fillLogged)
		e.Before, e.After = e.After, &cdc.Row{Cols: e.After.Cols, Vals: vals}
	}
	return refill, nil
}

// fillLogged fills the TOAST placeholders of key-change creates among
// events (read back from the local state log) from the old key's logged
// changes, when the log holds all of them, following chains of key
// changes up to depth back. The log keeps such a create as it came:
// in its after image while its old key's changes were still to come
// (State.Heirs), else in its before image beside the after image it
// was filled to (fillFromOldKeys), so that a change of the old key
// below it that arrived after it (late, or redelivered) reaches it
// here; a column the old key's logged changes do not know keeps that
// filled value. Events get a new after image; the others are left
// alone. Errors: local state log failures.
func (w *MirrorWriter) fillLogged(events []*cdc.Event, sh *tablestate.Shape, depth int) error {
	for _, e := range events {
		if e.OldKey == "" || !e.Op.IsUpsert() || depth <= 0 {
			continue
		}
		raw := e.After
		if localstate.HasUnavailable(e.Before) {
			raw = e.Before
		}
		if !localstate.HasUnavailable(raw) || !w.state.KeyLogged(e.OldKey) {
			continue
		}
		changes, err := w.loggedChanges(e.OldKey, sh, depth-1)
		if err != nil {
			return err
		}
		slices.SortStableFunc(changes, func(a, b *cdc.Event) int { return b.Seq.Compare(a.Seq) })
		vals := slices.Clone(tablestate.AlignRow(raw, sh.Names).Vals)
		w.fillFromChanges(vals, e, changes, "", nil)
		filled := tablestate.AlignRow(e.After, sh.Names)
		for i, v := range vals {
			if v.Kind == cdc.KindUnavailable {
				vals[i] = filled.Vals[i]
			}
		}
		e.After = &cdc.Row{Cols: sh.Names, Vals: vals}
	}
	return nil
}

// loggedChanges returns copies of key k's logged changes aligned to sh,
// its key-change creates filled (fillLogged, depth back). Errors: local
// state log failures.
func (w *MirrorWriter) loggedChanges(k cdc.Key, sh *tablestate.Shape, depth int) ([]*cdc.Event, error) {
	logged, _, err := w.state.PastChanges(k, sh)
	if err != nil {
		return nil, err
	}
	out := make([]*cdc.Event, 0, len(logged))
	for _, o := range logged {
		c := *o
		c.Before, c.After = tablestate.AlignRow(o.Before, sh.Names), tablestate.AlignRow(o.After, sh.Names)
		out = append(out, &c)
	}
	return out, w.fillLogged(out, sh, depth)
}

// oldKeyPast is what fillFromOldKeys knows of one old key.
type oldKeyPast struct {
	changes []*cdc.Event // in the batch, and logged when logged; newest first
	logged  bool         // the changes hold every past change of the key
	stored  bool         // the mirror has a row of it: at its position, deleted or not
	at      cdc.Seq
	deleted bool
	row     *cdc.Row // the stored row, read when needed
}

// storedUsable reports whether the old key's stored row may give e's
// values: it is not past e (at e's own position only as the update's
// delete).
func (o *oldKeyPast) storedUsable(e *cdc.Event) bool {
	return o.stored && (o.at < e.Seq || o.at == e.Seq && o.deleted)
}

// floor is the position at or below which the old key's changes are
// superseded by its stored row ("": none are): the stored row is newer
// than them, and a key whose past the log lacks has nothing else.
func (o *oldKeyPast) floor(e *cdc.Event) cdc.Seq {
	if !o.logged && o.storedUsable(e) {
		return o.at
	}
	return ""
}

// complete reports whether every change of the old key below e has
// arrived: the update's own delete (the old key's delete at e's
// position: Debezium gives both the update's position) is known, in the
// batch, the log or the stored row. An older delete of the old key says
// nothing: the key may have been created again before the update, in
// changes still to come.
func (o *oldKeyPast) complete(e *cdc.Event) bool {
	for _, c := range o.changes {
		if c.Seq == e.Seq && c.Op == cdc.OpDelete {
			return true
		}
	}
	return o.stored && o.at == e.Seq && o.deleted
}

// inexact reports, for a key whose past the log lacks, whether e's
// values from it may be wrong: its stored row is past e, or the batch
// holds changes of it below the stored row (a late one changes what
// the stored row knows; a redelivered one costs a needless rebuild).
func (o *oldKeyPast) inexact(e *cdc.Event) bool {
	if !o.stored {
		return false
	}
	if !o.storedUsable(e) {
		return true
	}
	for _, c := range o.changes {
		if c.Seq < o.at {
			return true
		}
	}
	return false
}

// fillFromChanges fills vals' placeholders (e's after image) from the old
// key's changes (newest first) below e, or its delete at e's position,
// and above floor ("": none), calls from (when set) with each change it
// looks at while a placeholder is left (a value may come from it), and
// reports whether no placeholder is left.
func (w *MirrorWriter) fillFromChanges(vals []cdc.Value, e *cdc.Event, changes []*cdc.Event, floor cdc.Seq, from func(*cdc.Event)) bool {
	left := 0
	for _, v := range vals {
		if v.Kind == cdc.KindUnavailable {
			left++
		}
	}
	for _, o := range changes {
		if left == 0 || floor != "" && o.Seq <= floor {
			break
		}
		if o.Seq > e.Seq || o.Seq == e.Seq && o.Op != cdc.OpDelete {
			continue
		}
		if from != nil {
			from(o)
		}
		var img *cdc.Row
		switch {
		case o.Op.IsUpsert():
			img = o.After
		case o.Op == cdc.OpDelete && o.Before.HasValuesBeyond(w.keyCols):
			img = o.Before
		}
		if img == nil {
			continue
		}
		for i, v := range vals {
			if v.Kind != cdc.KindUnavailable || img.Vals[i].Kind == cdc.KindUnavailable {
				continue
			}
			if img == o.Before && img.Vals[i].IsEmpty() {
				// a TOASTed value is never NULL nor empty (PostgreSQL
				// moves out of line only values of about 2 KB and more):
				// this is what a key-only image has in a column it leaves
				// out, where the decoder could not tell the image
				// (schema-less JSON, a default it does not know)
				continue
			}
			vals[i] = img.Vals[i]
			left--
		}
	}
	return left == 0
}

// fillLoggedByKey is fillLogged for the changes of a rebuild (byKey, as
// TableWriter.Rebuild gets them), in the mirror's columns. Errors:
// catalog and local state log failures.
func (w *MirrorWriter) fillLoggedByKey(ctx context.Context, byKey map[cdc.Key][]*cdc.Event) error {
	w.state.Settle()
	tbl, err := lakecat.LoadTable(ctx, w.cat, w.name.Mirror())
	if err != nil || tbl == nil {
		return err
	}
	if err := w.ensureIndex(ctx, tbl); err != nil {
		return err
	}
	sh, err := tablestate.ShapeOf(tbl.Schema(), w.keyCols)
	if err != nil {
		return err
	}
	for _, es := range byKey {
		if err := w.fillLogged(es, sh, keyChainDepth); err != nil {
			return err
		}
	}
	return nil
}

// keyChainDepth is how many primary-key changes back a TOAST placeholder
// is followed through the local state log (fillLogged).
const keyChainDepth = 16

// lateHeirs returns the new keys whose key-change creates took values
// from a key whose batch changes (batch) reach below that key's
// key-change delete: all holds every change of the key (logged and the
// batch's), stored is its position before the batch. A delete with a
// new key (cdc.Event.NewKey) at or below stored was applied before the
// batch, so the new key's create may have been filled (TOAST
// placeholders) without a change of the batch below it that carries
// values (an upsert, a delete with a full before image): a late change
// or a redelivery (a needless refill). Only new keys the mirror holds at
// or past the delete's position (the create applied) are returned.
func (w *MirrorWriter) lateHeirs(all, batch []*cdc.Event, stored cdc.Seq) []cdc.Key {
	var out []cdc.Key
	for _, d := range all {
		if d.Op != cdc.OpDelete || d.NewKey == "" || d.Seq > stored || slices.Contains(out, d.NewKey) {
			continue
		}
		below := slices.ContainsFunc(batch, func(e *cdc.Event) bool {
			return e.Seq < d.Seq && (e.Op.IsUpsert() || e.Op == cdc.OpDelete && e.Before.HasValuesBeyond(w.keyCols))
		})
		if !below {
			continue
		}
		if ent, ok := w.state.Ix.Lookup(d.NewKey); ok && ent.Seq >= d.Seq {
			out = append(out, d.NewKey)
		}
	}
	return out
}

// KeyChangeHeirs returns the new keys, not among byKey's, of the
// key-change deletes (cdc.Event.NewKey) among byKey's changes (every
// change of each key, as a rebuild gets them) that the mirror holds at
// or past the delete's position, in key order. Their creates may have
// taken values (TOAST placeholders) from the old key's changes below
// the delete, which the rebuild may change (a change that came after
// the delete: late, or a partition behind): RebuildKeys rebuilds them
// with the old keys. The index must be ready (a rebuild's past read
// ensures it); none when the state is not built.
func (w *MirrorWriter) KeyChangeHeirs(byKey map[cdc.Key][]*cdc.Event) []cdc.Key {
	w.state.Settle()
	if !w.state.Built || w.state.Ix == nil {
		return nil
	}
	var out []cdc.Key
	for _, es := range byKey {
		for _, d := range es {
			if d.Op != cdc.OpDelete || d.NewKey == "" || slices.Contains(out, d.NewKey) {
				continue
			}
			if _, ok := byKey[d.NewKey]; ok {
				continue
			}
			if ent, ok := w.state.Ix.Lookup(d.NewKey); ok && ent.Seq >= d.Seq {
				out = append(out, d.NewKey)
			}
		}
	}
	slices.Sort(out)
	return out
}
