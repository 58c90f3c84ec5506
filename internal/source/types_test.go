//go:build e2e

package source

import (
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// TestReadAllTypes reads every supported type back exactly: ReadChunk and
// Snapshot give the values of allTypesWant, bit for bit.
func TestReadAllTypes(t *testing.T) {
	db := newDB(t)
	ctx := ctxT(t)
	db.exec(t, allTypesDDL)
	info, err := db.src.Describe(ctx, "public", "all_types", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := allTypesWant()

	rows, last, err := db.src.ReadChunk(ctx, info, nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want) {
		t.Fatalf("ReadChunk returned %d rows, want %d", len(rows), len(want))
	}
	for _, r := range rows {
		checkRow(t, info, r, want)
	}
	if len(last) != 1 || !last[0].Equal(cdc.Int(4)) {
		t.Errorf("last = %v, want [4]", last)
	}

	var snap []*cdc.Row
	if _, err := db.src.Snapshot(ctx, info, 3, func(c Chunk) error {
		snap = append(snap, c.Rows...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(snap) != len(rows) {
		t.Fatalf("Snapshot returned %d rows, ReadChunk %d", len(snap), len(rows))
	}
	for i := range snap {
		for j := range snap[i].Vals {
			if !snap[i].Vals[j].Equal(rows[i].Vals[j]) {
				t.Errorf("row %d column %s: Snapshot %s, ReadChunk %s", i, info.Columns[j].Name, show(snap[i].Vals[j]), show(rows[i].Vals[j]))
			}
		}
	}
}

// TestReadErrors: values with no exact Debezium form are errors naming
// the column, never silent NULLs.
func TestReadErrors(t *testing.T) {
	db := newDB(t)
	ctx := ctxT(t)
	db.exec(t, `
		CREATE TABLE bad (id int PRIMARY KEY, n numeric(10,2), ts timestamp, d date, a int[]);
		INSERT INTO bad VALUES (1, 'NaN', NULL, NULL, NULL), (2, NULL, 'infinity', NULL, NULL),
		                       (3, NULL, NULL, '-infinity', NULL), (4, NULL, NULL, NULL, '{{1,2},{3,4}}');`)
	info, err := db.src.Describe(ctx, "public", "bad", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		after int64
		want  string
	}{
		{0, `column "n"`},
		{1, `column "ts"`},
		{2, `column "d"`},
		{3, `column "a"`},
	} {
		var after []cdc.Value
		if tc.after > 0 {
			after = []cdc.Value{cdc.Int(tc.after)}
		}
		_, _, err := db.src.ReadChunk(ctx, info, after, 1)
		if err == nil || !contains(err.Error(), tc.want) {
			t.Errorf("after %d: err = %v, want one naming %s", tc.after, err, tc.want)
		}
		if !IsDefinition(err) { // retrying cannot change the row
			t.Errorf("after %d: %v is not a definition error: a load or reconciliation would retry it", tc.after, err)
		}
	}
}
