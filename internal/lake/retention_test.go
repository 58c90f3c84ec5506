package lake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/maintain"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/schemas"
)

// Bronze retention drops exactly the day partitions (and quarantine
// files) ingested before now − retention, whole, and keeps the rest; a
// late-key rebuild that needs a dropped change stops with
// PastTrimmedError and writes nothing, one whose changes are all kept
// rebuilds, and KeepApplied takes the stopped key out of the pending set.
func TestBronzeRetention(t *testing.T) {
	ctx := context.Background()
	defer func(c func() time.Time) { ingestClock = c }(ingestClock)
	at := func(m time.Month, d int) func() time.Time {
		return func() time.Time { return time.Date(2026, m, d, 10, 0, 0, 0, time.UTC) }
	}
	p, load := newLayoutPipeline(t, layout.Tables{}) // bronze by day(_ingested_at), the default
	quarantine := func(off int64) {
		t.Helper()
		b := Batch{ID: fmt.Sprint("q", off), Seq: off, Topic: "t"}
		if _, err := AppendQuarantine(ctx, p.cat, testTable, b, []QuarantineRecord{{Offset: off, Value: []byte("{"), Stage: "decode", Reason: "not JSON"}}); err != nil {
			t.Fatal(err)
		}
	}
	ingestClock = at(time.January, 1)
	p.batch(orderValue("c", 10, 0, "", orderRow(1, "eu", 10)), orderValue("c", 11, 0, "", orderRow(2, "us", 20))) // offsets 0, 1
	quarantine(100)
	ingestClock = at(time.January, 25)
	p.batch(orderValue("u", 20, 1, orderRow(1, "eu", 10), orderRow(1, "eu", 15)), orderValue("c", 21, 1, "", orderRow(3, "us", 30))) // 2, 3
	quarantine(101)
	ingestClock = at(time.February, 15)
	p.batch(orderValue("u", 30, 2, orderRow(3, "us", 30), orderRow(3, "us", 35))) // 4

	now := time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC) // cutoff 2026-01-21T12:00Z: January 1 is past, January 25 is not
	if _, err := maintain.TrimBronze(ctx, p.cat, testTable, 12*time.Hour, now); err == nil {
		t.Fatal("a retention below a day was taken")
	}
	res, err := maintain.TrimBronze(ctx, p.cat, testTable, 30*24*time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	b, q := res["bronze"], res["quarantine"]
	if b.Cutoff != "2026-01-21T12:00:00Z" || b.FilesDropped != 1 || b.RowsDropped != 2 || b.FilesKept != 2 || b.RowsKept != 3 || b.FilesUnknown != 0 || b.SnapshotID == 0 {
		t.Fatalf("bronze: %+v", b)
	}
	if q.FilesDropped != 1 || q.RowsDropped != 1 || q.FilesKept != 1 || q.RowsKept != 1 || q.FilesUnknown != 0 {
		t.Fatalf("quarantine (unpartitioned, by its _ingested_at bound): %+v", q)
	}
	bronze := load(testTable.Bronze())
	if got := liveRows(t, bronze, lakecat.BronzeOffset); !slices.Equal(got, []string{"2", "3", "4"}) {
		t.Fatalf("bronze offsets kept %v, want 2 3 4", got)
	}
	if got := liveRows(t, load(testTable.Quarantine()), lakecat.BronzeOffset); !slices.Equal(got, []string{"101"}) {
		t.Fatalf("quarantine offsets kept %v, want 101", got)
	}
	if tb, err := maintain.TrimmedBefore(bronze); err != nil || !tb.Equal(time.Date(2026, 1, 21, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("trimmed before %s %v", tb, err)
	}
	if last, ok := maintain.LastTrim(bronze); !ok || last.FilesDropped != 1 || last.RowsDropped != 2 {
		t.Fatalf("last trim %+v %v", last, ok)
	}
	// a second run the same day finds nothing more to drop and commits nothing
	snap := bronze.CurrentSnapshot().SnapshotID
	if res, err = maintain.TrimBronze(ctx, p.cat, testTable, 30*24*time.Hour, now); err != nil || res["bronze"].FilesDropped != 0 || res["bronze"].FilesKept != 2 {
		t.Fatalf("second run: %+v %v", res, err)
	}
	if load(testTable.Bronze()).CurrentSnapshot().SnapshotID != snap {
		t.Fatal("a run that dropped nothing committed")
	}
	// the mirror and history are untouched
	if got := liveRows(t, load(testTable.Mirror()), "id", "amount"); !slices.Equal(got, []string{"1 15", "2 20", "3 35"}) {
		t.Fatalf("mirror %v", got)
	}

	// A worker that starts afresh (its local state built from the tables)
	// gets a late change of key 1, between its dropped create and its
	// kept update: the key goes to the pending set, and its past read
	// back from bronze lacks the create.
	ingestClock = at(time.February, 20)
	tw2 := NewTableWriter(p.cat, testTable, []string{"id"}, WriterOptions{History: true, StateDir: t.TempDir()})
	t.Cleanup(func() { tw2.Mirror.State().Close() })
	p2 := &layoutPipeline{t: t, tw: tw2, cat: p.cat, dec: p.dec, seq: p.seq, offset: p.offset}
	p2.batch(orderValue("u", 15, 0, orderRow(1, "eu", 10), orderRow(1, "eu", 12))) // offset 5
	pending, err := tw2.Pending(ctx)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending %v %v", pending, err)
	}
	past := pastFromBronze(t, p2, tw2)
	k1, k3 := keyOf(t, p.dec, 1), keyOf(t, p.dec, 3)
	if len(past[k1]) != 2 || len(past[k3]) != 2 {
		t.Fatalf("past from bronze: key 1 %d changes, key 3 %d, want 2 and 2", len(past[k1]), len(past[k3]))
	}
	if pending[0] != k1 {
		t.Fatalf("pending %x, want key 1", pending[0])
	}
	hist, mir := load(testTable.History()).CurrentSnapshot().SnapshotID, load(testTable.Mirror()).CurrentSnapshot().SnapshotID
	_, _, err = tw2.Rebuild(ctx, map[cdc.Key][]*cdc.Event{k1: past[k1], k3: past[k3]})
	var pt *PastTrimmedError
	if !errors.As(err, &pt) || pt.Keys != 1 || pt.Missing != seqOf(t, p.dec, orderValue("c", 10, 0, "", orderRow(1, "eu", 10))) {
		t.Fatalf("rebuild past the retention: %v", err)
	}
	if load(testTable.History()).CurrentSnapshot().SnapshotID != hist || load(testTable.Mirror()).CurrentSnapshot().SnapshotID != mir {
		t.Fatal("a stopped rebuild committed")
	}
	if got := liveRows(t, load(testTable.History()), "id", "amount"); !slices.Equal(got, []string{"1 10", "1 15", "2 20", "3 30", "3 35"}) {
		t.Fatalf("history after the stop %v", got)
	}
	// key 3's changes are all in bronze: it rebuilds (to the same rows)
	_, h, err := tw2.Rebuild(ctx, map[cdc.Key][]*cdc.Event{k3: past[k3]})
	if err != nil || h.Keys != 1 || h.Unchanged != 1 {
		t.Fatalf("rebuild of a key bronze holds whole: %+v %v", h, err)
	}
	// the operator keeps key 1 as applied: it leaves the pending set
	kept, err := tw2.KeepApplied(ctx, map[cdc.Key][]*cdc.Event{k1: past[k1], k3: past[k3]})
	if err != nil || len(kept) != 1 || kept[0].Key != k1 {
		t.Fatalf("keep applied: %v %v", kept, err)
	}
	if pending, err = tw2.Pending(ctx); err != nil || len(pending) != 0 {
		t.Fatalf("pending after keep-applied %v %v", pending, err)
	}
}

