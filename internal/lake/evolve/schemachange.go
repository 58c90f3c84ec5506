package evolve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
)

// PropAcceptedSchemas lists fingerprints of source schemas an operator
// accepted (decision evolve), so they do not block again.
const PropAcceptedSchemas = "lakemirror.accepted-schemas"

// PropColumnSince maps each column the pipeline added to the table (or
// created it with, from events with a Connect schema) to the lowest
// position (`_seq`, hex) of the events that carried it in the batch that
// added it: JSON {"column": "seq"}. An event without the
// column whose position is below it predates the column (a late or
// replayed event), which is not a drop.
const PropColumnSince = "lakemirror.column-since"

// SchemaChange is one difference between an event's Connect schema and
// the mirror table.
type SchemaChange struct {
	Column  string `json:"column"`
	Kind    string `json:"kind"`    // "added", "widened", "type-changed", "dropped", "reserved" (From: the system column)
	From    string `json:"from"`    // table type ("" for added)
	To      string `json:"to"`      // source type ("" for dropped)
	Allowed bool   `json:"allowed"` // applied automatically (added, Iceberg-allowed widening)
}

func (c SchemaChange) String() string {
	switch c.Kind {
	case "added":
		return fmt.Sprintf("column %q added (%s)", c.Column, c.To)
	case "dropped":
		return fmt.Sprintf("column %q dropped at the source while the table holds values in it", c.Column)
	case "reserved":
		return fmt.Sprintf("source column %q has the name of the system column %s (evolve leaves the column out of mirror and history, its values kept in bronze's raw records; skip sends the changes carrying it to the quarantine)", c.Column, c.From)
	}
	return fmt.Sprintf("column %q %s from %s to %s", c.Column, c.Kind, c.From, c.To)
}

// evolveRefused says why DecisionEvolve cannot take diff ("" when it can):
// a key column whose events now carry another type, unless the table holds
// it as a number (int, long, decimal), to which values conform only in
// their one canonical spelling. Evolving keeps the table's type and reads
// the new values in it, and for other types two spellings of a source key
// can become one table key or one key two: "1.5" then "1.50" in a string
// column after an unconstrained numeric got a scale (a second live row), or
// an upper- and a lower-case varchar read into a uuid column (two source
// rows merged). Both were a breaker's findings, 2026-12-04.
func evolveRefused(tbl *table.Table, diff []SchemaChange, keyCols []string) string {
	for _, c := range diff {
		if c.Kind != "type-changed" || !slices.Contains(keyCols, c.Column) {
			continue
		}
		f, ok := tbl.Schema().FindFieldByName(c.Column)
		if !ok {
			continue
		}
		switch f.Type.(type) {
		case iceberg.Int32Type, iceberg.Int64Type, iceberg.DecimalType:
			continue
		}
		return fmt.Sprintf("key column %s is held as %s, and its new %s values could be spelled differently for the same key, or alike for two keys; mirror the source into a new table instead", c.Column, c.From, c.To)
	}
	return ""
}

// promotable reports Iceberg's allowed type promotions (spec, "Schema
// Evolution"): int → long, float → double, decimal(p,s) → decimal(p',s)
// with p' > p.
func promotable(from, to cdc.Type) bool {
	switch {
	case from.Kind == cdc.KindInt && to.Kind == cdc.KindInt:
		return from.Bits == 32 && to.Bits == 64
	case from.Kind == cdc.KindFloat && to.Kind == cdc.KindFloat:
		return from.Bits == 32 && to.Bits == 64
	case from.Kind == cdc.KindDecimal && to.Kind == cdc.KindDecimal:
		return from.Scale == to.Scale && to.Precision > from.Precision
	}
	return false
}

func sameType(a, b cdc.Type) bool { return a.String() == b.String() }

