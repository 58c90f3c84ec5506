package evolve

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/cdc/typing"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// Evolve brings the mirror's schema up to the batch's events (design:
// issue 3, schema evolution). With a Connect schema on the events, a new
// column is added as optional and an Iceberg-allowed widening (int → long,
// float → double, decimal precision up) is applied; a narrowing of a
// column the table holds wider applies as is (the values fit); any other
// type change, or a dropped column that still holds values (in the table,
// or in the batch's events below the dropping schema's highest position:
// a drop inside the batch that created the table; a rename is both)
// blocks the batch with *SchemaBlockedError unless the schema was
// accepted before or the decision says evolve (accept, remembered) or
// skip (the events carrying that schema are returned as skipped, for the
// quarantine). Without a schema, columns that first appear with a
// non-NULL value are added with types inferred from the values
// (typing.InferColumns). A late or replayed event whose schema lacks a
// column the pipeline added later (its position is below the column's
// PropColumnSince) is not a drop and does not block. Source columns in
// ignored (reserved names an operator left out, see SettleReserved) are
// passed over. Changes are committed
// on their own, before the batch's data; it returns the reloaded table and
// the added columns.
func Evolve(ctx context.Context, tbl *table.Table, events []*cdc.Event, keyCols []string, decision string, ignored map[string]bool) (*table.Table, []string, map[*cdc.Event]bool, error) {
	sc := tbl.Schema()
	accepted := acceptedSchemas(tbl)
	var changes []SchemaChange
	newCols := map[string]cdc.Column{}
	var accept []string
	skipped := map[*cdc.Event]bool{}
	seenSchema := map[*cdc.Column]bool{}
	var withValues map[string]bool
	// the batch's own events count too: a column dropped inside the batch
	// that created the table (or added the column) holds the values of the
	// batch's events before the drop; per column, the lowest position of
	// an event holding a value in it
	var batchValues map[string]cdc.Seq
	hasValues := func(name string, below cdc.Seq) bool {
		if withValues == nil {
			var err error
			if withValues, err = columnsWithValues(ctx, tbl); err != nil {
				withValues = map[string]bool{name: true} // unknown: assume it has values (blocks, never loses)
			}
			batchValues = map[string]cdc.Seq{}
			for _, e := range events {
				imageValues(e.Before, e.Seq, batchValues)
				imageValues(e.After, e.Seq, batchValues)
			}
		}
		s, ok := batchValues[name]
		return withValues[name] || (ok && s < below)
	}
	skipSchema := map[*cdc.Column]bool{}
	// Per schema (identified by its first column's address: events decoded
	// from one Connect schema share the slice), the highest position of its
	// events; per column, the lowest position of an event carrying it.
	maxSeq := map[*cdc.Column]cdc.Seq{}
	since := schemaSince(events)
	for _, e := range events {
		if len(e.Schema) == 0 {
			continue
		}
		if id := &e.Schema[0]; e.Seq > maxSeq[id] {
			maxSeq[id] = e.Seq
		}
	}
	for _, e := range events {
		if len(e.Schema) == 0 {
			continue
		}
		id := &e.Schema[0]
		if skipSchema[id] {
			skipped[e] = true
			continue
		}
		if seenSchema[id] {
			continue
		}
		seenSchema[id] = true
		diff, err := diffSchema(tbl, e.Schema, maxSeq[id], ignored, func(name string) bool { return hasValues(name, maxSeq[id]) })
		if err != nil {
			return nil, nil, nil, err
		}
		blocking := false
		for _, c := range diff {
			blocking = blocking || !c.Allowed
		}
		fp := schemaFingerprint(e.Schema)
		if blocking && !slices.Contains(accepted, fp) {
			refused := evolveRefused(tbl, diff, keyCols)
			switch {
			case decision == payload.DecisionEvolve && refused != "":
				return nil, nil, nil, &SchemaBlockedError{Fingerprint: fp, Changes: diff, EvolveRefused: refused}
			case decision == payload.DecisionEvolve:
				accept = append(accept, fp)
			case decision == payload.DecisionSkip:
				skipSchema[id] = true
				skipped[e] = true
				continue
			default:
				return nil, nil, nil, &SchemaBlockedError{Fingerprint: fp, Changes: diff, EvolveRefused: refused}
			}
		}
		for _, c := range diff {
			if c.Allowed && newCols[c.Column].Name == "" {
				changes = append(changes, c)
				for _, col := range e.Schema {
					if col.Name == c.Column {
						col.Optional = true
						newCols[c.Column] = col
					}
				}
			}
		}
	}
	// schemaless events: columns that first appear with a value
	var inferred []cdc.Column
	for _, e := range events {
		if len(e.Schema) > 0 || skipped[e] {
			continue
		}
		for _, img := range []*cdc.Row{e.Before, e.After} {
			if img == nil {
				continue
			}
			for i, name := range img.Cols.Names {
				if img.Vals[i].IsNull() || newCols[name].Name != "" || ignored[name] {
					continue
				}
				if _, ok := sc.FindFieldByName(name); ok {
					continue
				}
				if inferred == nil {
					inferred = typing.InferColumns(events)
				}
				col, _ := columnFromSchema(inferred, name)
				col.Name, col.Optional = name, true
				newCols[name] = col
				changes = append(changes, SchemaChange{Column: name, Kind: "added", To: col.Type.String(), Allowed: true})
			}
		}
	}
	tbl, added, err := applySchemaChanges(ctx, tbl, changes, newCols, accept, since)
	if err != nil {
		return nil, nil, nil, err
	}
	return tbl, added, skipped, nil
}

// CreationSince is PropColumnSince for a table created with cols from
// events: per column, the lowest position of an event whose Connect
// schema has it (JSON, "" without schemas). An event of an older schema
// delivered later (another partition, read after the one that created the
// table) lacks a column that appeared at the source after it; below that
// position it predates the column, which is not a drop.
func CreationSince(events []*cdc.Event, cols []cdc.Column) string {
	since := schemaSince(events)
	out := map[string]string{}
	for _, c := range cols {
		if s, ok := since[c.Name]; ok && s != "" {
			out[c.Name] = s.Hex()
		}
	}
	if len(out) == 0 {
		return ""
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// schemaSince returns, per column of the events' Connect schemas, the
// lowest position of an event whose schema has it.
func schemaSince(events []*cdc.Event) map[string]cdc.Seq {
	since := map[string]cdc.Seq{}
	for _, e := range events {
		for _, c := range e.Schema {
			if s, ok := since[c.Name]; !ok || e.Seq < s {
				since[c.Name] = e.Seq
			}
		}
	}
	return since
}

// imageValues lowers out[c] to seq for each column c of img holding a
// value (not NULL, not an unavailable-value placeholder).
func imageValues(img *cdc.Row, seq cdc.Seq, out map[string]cdc.Seq) {
	if img == nil {
		return
	}
	for i, name := range img.Cols.Names {
		if k := img.Vals[i].Kind; k == cdc.KindNull || k == cdc.KindUnavailable {
			continue
		}
		if s, ok := out[name]; !ok || seq < s {
			out[name] = seq
		}
	}
}

func columnFromSchema(cols []cdc.Column, name string) (cdc.Column, bool) {
	for _, c := range cols {
		if c.Name == name {
			return c, true
		}
	}
	return cdc.Column{Type: cdc.TypeString}, false
}
