package merge

import (
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

var orderKey = []string{"order_id"}

// The scenario of issue 2: two batches, a replay of batch 2, then a late
// batch; the mirror after each step is asserted exactly.
func TestIssueScenario(t *testing.T) {
	batch1 := []*cdc.Event{
		ev(cdc.OpCreate, 1, 1001, "placed", 2550),
		ev(cdc.OpCreate, 2, 1002, "placed", 1200),
		ev(cdc.OpUpdate, 3, 1001, "paid", 2550),
		ev(cdc.OpCreate, 4, 1003, "placed", 6000),
	}
	batch2 := []*cdc.Event{
		ev(cdc.OpUpdate, 5, 1001, "shipped", 2550),
		ev(cdc.OpDelete, 6, 1002, "", 0), // default replica identity: key only
		ev(cdc.OpUpdate, 7, 1003, "paid", 6000),
	}
	late := []*cdc.Event{
		ev(cdc.OpUpdate, 3, 1001, "paid", 2550),
		ev(cdc.OpCreate, 2, 1002, "placed", 1200),
	}
	m := simMirror{}
	m.apply(batch1, orderKey)
	want1 := "order_id=1001 status=paid amount=25.50 @3 deleted=false\n" +
		"order_id=1002 status=placed amount=12.00 @2 deleted=false\n" +
		"order_id=1003 status=placed amount=60.00 @4 deleted=false"
	if got := m.dump(); got != want1 {
		t.Fatalf("after batch 1:\n%s\nwant:\n%s", got, want1)
	}
	want2 := "order_id=1001 status=shipped amount=25.50 @5 deleted=false\n" +
		"order_id=1002 status=placed amount=12.00 @6 deleted=true\n" +
		"order_id=1003 status=paid amount=60.00 @7 deleted=false"
	m.apply(batch2, orderKey)
	if got := m.dump(); got != want2 {
		t.Fatalf("after batch 2:\n%s\nwant:\n%s", got, want2)
	}
	m.apply(batch2, orderKey)
	if got := m.dump(); got != want2 {
		t.Fatalf("after batch 2 replayed:\n%s\nwant:\n%s", got, want2)
	}
	m.apply(late, orderKey)
	if got := m.dump(); got != want2 {
		t.Fatalf("after the late batch:\n%s\nwant:\n%s", got, want2)
	}
}

func TestFoldCounts(t *testing.T) {
	g := GroupByKey([]*cdc.Event{
		ev(cdc.OpUpdate, 9, 1, "paid", 100),
		ev(cdc.OpUpdate, 5, 1, "placed", 100), // stale: stored is @7
		ev(cdc.OpUpdate, 7, 1, "placed", 100), // duplicate of the stored change
		ev(cdc.OpUpdate, 9, 1, "paid", 100),   // duplicate inside the batch
		ev(cdc.OpUpdate, 8, 1, "placed", 150), // collapsed by @9
	})
	if len(g) != 1 || g[0].Duplicates != 1 || len(g[0].Events) != 4 {
		t.Fatalf("groups = %+v", g)
	}
	o := Fold(Stored{Found: true, Seq: cdc.PostgresSeq(0, 7)}, g[0], orderKey)
	if !o.Changed || !o.Replaces || o.Applied != 2 || o.Stale != 1 || o.Duplicates != 2 || o.Deleted || o.Op != cdc.OpUpdate {
		t.Fatalf("outcome = %+v", o)
	}
	if o.Seq != cdc.PostgresSeq(0, 9) || show(o.Values.Vals[1]) != "paid" {
		t.Fatalf("outcome seq %v values %v", o.Seq, o.Values.Vals)
	}
}

func TestDeleteOfUnseenKeyThenOlderCreate(t *testing.T) {
	m := simMirror{}
	m.apply([]*cdc.Event{ev(cdc.OpDelete, 10, 7, "", 0)}, orderKey)
	want := "order_id=7 status=NULL amount=NULL @10 deleted=true"
	if got := m.dump(); got != want {
		t.Fatalf("got %s want %s", got, want)
	}
	m.apply([]*cdc.Event{ev(cdc.OpCreate, 4, 7, "placed", 100)}, orderKey)
	if got := m.dump(); got != want {
		t.Fatalf("an older create revived a deleted row: %s", got)
	}
	m.apply([]*cdc.Event{ev(cdc.OpCreate, 11, 7, "placed", 100)}, orderKey)
	if got, want := m.dump(), "order_id=7 status=placed amount=1.00 @11 deleted=false"; got != want {
		t.Fatalf("newer create did not revive: got %s want %s", got, want)
	}
}

func TestDeleteKeepsValues(t *testing.T) {
	// before image with values: kept as is
	full := ev(cdc.OpDelete, 5, 1, "shipped", 900)
	o := Fold(Stored{Found: true, Seq: cdc.PostgresSeq(0, 4)}, GroupByKey([]*cdc.Event{full})[0], orderKey)
	if o.ValuesFromStored || show(o.Values.Vals[1]) != "shipped" || !o.Deleted {
		t.Fatalf("full before image: %+v", o)
	}
	// key-only before image: stored values kept
	o = Fold(Stored{Found: true, Seq: cdc.PostgresSeq(0, 4)}, GroupByKey([]*cdc.Event{ev(cdc.OpDelete, 5, 1, "", 0)})[0], orderKey)
	if !o.ValuesFromStored || o.Values != nil || !o.Deleted {
		t.Fatalf("key-only before image: %+v", o)
	}
	// key-only delete after an update in the same batch: that update's values
	o = Fold(Stored{Found: true, Seq: cdc.PostgresSeq(0, 4)}, GroupByKey([]*cdc.Event{
		ev(cdc.OpDelete, 6, 1, "", 0), ev(cdc.OpUpdate, 5, 1, "paid", 300)})[0], orderKey)
	if o.ValuesFromStored || show(o.Values.Vals[1]) != "paid" || !o.Deleted || o.Seq != cdc.PostgresSeq(0, 6) {
		t.Fatalf("delete after in-batch update: %+v", o)
	}
}

func TestToastPlaceholderCarriesEarlierValue(t *testing.T) {
	u1 := ev(cdc.OpUpdate, 5, 1, "paid", 300)
	u2 := ev(cdc.OpUpdate, 6, 1, "shipped", 0)
	u2.After.Vals[2] = cdc.Unavailable()
	o := Fold(Stored{Found: true, Seq: cdc.PostgresSeq(0, 4)}, GroupByKey([]*cdc.Event{u2, u1})[0], orderKey)
	if show(o.Values.Vals[2]) != "3.00" || show(o.Values.Vals[1]) != "shipped" {
		t.Fatalf("values %v", o.Values.Vals)
	}
	if show(u2.After.Vals[2]) != "?" {
		t.Fatal("Fold modified the event's image")
	}
	// alone, the placeholder stays for the writer to fill from the stored row
	o = Fold(Stored{Found: true, Seq: cdc.PostgresSeq(0, 4)}, GroupByKey([]*cdc.Event{u2})[0], orderKey)
	if o.Values.Vals[2].Kind != cdc.KindUnavailable {
		t.Fatalf("values %v", o.Values.Vals)
	}
}

// A truncate soft-deletes the live rows at its position; rows deleted
// earlier keep their positions; later inserts revive keys; an older
// event delivered late does not undo it.
func TestTruncate(t *testing.T) {
	m := simMirror{}
	m.apply([]*cdc.Event{ev(cdc.OpCreate, 1, 1, "placed", 100), ev(cdc.OpCreate, 2, 2, "paid", 200), ev(cdc.OpDelete, 3, 2, "paid", 200)}, orderKey)
	trunc := func(id int64, seq uint64) *cdc.Event { // the per-key event the writer makes of a table truncate
		e := ev(cdc.OpTruncate, seq, id, "", 0)
		e.Before, e.After = nil, nil
		return e
	}
	m.apply([]*cdc.Event{trunc(1, 5), trunc(2, 5), trunc(3, 5)}, orderKey)
	want := "order_id=1 status=placed amount=1.00 @5 deleted=true\norder_id=2 status=paid amount=2.00 @3 deleted=true"
	if got := m.dump(); got != want {
		t.Fatalf("after truncate:\n%s\nwant\n%s", got, want)
	}
	m.apply([]*cdc.Event{ev(cdc.OpUpdate, 4, 1, "shipped", 100)}, orderKey) // late: before the truncate
	if got := m.dump(); got != want {
		t.Fatalf("a late update undid the truncate:\n%s", got)
	}
	m.apply([]*cdc.Event{ev(cdc.OpCreate, 7, 1, "placed", 300)}, orderKey)
	if got := m.dump(); got != "order_id=1 status=placed amount=3.00 @7 deleted=false\norder_id=2 status=paid amount=2.00 @3 deleted=true" {
		t.Fatalf("re-insert after truncate:\n%s", got)
	}
}

// A per-key truncate leaves a row a PostgreSQL source snapshot read after
// it (at (0, L), L above the truncate's LSN, sorting below it): the row
// was re-inserted after the truncate (cdc.PostgresReadAfterTruncate).
func TestTruncateKeepsLaterRead(t *testing.T) {
	read := ev(cdc.OpRead, 0, 1, "placed", 100)
	read.Seq = cdc.PostgresSeq(0, 200)
	trunc := &cdc.Event{Op: cdc.OpTruncate, Key: read.Key, Seq: cdc.PostgresSeq(150, 150)}
	out := Fold(Stored{}, Group{Key: read.Key, Events: []*cdc.Event{read, trunc}}, orderKey)
	if out.Deleted || out.Seq != read.Seq || out.Applied != 1 {
		t.Errorf("read at (0, 200) then truncate at 150: deleted %v seq %x applied %d, want live at the read", out.Deleted, out.Seq, out.Applied)
	}
	out = Fold(Stored{Found: true, Seq: read.Seq}, Group{Key: read.Key, Events: []*cdc.Event{trunc}}, orderKey)
	if out.Changed {
		t.Errorf("truncate at 150 against a stored read at (0, 200): changed (deleted %v)", out.Deleted)
	}
	early := *read
	early.Seq = cdc.PostgresSeq(0, 140)
	out = Fold(Stored{Found: true, Seq: early.Seq}, Group{Key: read.Key, Events: []*cdc.Event{trunc}}, orderKey)
	if !out.Deleted || out.Seq != trunc.Seq {
		t.Errorf("truncate at 150 against a stored read at (0, 140): deleted %v seq %x, want deleted at the truncate", out.Deleted, out.Seq)
	}
}

// A read taken after a truncate applies after it, against a row the
// truncate (or an earlier delete) left deleted; against a stored read
// taken after a truncate of the group, changes at or below the truncate
// are stale.
func TestReadAfterTruncateAgainstStored(t *testing.T) {
	read := ev(cdc.OpRead, 0, 1, "placed", 100)
	read.Seq = cdc.PostgresSeq(0, 200)
	trunc := &cdc.Event{Op: cdc.OpTruncate, Key: read.Key, Seq: cdc.PostgresSeq(150, 150)}
	for _, stored := range []Stored{
		{Found: true, Seq: trunc.Seq, Deleted: true},                 // deleted by the truncate
		{Found: true, Seq: cdc.PostgresSeq(120, 120), Deleted: true}, // deleted before it
		{Found: true, Seq: cdc.PostgresSeq(100, 100)},                // live before it
	} {
		out := Fold(stored, Group{Key: read.Key, Events: []*cdc.Event{read, trunc}}, orderKey)
		if !out.Changed || out.Deleted || out.Seq != read.Seq {
			t.Errorf("stored %x deleted %v: changed %v deleted %v seq %x, want live at the read", stored.Seq, stored.Deleted, out.Changed, out.Deleted, out.Seq)
		}
	}
	late := ev(cdc.OpUpdate, 0, 1, "shipped", 100)
	late.Seq = cdc.PostgresSeq(120, 120)
	out := Fold(Stored{Found: true, Seq: read.Seq}, Group{Key: read.Key, Events: []*cdc.Event{late, trunc}}, orderKey)
	if out.Changed || out.Stale != 1 {
		t.Errorf("update at 120 and truncate at 150 against a read at (0, 200): changed %v stale %d, want unchanged, 1 stale", out.Changed, out.Stale)
	}
	later := ev(cdc.OpUpdate, 0, 1, "shipped", 100)
	later.Seq = cdc.PostgresSeq(160, 160)
	out = Fold(Stored{Found: true, Seq: read.Seq}, Group{Key: read.Key, Events: []*cdc.Event{trunc, later}}, orderKey)
	if !out.Changed || out.Seq != later.Seq || out.Deleted {
		t.Errorf("truncate at 150 and update at 160 against a read at (0, 200): seq %x deleted %v, want the update", out.Seq, out.Deleted)
	}
}