// pastFromBronze reads every bronze record back and prepares it as the
// RebuildKeys activity does, grouped by key.
func pastFromBronze(t *testing.T, p *layoutPipeline, tw *TableWriter) map[cdc.Key][]*cdc.Event {
	t.Helper()
	ctx := context.Background()
	var events []*cdc.Event
	err := tableread.ScanBronze(ctx, p.cat, testTable, func(rows []BronzeRow) error {
		for _, r := range rows {
			d, err := p.dec.Decode(schemas.Record{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value})
			if err != nil {
				return err
			}
			if d.Kind == schemas.KindChange {
				events = append(events, d.Event)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	prep, err := tw.Mirror.Prepare(ctx, events, WithSchemaDecision(DecisionSkip), ForPastChanges())
	if err != nil {
		t.Fatal(err)
	}
	out := map[cdc.Key][]*cdc.Event{}
	for _, e := range prep.Events {
		out[e.Key] = append(out[e.Key], e)
	}
	return out
}

func keyOf(t *testing.T, dec *schemas.Decoder, id int) cdc.Key {
	t.Helper()
	d, err := dec.Decode(schemas.Record{Topic: "t", Value: orderValue("c", 1, 0, "", orderRow(id, "eu", 1))})
	if err != nil {
		t.Fatal(err)
	}
	return d.Event.Key
}

func seqOf(t *testing.T, dec *schemas.Decoder, v []byte) cdc.Seq {
	t.Helper()
	d, err := dec.Decode(schemas.Record{Topic: "t", Value: v})
	if err != nil {
		t.Fatal(err)
	}
	return d.Event.Seq
}
