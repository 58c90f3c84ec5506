package lake

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/payload"
)

func newCatalog(t testing.TB) catalog.Catalog {
	t.Helper()
	cat, err := lakecat.OpenCatalog(context.Background(), lakecat.CatalogConfig{LocalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

var (
	orderKey    = []string{"order_id"}
	orderCols   = cdc.NewColumns([]string{"order_id", "status", "amount"})
	orderSchema = []cdc.Column{
		{Name: "order_id", Type: cdc.TypeLong},
		{Name: "status", Type: cdc.TypeString, Optional: true},
		{Name: "amount", Type: cdc.DecimalType(10, 2), Optional: true},
	}
	testTable = lakecat.TableName{Namespace: "shop", Name: "orders"}
)

// ev builds an orders change at PostgreSQL position lsn; status "" means a
// key-only image (a delete under the default replica identity).
func ev(op cdc.Op, lsn uint64, id int64, status string, cents int64) *cdc.Event {
	row := &cdc.Row{Cols: orderCols, Vals: []cdc.Value{cdc.Int(id), cdc.String(status), cdc.Decimal(cents, 2)}}
	if status == "" {
		row.Vals[1], row.Vals[2] = cdc.Null(), cdc.Null()
	}
	e := &cdc.Event{Op: op, Seq: cdc.PostgresSeq(0, lsn), SourceTs: int64(lsn) * 1_000_000, Schema: orderSchema,
		Origin: cdc.Origin{Topic: "shop.public.orders", Offset: int64(lsn)}}
	if op == cdc.OpDelete {
		e.Before = row
	} else {
		e.After = row
	}
	e.Key, _ = cdc.KeyOf(row, orderKey)
	return e
}

// apply prepares and applies one batch, as the ApplyBatch activity does.
func apply(w *MirrorWriter, b Batch, events []*cdc.Event) (MirrorResult, Offsets, error) {
	p, err := w.Prepare(context.Background(), events)
	if err != nil {
		return MirrorResult{}, nil, err
	}
	return w.Apply(context.Background(), b, p.Events)
}

// mirrorLines reads the mirror and renders "id status amount @lsn deleted".
func mirrorLines(t *testing.T, cat catalog.Catalog) string {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), testTable.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := ReadRows(context.Background(), tbl, orderKey)
	if err != nil {
		t.Fatal(err)
	}
	del, err := lakecat.SoftDeleteColumn(tbl.Schema())
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range rows {
		seq, err := cdc.ParseSeqHex(r[lakecat.ColSeq].(string))
		if err != nil {
			t.Fatal(err)
		}
		w := seq.Words()
		lines = append(lines, fmt.Sprintf("%v %v %v @%d deleted=%v", r["order_id"], r["status"], r["amount"], w[len(w)-1], r[del]))
	}
	return strings.Join(lines, "\n")
}

func batch(seq int64) Batch {
	return Batch{ID: fmt.Sprintf("shop.orders#%d", seq), Seq: seq, Topic: "shop.public.orders",
		Ranges: []Range{{Partition: 0, From: seq * 10, To: seq*10 + 10}}, EndOffsets: Offsets{0: seq*10 + 10}}
}

// The scenario of issue 2 through real Iceberg tables: exact mirror rows
// after each batch, a replayed batch and a late batch are no-ops, and a
// fresh writer (a restarted worker) rebuilds its key index from the table.
func TestMirrorScenario(t *testing.T) {
	ctx := context.Background()
	cat := newCatalog(t)
	w := NewMirrorWriter(cat, testTable, orderKey)
	batch1 := []*cdc.Event{
		ev(cdc.OpCreate, 1, 1001, "placed", 2550), ev(cdc.OpCreate, 2, 1002, "placed", 1200),
		ev(cdc.OpUpdate, 3, 1001, "paid", 2550), ev(cdc.OpCreate, 4, 1003, "placed", 6000),
	}
	res, end, err := apply(w, batch(1), batch1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Inserted != 3 || res.Collapsed != 1 || res.RowsWritten != 3 || res.PositionDeletes != 0 || end[0] != 20 {
		t.Fatalf("batch 1 result %+v end %v", res, end)
	}
	want1 := "1001 paid 25.50 @3 deleted=false\n1002 placed 12.00 @2 deleted=false\n1003 placed 60.00 @4 deleted=false"
	if got := mirrorLines(t, cat); got != want1 {
		t.Fatalf("after batch 1:\n%s\nwant\n%s", got, want1)
	}
	batch2 := func() []*cdc.Event {
		return []*cdc.Event{ev(cdc.OpUpdate, 5, 1001, "shipped", 2550), ev(cdc.OpDelete, 6, 1002, "", 0), ev(cdc.OpUpdate, 7, 1003, "paid", 6000)}
	}
	if res, _, err = apply(w, batch(2), batch2()); err != nil {
		t.Fatal(err)
	}
	if res.Updated != 2 || res.Deleted != 1 || res.PositionDeletes != 3 {
		t.Fatalf("batch 2 result %+v", res)
	}
	want2 := "1001 shipped 25.50 @5 deleted=false\n1002 placed 12.00 @6 deleted=true\n1003 paid 60.00 @7 deleted=false"
	if got := mirrorLines(t, cat); got != want2 {
		t.Fatalf("after batch 2:\n%s\nwant\n%s", got, want2)
	}
	// the same batch again (a retried activity): found committed, nothing written
	res, end, err = apply(w, batch(2), batch2())
	if err != nil || !res.AlreadyCommitted || res.Updated != 2 || end[0] != 30 {
		t.Fatalf("retried batch 2: %+v %v %v", res, end, err)
	}
	// batch 2's events again as a new batch (a replay): all duplicates
	if res, _, err = apply(w, batch(3), batch2()); err != nil || res.Duplicates != 3 || res.RowsWritten != 0 {
		t.Fatalf("replayed batch 2: %+v %v", res, err)
	}
	// a fresh writer, as after a worker restart, rebuilds its index
	w2 := NewMirrorWriter(cat, testTable, orderKey)
	late := []*cdc.Event{ev(cdc.OpUpdate, 3, 1001, "paid", 2550), ev(cdc.OpCreate, 2, 1002, "placed", 1200)}
	if res, _, err = apply(w2, batch(4), late); err != nil || res.Stale != 2 || res.RowsWritten != 0 {
		t.Fatalf("late batch: %+v %v", res, err)
	}
	if got := mirrorLines(t, cat); got != want2 {
		t.Fatalf("after replay and late batch:\n%s\nwant\n%s", got, want2)
	}
	if w2.Index().Len() != 3 || w2.Index().Duplicates != 0 {
		t.Fatalf("rebuilt index: %d keys, %d duplicates", w2.Index().Len(), w2.Index().Duplicates)
	}
	tbl, _ := cat.LoadTable(ctx, testTable.Mirror())
	cp, err := ReadCheckpoint(tbl)
	if err != nil || cp.BatchSeq != 4 || cp.EndOffsets[0] != 50 {
		t.Fatalf("checkpoint %+v %v", cp, err)
	}
	var summ MirrorResult
	_ = json.Unmarshal(cp.Result, &summ)
	if summ.Stale != 2 {
		t.Fatalf("recorded result %+v", summ)
	}
}

func TestBronzeSkipsRecordsItHolds(t *testing.T) {
	ctx := context.Background()
	cat := newCatalog(t)
	recs := func(from, to int64) []BronzeRecord {
		var out []BronzeRecord
		for o := from; o < to; o++ {
			out = append(out, BronzeRecord{Record: payload.Record{Partition: 0, Offset: o, Key: []byte(fmt.Sprintf(`{"id":%d}`, o)), Value: []byte(`{}`),
				Timestamp: 1_700_000_000_000_000, Headers: []BronzeHeader{{Key: "h", Value: []byte("v")}}},
				Op: "c", Seq: cdc.PostgresSeq(0, uint64(o))})
		}
		return out
	}
	b := Batch{ID: "b1", Seq: 1, Topic: "t", Ranges: []Range{{Partition: 0, From: 0, To: 5}}, EndOffsets: Offsets{0: 5}}
	r, err := AppendBronze(ctx, cat, testTable, b, recs(0, 5))
	if err != nil || r.Appended != 5 {
		t.Fatalf("%+v %v", r, err)
	}
	// retry of the same batch (its result was lost): writes nothing and
	// reports the counts of the commit that wrote it
	if r, err = AppendBronze(ctx, cat, testTable, b, recs(0, 5)); err != nil || r.Appended != 5 || r.Skipped != 0 || r.BatchID != "b1" {
		t.Fatalf("retry: %+v %v", r, err)
	}
	// a backfill overlapping the held range
	b2 := Batch{ID: "b2", Seq: 2, Topic: "t", Ranges: []Range{{Partition: 0, From: 3, To: 8}}, EndOffsets: Offsets{0: 8}}
	if r, err = AppendBronze(ctx, cat, testTable, b2, recs(3, 8)); err != nil || r.Appended != 3 || r.Skipped != 2 {
		t.Fatalf("overlap: %+v %v", r, err)
	}
	tbl, _ := cat.LoadTable(ctx, testTable.Bronze())
	rows, _, err := ReadRows(ctx, tbl, []string{lakecat.BronzePartition, lakecat.BronzeOffset})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 8 {
		t.Fatalf("%d bronze rows, want 8", len(rows))
	}
	for i, row := range rows {
		if row[lakecat.BronzeOffset] != int64(i) || row[lakecat.BronzeKey] != fmt.Sprintf(`{"id":%d}`, i) || row[lakecat.BronzeOp] != "c" {
			t.Fatalf("row %d = %v", i, row)
		}
	}
	if h := fmt.Sprint(rows[0][lakecat.BronzeHeaders]); h != "[map[key:h value:v]]" {
		t.Fatalf("headers %s", h)
	}
}
