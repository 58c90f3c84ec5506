package lake

import (
	"context"
	"errors"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
)

// WriteBatch, the write protocol behind one call: a first attempt reads
// and writes; a rerun of the batch committed in every table returns what
// the tables recorded without reading its records; a rerun of a batch
// not committed reads it; Read's error comes back unchanged.
func TestWriteBatchRerun(t *testing.T) {
	ctx := context.Background()
	cat, err := lakecat.OpenCatalog(ctx, lakecat.CatalogConfig{LocalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	tw := NewTableWriter(cat, testTable, orderKey, WriterOptions{History: true, WithoutBronze: true, StateDir: t.TempDir()})
	t.Cleanup(func() { tw.Mirror.State().Close() })
	tables := []string{"mirror", "history"}
	reads := 0
	read := func(events ...*cdc.Event) func(context.Context) (*TableWriter, WriteInput, error) {
		return func(context.Context) (*TableWriter, WriteInput, error) {
			reads++
			return tw, WriteInput{Events: events}, nil
		}
	}
	b1 := Batch{ID: "shop.orders#1", Seq: 1, Topic: "shop.public.orders", Ranges: []Range{{From: 1, To: 3}}, EndOffsets: Offsets{0: 3}}
	first, err := WriteBatch(ctx, cat, testTable, BatchInput{Batch: b1, Tables: tables, Rerun: true,
		Read: read(ev(cdc.OpCreate, 1, 1, "new", 100), ev(cdc.OpUpdate, 2, 1, "paid", 100))})
	if err != nil || first.Committed != nil || reads != 1 {
		t.Fatalf("first attempt: err %v, committed %v, reads %d; want a write after one read", err, first.Committed, reads)
	}
	if m := first.Mirror; m.Events != 2 || m.Applied != 2 || m.Inserted != 1 || first.EndOffsets[0] != 3 {
		t.Fatalf("first attempt: mirror %+v, end offsets %v", m, first.EndOffsets)
	}

	again, err := WriteBatch(ctx, cat, testTable, BatchInput{Batch: b1, Tables: tables, Rerun: true,
		Read: read(ev(cdc.OpCreate, 1, 1, "new", 100))})
	if err != nil || again.Committed == nil || reads != 1 {
		t.Fatalf("rerun of a committed batch: err %v, committed %v, reads %d; want the recorded result, no read", err, again.Committed, reads)
	}
	if c := again.Committed; c.Mirror.Events != 2 || c.Mirror.Applied != 2 || c.EndOffsets[0] != 3 || c.History.BatchSeq != 1 {
		t.Fatalf("rerun of a committed batch: mirror %+v, history %+v, end offsets %v", c.Mirror, c.History, c.EndOffsets)
	}

	b2 := Batch{ID: "shop.orders#2", Seq: 2, Topic: "shop.public.orders", Ranges: []Range{{From: 3, To: 4}}, EndOffsets: Offsets{0: 4}}
	fetch := errors.New("kafka: fetch failed")
	_, err = WriteBatch(ctx, cat, testTable, BatchInput{Batch: b2, Tables: tables, Rerun: true,
		Read: func(context.Context) (*TableWriter, WriteInput, error) { reads++; return nil, WriteInput{}, fetch }})
	if err != fetch || reads != 2 {
		t.Fatalf("rerun of a batch not committed: err %v, reads %d; want Read's error unchanged after one read", err, reads)
	}
	second, err := WriteBatch(ctx, cat, testTable, BatchInput{Batch: b2, Tables: tables, Rerun: true,
		Read: read(ev(cdc.OpDelete, 3, 1, "", 0))})
	if err != nil || second.Committed != nil || reads != 3 || second.Mirror.Applied != 1 || second.EndOffsets[0] != 4 {
		t.Fatalf("retry: err %v, committed %v, reads %d, mirror %+v, end offsets %v", err, second.Committed, reads, second.Mirror, second.EndOffsets)
	}
	if got, want := mirrorLines(t, cat), "1 paid 1.00 @3 deleted=true"; got != want {
		t.Fatalf("mirror:\n%s\nwant:\n%s", got, want)
	}
}
