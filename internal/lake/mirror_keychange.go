package lake

import (
	"context"

	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// fillFromOldKeys resolves the TOAST placeholders of creates made by a
// primary-key update (events with OldKey): PostgreSQL logs an unchanged
// TOASTed value only as "unchanged", so Debezium's create for the new key
// carries the placeholder and the value is the old key's. It is taken
// from the newest change of the old key in the batch below the create,
// else from the mirror's stored row of the old key. Without either, the
// placeholder stays (the writer keeps it as NULL for a new key) — the old
// key was never seen. Events are prepared (aligned to sh).
func (w *MirrorWriter) fillFromOldKeys(ctx context.Context, tbl *table.Table, sh *shape, events []*cdc.Event) error {
	var need []*cdc.Event
	for _, e := range events {
		if e.OldKey != "" && e.Op.IsUpsert() && hasUnavailable(e.After) {
			need = append(need, e)
		}
	}
	if len(need) == 0 {
		return nil
	}
	var fromStored []cdc.Key
	source := map[*cdc.Event]*cdc.Row{}
	for _, e := range need {
		var best *cdc.Event
		for _, o := range events {
			if o.Key == e.OldKey && o.Seq < e.Seq && o.Image() != nil && (best == nil || o.Seq > best.Seq) {
				best = o
			}
		}
		if best != nil && best.Op.IsUpsert() {
			source[e] = best.After
			continue
		}
		if best != nil && best.Before.HasValuesBeyond(w.keyCols) { // the old key's delete with a full before image
			source[e] = best.Before
			continue
		}
		fromStored = append(fromStored, e.OldKey)
	}
	if len(fromStored) > 0 {
		if err := w.ensureIndex(ctx, tbl); err != nil {
			return err
		}
		var found []cdc.Key
		for _, k := range fromStored {
			if _, ok := w.state.ix.Lookup(k); ok {
				found = append(found, k)
			}
		}
		stored, err := w.storedRows(ctx, tbl, sh, found)
		if err != nil {
			return err
		}
		for _, e := range need {
			if _, done := source[e]; !done && stored[e.OldKey] != nil {
				source[e] = stored[e.OldKey]
			}
		}
	}
	for e, src := range source {
		vals := append([]cdc.Value(nil), e.After.Vals...)
		for i, v := range vals {
			if v.Kind == cdc.KindUnavailable {
				vals[i] = src.Vals[i]
			}
		}
		e.After = &cdc.Row{Cols: e.After.Cols, Vals: vals}
	}
	return nil
}
