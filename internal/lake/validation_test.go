package lake

import (
	"context"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/validation"
	"github.com/lakemirror/lakemirror/internal/validate"
)

// Every mirror batch records the applied position, the highest `_seq`
// ever applied: a batch of late events (a new key at an older position)
// has a lower batch watermark but leaves the applied position where it
// was; a batch that changes no row moves only the table properties. The
// mirror audit reads exactly that back, and the validation table holds one
// row per result.
func TestAppliedPositionAndAudits(t *testing.T) {
	ctx := context.Background()
	cat := newCatalog(t)
	w := NewMirrorWriter(cat, testTable, orderKey)
	seq := func(lsn uint64) string { return cdc.PostgresSeq(0, lsn).Hex() }
	if _, _, err := apply(w, batch(1), []*cdc.Event{ev(cdc.OpCreate, 50, 1, "placed", 100)}); err != nil {
		t.Fatal(err)
	}
	res, _, err := apply(w, batch(2), []*cdc.Event{ev(cdc.OpCreate, 30, 2, "placed", 100)})
	if err != nil || res.Watermark != seq(30) {
		t.Fatalf("late batch: watermark %s, %v", res.Watermark, err)
	}
	// a replay: nothing changes, no snapshot
	if _, _, err := apply(w, batch(3), []*cdc.Event{ev(cdc.OpCreate, 30, 2, "placed", 100)}); err != nil {
		t.Fatal(err)
	}
	a, err := validation.ReadMirrorAudit(ctx, cat, testTable)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Points) != 3 || a.Applied != seq(50) || a.MaxSeq != seq(50) || a.Rows != 2 || a.MaxSourceTs != 50_000_000 {
		t.Fatalf("audit %+v", a)
	}
	for i, want := range []validate.Point{
		{BatchSeq: 1, Applied: seq(50), EndOffsets: map[int32]int64{0: 20}},
		{BatchSeq: 2, Applied: seq(50), EndOffsets: map[int32]int64{0: 30}},
		{Snapshot: 0, BatchSeq: 3, Applied: seq(50), EndOffsets: map[int32]int64{0: 40}},
	} {
		got := a.Points[i]
		if i < 2 && got.Snapshot == 0 {
			t.Fatalf("point %d has no snapshot: %+v", i, got)
		}
		if i < 2 {
			want.Snapshot = got.Snapshot
		}
		if got.Snapshot != want.Snapshot || got.BatchSeq != want.BatchSeq || got.Applied != want.Applied || got.EndOffsets[0] != want.EndOffsets[0] || len(got.EndOffsets) != 1 {
			t.Fatalf("point %d: %+v, want %+v", i, got, want)
		}
	}
	if r := validate.Watermarks(a.Points, a.MaxSeq, a.Applied); r.Verdict != validate.Pass {
		t.Fatalf("watermarks: %+v", r)
	}
	// a table whose commits predate the applied position starts at its
	// rows' highest _seq, also when its next batch is late
	tbl, err := lakecat.LoadTable(ctx, cat, testTable.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.RemoveProperties([]string{PropAppliedPosition}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	w = NewMirrorWriter(cat, testTable, orderKey) // a restarted worker
	if _, _, err := apply(w, batch(4), []*cdc.Event{ev(cdc.OpCreate, 40, 3, "placed", 100)}); err != nil {
		t.Fatal(err)
	}
	if tbl, err = lakecat.LoadTable(ctx, cat, testTable.Mirror()); err != nil || tbl.Properties()[PropAppliedPosition] != seq(50) {
		t.Fatalf("applied position after an upgrade and a late batch: %q, %v", tbl.Properties()[PropAppliedPosition], err)
	}
	// no bronze table: nil
	if b, err := validation.ReadBronzeAudit(ctx, cat, testTable, "shop.public.orders"); b != nil || err != nil {
		t.Fatalf("bronze audit without bronze: %+v %v", b, err)
	}
	at := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	results := []validate.Result{
		{Check: validate.CheckWatermark, Scope: "3 mirror snapshots", Expected: "e", Observed: "o", Verdict: validate.Pass},
		{Check: validate.CheckTransitions, Scope: "s", Expected: "e", Observed: "o", Verdict: validate.Fail, Total: 1,
			Findings: []validate.Finding{{Key: "0a", What: "create after a create without a delete between"}}},
	}
	snap, err := validation.Append(ctx, cat, testTable, "run-1", at, results)
	if err != nil || snap == 0 {
		t.Fatalf("append: %d %v", snap, err)
	}
	if tbl, err = lakecat.LoadTable(ctx, cat, testTable.Validation()); err != nil {
		t.Fatal(err)
	}
	rows, _, err := ReadRows(ctx, tbl, []string{validation.ValCheck})
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows %v %v", rows, err)
	}
	want := Row{validation.ValCheck: "transitions", validation.ValScope: "s", validation.ValExpected: "e", validation.ValObserved: "o", validation.ValVerdict: "fail",
		validation.ValDetails: "key 0a: create after a create without a delete between", validation.ValCheckedAt: "2026-12-02T03:00:00.000000Z", validation.ValRunID: "run-1"}
	for k, v := range want {
		if rows[0][k] != v {
			t.Fatalf("row %v: %s = %v, want %v", rows[0], k, rows[0][k], v)
		}
	}
	if rows[1][validation.ValCheck] != "watermark" || rows[1][validation.ValDetails] != "" {
		t.Fatalf("second row %v", rows[1])
	}
}
