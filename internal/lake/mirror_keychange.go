package lake

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/localstate"
	"github.com/lakemirror/lakemirror/internal/merge"
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
func (w *MirrorWriter) fillFromOldKeys(ctx context.Context, tbl *table.Table, sh *shape, events []*cdc.Event, past bool) (map[cdc.Key]bool, error) {
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
			o := &oldKeyPast{logged: past || w.state.keyLogged(e.OldKey)}
			if ent, ok := w.state.ix.Lookup(e.OldKey); ok {
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
		listedHeir := !past && !o.complete(e) && w.state.addHeir(e.OldKey, heir{key: e.Key, at: e.Seq})
		if !past && w.state.chainHeirs(e) {
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

// heir is a key-change create applied before every change of its old
// key below it had arrived (State.heirs): its new key and position.
type heir struct {
	key cdc.Key
	at  cdc.Seq
}

// maxHeirs bounds State.heirs: past it a create is not listed (its
// value stays as filled when it was applied).
const maxHeirs = 100_000

// addHeir lists h under old key k and reports whether it did (not when
// maxHeirs are listed).
func (s *State) addHeir(k cdc.Key, h heir) bool {
	n := 0
	for _, hs := range s.heirs {
		n += len(hs)
		if n >= maxHeirs {
			return false
		}
	}
	if s.heirs == nil {
		s.heirs = map[cdc.Key][]heir{}
	}
	if !slices.Contains(s.heirs[k], h) {
		s.heirs[k] = append(s.heirs[k], h)
	}
	return true
}

// PropKeyChangeHeirs keeps State.heirs on the mirror: a JSON array of
// [old key, new key, position] triples (hex; sorted), committed with each
// batch while any create is listed, so that a worker that restarts, or
// builds its state from the tables again, still lists the new key for
// RebuildKeys when its old key's changes below the create arrive. At most
// maxStoredHeirs are kept (the oldest positions first); past that a
// restart forgets the rest (docs/design.md, Known gaps).
const PropKeyChangeHeirs = "lakemirror.key-change-heirs"

// maxStoredHeirs bounds PropKeyChangeHeirs (about 100 bytes each: well
// under a catalog's property size limits, such as Glue's 512 KB).
const maxStoredHeirs = 1000

// heirsJSON is PropKeyChangeHeirs for heirs without the creates of done
// ("[]" when none are left).
func heirsJSON(heirs map[cdc.Key][]heir, done []heirDone) string {
	var kept []heirDone
	for old, hs := range heirs {
		for _, h := range hs {
			if d := (heirDone{old: old, h: h}); !slices.Contains(done, d) {
				kept = append(kept, d)
			}
		}
	}
	slices.SortFunc(kept, func(a, b heirDone) int {
		return cmp.Or(a.h.at.Compare(b.h.at), cmp.Compare(a.old, b.old), cmp.Compare(a.h.key, b.h.key))
	})
	out := make([][3]string, 0, min(len(kept), maxStoredHeirs))
	for _, d := range kept[:min(len(kept), maxStoredHeirs)] {
		out = append(out, [3]string{hex.EncodeToString([]byte(d.old)), hex.EncodeToString([]byte(d.h.key)), d.h.at.Hex()})
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// loadHeirs lists the creates mirror's PropKeyChangeHeirs keeps in
// State.heirs (a state built from the tables or a sidecar). Errors: a
// malformed property.
func (s *State) loadHeirs(mirror *table.Table) error {
	if mirror == nil {
		return nil
	}
	hs, err := parseHeirs(mirror.Properties()[PropKeyChangeHeirs])
	for _, h := range hs {
		s.addHeir(h.old, h.h)
	}
	return err
}

// parseHeirs reads a PropKeyChangeHeirs value ("": none) as the old key
// and the create of each entry. Errors: malformed JSON, hex or position.
func parseHeirs(t string) ([]heirDone, error) {
	if t == "" {
		return nil, nil
	}
	var triples [][3]string
	if err := json.Unmarshal([]byte(t), &triples); err != nil {
		return nil, fmt.Errorf("lake: bad %s: %w", PropKeyChangeHeirs, err)
	}
	out := make([]heirDone, 0, len(triples))
	for _, tr := range triples {
		old, err1 := hex.DecodeString(tr[0])
		key, err2 := hex.DecodeString(tr[1])
		at, err3 := cdc.ParseSeqHex(tr[2])
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("lake: bad entry %q in %s: %w", tr, PropKeyChangeHeirs, err)
		}
		out = append(out, heirDone{old: cdc.Key(old), h: heir{key: cdc.Key(key), at: at}})
	}
	return out, nil
}

// chainHeirs lists key-change create e also under the old keys of the
// listed creates that made e's old key (a chain 1 → 2 → 3 whose first
// create still waits for key 1's changes): the value e took from its old
// key may come from such a create, so a change of key 1 below it fills
// e again too. It reports whether it listed e.
func (s *State) chainHeirs(e *cdc.Event) bool {
	var up []heirDone
	for old, hs := range s.heirs {
		for _, h := range hs {
			if h.key == e.OldKey && h.at <= e.Seq && old != e.Key {
				up = append(up, heirDone{old: old, h: heir{key: e.Key, at: h.at}})
			}
		}
	}
	listed := false
	for _, u := range up {
		listed = s.addHeir(u.old, u.h) || listed
	}
	return listed
}

// heirDone is a create of State.heirs (h, under old key) to forget.
type heirDone struct {
	old cdc.Key
	h   heir
}

// heirsToRefill returns the new keys of the creates listed under the
// keys of groups whose changes reach below them with values (an upsert,
// a delete with a full before image: what a placeholder could take),
// and the creates whose old key's delete at or below them arrived (the
// old key's partition delivered every change before it), which
// forgetHeirs drops once the batch is recorded.
func (s *State) heirsToRefill(groups []merge.Group, keyCols []string) (refill []cdc.Key, done []heirDone) {
	if len(s.heirs) == 0 {
		return nil, nil
	}
	for _, g := range groups {
		for _, h := range s.heirs[g.Key] {
			fill, deleted := false, false
			for _, e := range g.Events {
				if e.Seq > h.at {
					continue
				}
				if e.Op.IsUpsert() || e.Op == cdc.OpDelete && e.Before.HasValuesBeyond(keyCols) {
					fill = true
				}
				if e.Op == cdc.OpDelete && e.Seq == h.at {
					deleted = true // the key change's own delete: every earlier change came before it
				}
			}
			if fill {
				refill = append(refill, h.key)
			}
			if deleted {
				done = append(done, heirDone{old: g.Key, h: h})
			}
		}
	}
	return refill, done
}

// forgetHeirs drops the creates of done from State.heirs.
func (s *State) forgetHeirs(done []heirDone) {
	for _, d := range done {
		hs := slices.DeleteFunc(s.heirs[d.old], func(h heir) bool { return h == d.h })
		if len(hs) == 0 {
			delete(s.heirs, d.old)
		} else {
			s.heirs[d.old] = hs
		}
	}
}

// fillLogged fills the TOAST placeholders of key-change creates among
// events (read back from the local state log) from the old key's logged
// changes, when the log holds all of them, following chains of key
// changes up to depth back. The log keeps such a create as it came:
// in its after image while its old key's changes were still to come
// (State.heirs), else in its before image beside the after image it
// was filled to (fillFromOldKeys), so that a change of the old key
// below it that arrived after it (late, or redelivered) reaches it
// here; a column the old key's logged changes do not know keeps that
// filled value. Events get a new after image; the others are left
// alone. Errors: local state log failures.
func (w *MirrorWriter) fillLogged(events []*cdc.Event, sh *shape, depth int) error {
	for _, e := range events {
		if e.OldKey == "" || !e.Op.IsUpsert() || depth <= 0 {
			continue
		}
		raw := e.After
		if localstate.HasUnavailable(e.Before) {
			raw = e.Before
		}
		if !localstate.HasUnavailable(raw) || !w.state.keyLogged(e.OldKey) {
			continue
		}
		changes, err := w.loggedChanges(e.OldKey, sh, depth-1)
		if err != nil {
			return err
		}
		slices.SortStableFunc(changes, func(a, b *cdc.Event) int { return b.Seq.Compare(a.Seq) })
		vals := slices.Clone(alignRow(raw, sh.names).Vals)
		w.fillFromChanges(vals, e, changes, "", nil)
		filled := alignRow(e.After, sh.names)
		for i, v := range vals {
			if v.Kind == cdc.KindUnavailable {
				vals[i] = filled.Vals[i]
			}
		}
		e.After = &cdc.Row{Cols: sh.names, Vals: vals}
	}
	return nil
}

// loggedChanges returns copies of key k's logged changes aligned to sh,
// its key-change creates filled (fillLogged, depth back). Errors: local
// state log failures.
func (w *MirrorWriter) loggedChanges(k cdc.Key, sh *shape, depth int) ([]*cdc.Event, error) {
	logged, _, err := w.state.pastChanges(k, sh)
	if err != nil {
		return nil, err
	}
	out := make([]*cdc.Event, 0, len(logged))
	for _, o := range logged {
		c := *o
		c.Before, c.After = alignRow(o.Before, sh.names), alignRow(o.After, sh.names)
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
	w.state.settle()
	tbl, err := lakecat.LoadTable(ctx, w.cat, w.name.Mirror())
	if err != nil || tbl == nil {
		return err
	}
	if err := w.ensureIndex(ctx, tbl); err != nil {
		return err
	}
	sh, err := shapeOf(tbl.Schema(), w.keyCols)
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
		if ent, ok := w.state.ix.Lookup(d.NewKey); ok && ent.Seq >= d.Seq {
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
	w.state.settle()
	if !w.state.built || w.state.ix == nil {
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
			if ent, ok := w.state.ix.Lookup(d.NewKey); ok && ent.Seq >= d.Seq {
				out = append(out, d.NewKey)
			}
		}
	}
	slices.Sort(out)
	return out
}
