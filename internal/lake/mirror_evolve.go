package lake

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/schemas"
)

// evolve adds to the mirror every column that appears (with a non-NULL
// value) in the batch's row images but not in the table, as an optional
// column typed from the events' Connect schema or, without one, inferred
// from the values. It commits the schema change on its own, before the
// batch's data, and returns the reloaded table and the added names.
// Widening and incompatible changes are out of its scope: a value that
// does not fit its column fails the batch in conform.
func (w *MirrorWriter) evolve(ctx context.Context, tbl *table.Table, events []*cdc.Event) (*table.Table, []string, error) {
	sc := tbl.Schema()
	var added []cdc.Column
	seen := map[string]bool{}
	var inferred []cdc.Column
	for _, e := range events {
		for _, img := range []*cdc.Row{e.Before, e.After} {
			if img == nil {
				continue
			}
			for i, name := range img.Cols.Names {
				if seen[name] || img.Vals[i].IsNull() {
					continue
				}
				if _, ok := sc.FindFieldByName(name); ok {
					continue
				}
				seen[name] = true
				col, ok := columnFromSchema(e.Schema, name)
				if !ok {
					if inferred == nil {
						inferred = schemas.InferColumns(events)
					}
					col, _ = columnFromSchema(inferred, name)
				}
				col.Name, col.Optional = name, true
				added = append(added, col)
			}
		}
	}
	if len(added) == 0 {
		return tbl, nil, nil
	}
	tx := tbl.NewTransaction()
	up := tx.UpdateSchema(true, false)
	names := make([]string, 0, len(added))
	for _, c := range added {
		t, err := icebergType(c.Type)
		if err != nil {
			return nil, nil, fmt.Errorf("lake: new column %q: %w", c.Name, err)
		}
		up = up.AddColumn([]string{c.Name}, t, "added by lakemirror when it first appeared in the stream", false, nil)
		names = append(names, c.Name)
	}
	if err := up.Commit(); err != nil {
		return nil, nil, fmt.Errorf("lake: add columns %v: %w", names, err)
	}
	newTbl, err := tx.Commit(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("lake: commit new columns %v: %w", names, err)
	}
	return newTbl, names, nil
}

func columnFromSchema(cols []cdc.Column, name string) (cdc.Column, bool) {
	for _, c := range cols {
		if c.Name == name {
			return c, true
		}
	}
	return cdc.Column{Type: cdc.TypeString}, false
}