// schemaFingerprint identifies a Connect column list.
func schemaFingerprint(cols []cdc.Column) string {
	h := sha256.New()
	for _, c := range cols {
		fmt.Fprintf(h, "%s:%s;", c.Name, c.Type)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// diffSchema compares an event's Connect columns with the table. hasValues
// tells whether a table column holds non-null values; maxSeq is the
// highest position of the batch's events that carry cols: a table column
// missing from cols is "dropped" only when some of them are at or above
// the column's PropColumnSince position (events below it predate the
// column).
func diffSchema(tbl *table.Table, cols []cdc.Column, maxSeq cdc.Seq, ignored map[string]bool, hasValues func(name string) bool) ([]SchemaChange, error) {
	var out []SchemaChange
	sc := tbl.Schema()
	sys, err := lakecat.SystemColumnsOf(sc)
	if err != nil {
		return nil, err
	}
	inEvent := map[string]bool{}
	for _, c := range cols {
		if ignored[c.Name] {
			continue // a reserved name left out of the tables
		}
		inEvent[c.Name] = true
		f, ok := sc.FindFieldByName(c.Name)
		if !ok {
			out = append(out, SchemaChange{Column: c.Name, Kind: "added", To: c.Type.String(), Allowed: true})
			continue
		}
		have, err := lakecat.CDCType(f.Type)
		if err != nil {
			return nil, err
		}
		switch {
		case sameType(have, c.Type):
		case promotable(have, c.Type):
			out = append(out, SchemaChange{Column: c.Name, Kind: "widened", From: have.String(), To: c.Type.String(), Allowed: true})
		case promotable(c.Type, have):
			// the source narrowed a column the table already widened: values still fit the table
		default:
			out = append(out, SchemaChange{Column: c.Name, Kind: "type-changed", From: have.String(), To: c.Type.String()})
		}
	}
	for _, f := range sc.Fields() {
		if sys.Has(f.Name) || inEvent[f.Name] {
			continue
		}
		if since := columnSince(tbl)[f.Name]; since != "" && maxSeq < since {
			continue // every event with this schema predates the column
		}
		if hasValues(f.Name) {
			out = append(out, SchemaChange{Column: f.Name, Kind: "dropped", From: f.Type.String()})
		}
	}
	return out, nil
}

// columnsWithValues returns the table's columns that hold at least one
// non-null value, from the data files' column statistics (value count
// above null count), without reading data.
func columnsWithValues(ctx context.Context, tbl *table.Table) (map[string]bool, error) {
	out := map[string]bool{}
	if tbl.CurrentSnapshot() == nil {
		return out, nil
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("lake: plan scan: %w", err)
	}
	sc := tbl.Schema()
	for _, t := range tasks {
		vc, nc := t.File.ValueCounts(), t.File.NullValueCounts()
		for id, n := range vc {
			if n > nc[id] {
				if name, ok := sc.FindColumnName(id); ok {
					out[name] = true
				}
			}
		}
	}
	return out, nil
}

// columnSince reads PropColumnSince (positions decoded from hex); a
// missing or unreadable property is empty.
func columnSince(tbl *table.Table) map[string]cdc.Seq {
	var hexes map[string]string
	_ = json.Unmarshal([]byte(tbl.Properties()[PropColumnSince]), &hexes)
	out := make(map[string]cdc.Seq, len(hexes))
	for c, h := range hexes {
		if s, err := cdc.ParseSeqHex(h); err == nil {
			out[c] = s
		}
	}
	return out
}

func acceptedSchemas(tbl *table.Table) []string {
	var out []string
	_ = json.Unmarshal([]byte(tbl.Properties()[PropAcceptedSchemas]), &out)
	return out
}

// applySchemaChanges evolves the table for the allowed changes (new
// optional columns, widenings), records accepted fingerprints and, for
// each added column, its PropColumnSince position from since, in one
// schema commit.
func applySchemaChanges(ctx context.Context, tbl *table.Table, changes []SchemaChange, newCols map[string]cdc.Column, accept []string, since map[string]cdc.Seq) (*table.Table, []string, error) {
	var added []string
	tx := tbl.NewTransaction()
	up := tx.UpdateSchema(true, false)
	n := 0
	sort.Slice(changes, func(i, j int) bool { return changes[i].Column < changes[j].Column })
	for _, c := range changes {
		if !c.Allowed {
			continue
		}
		col := newCols[c.Column]
		t, err := lakecat.IcebergType(col.Type)
		if err != nil {
			return nil, nil, fmt.Errorf("lake: column %q: %w", c.Column, err)
		}
		switch c.Kind {
		case "added":
			up = up.AddColumn([]string{c.Column}, t, "added by lakemirror when it first appeared in the stream", false, nil)
			added = append(added, c.Column)
		case "widened":
			up = up.UpdateColumn([]string{c.Column}, table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Val: t, Valid: true}})
		}
		n++
	}
	if n > 0 {
		if err := up.Commit(); err != nil {
			return nil, nil, fmt.Errorf("lake: evolve schema: %w", err)
		}
	}
	if len(accept) > 0 {
		all := acceptedSchemas(tbl)
		for _, fp := range accept {
			if !slices.Contains(all, fp) {
				all = append(all, fp)
			}
		}
		b, _ := json.Marshal(all)
		if err := tx.SetProperties(iceberg.Properties{PropAcceptedSchemas: string(b)}); err != nil {
			return nil, nil, err
		}
	}
	if len(added) > 0 {
		all := map[string]string{}
		for c, s := range columnSince(tbl) {
			all[c] = s.Hex()
		}
		for _, c := range added {
			if s := since[c]; s != "" {
				all[c] = s.Hex()
			}
		}
		b, _ := json.Marshal(all)
		if err := tx.SetProperties(iceberg.Properties{PropColumnSince: string(b)}); err != nil {
			return nil, nil, err
		}
	}
	if n == 0 && len(accept) == 0 {
		return tbl, nil, nil
	}
	newTbl, err := lakecat.CommitTx(ctx, tbl, tx)
	if err != nil {
		return nil, nil, fmt.Errorf("lake: commit schema change: %w", err)
	}
	return newTbl, added, nil
}
