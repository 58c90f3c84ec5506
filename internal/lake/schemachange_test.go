package lake

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/evolve"
)

// withTier is ev with the orders schema plus a "tier" column.
func withTier(op cdc.Op, lsn uint64, id int64, status, tier string, schema []cdc.Column) *cdc.Event {
	e := ev(op, lsn, id, status, 100)
	cols := cdc.NewColumns([]string{"order_id", "status", "amount", "tier"})
	e.After = &cdc.Row{Cols: cols, Vals: append(e.After.Vals, cdc.String(tier))}
	e.Schema = schema
	return e
}

// Events replayed or delivered late from before a column was added lack
// the column; they predate it (evolve.PropColumnSince) and do not block the
// table as a "dropped" column. An event after the column's first position
// that lacks it still blocks.
func TestStaleSchemaDoesNotBlock(t *testing.T) {
	ctx := context.Background()
	cat := newCatalog(t)
	w := NewMirrorWriter(cat, testTable, orderKey)
	v2 := append(append([]cdc.Column(nil), orderSchema...), cdc.Column{Name: "tier", Type: cdc.TypeString, Optional: true})
	if _, _, err := apply(w, batch(1), []*cdc.Event{ev(cdc.OpCreate, 10, 1, "placed", 100), ev(cdc.OpCreate, 20, 2, "placed", 200)}); err != nil {
		t.Fatal(err)
	}
	// tier appears at lsn 30 (and 40)
	if _, _, err := apply(w, batch(2), []*cdc.Event{withTier(cdc.OpUpdate, 40, 2, "paid", "gold", v2), withTier(cdc.OpUpdate, 30, 1, "paid", "silver", v2)}); err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, testTable.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	// the columns the table was created with: from the first batch's lowest
	// position (10); tier: from the lowest that carried it
	s10 := cdc.PostgresSeq(0, 10).Hex()
	if got := tbl.Properties()[evolve.PropColumnSince]; got != `{"amount":"`+s10+`","order_id":"`+s10+`","status":"`+s10+`","tier":"`+cdc.PostgresSeq(0, 30).Hex()+`"}` {
		t.Fatalf("%s = %s", evolve.PropColumnSince, got)
	}
	// a replay of batch 1 (old schema, positions below 30) plus a late
	// create of a new key from before tier existed: no block
	res, _, err := apply(w, batch(3), []*cdc.Event{ev(cdc.OpCreate, 10, 1, "placed", 100), ev(cdc.OpCreate, 25, 3, "placed", 300)})
	if err != nil {
		t.Fatalf("stale schema blocked: %v", err)
	}
	if res.Stale != 1 || res.Inserted != 1 {
		t.Fatalf("replay result %+v", res)
	}
	want := "1 paid 1.00 @30 deleted=false\n2 paid 1.00 @40 deleted=false\n3 placed 3.00 @25 deleted=false"
	if got := mirrorLines(t, cat); got != want {
		t.Fatalf("mirror:\n%s\nwant\n%s", got, want)
	}
	// the old schema again after the column's position: a real drop
	_, _, err = apply(w, batch(4), []*cdc.Event{ev(cdc.OpUpdate, 50, 1, "shipped", 100)})
	var blocked *SchemaBlockedError
	if !errors.As(err, &blocked) || !strings.Contains(err.Error(), `column "tier" dropped`) {
		t.Fatalf("drop after the column's position: %v", err)
	}
}
