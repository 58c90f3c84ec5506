package activities

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/apache/iceberg-go/table"
	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/internal/cut"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/cuts"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// A batch bounded at a consistent cut W (ApplyRequest.Cut) over Kafka
// (kfake) and the real write path: of offsets [0,7) it applies those
// below the first record above W (offset 3: the tombstone after T501's
// changes stays with them) and ends there; a rerun finds it committed
// with the same end; a batch bounded at the same W again is empty; the
// rest, unbounded, leaves mirror and history exactly as one batch of
// everything does.
func TestApplyBatchCutAtW(t *testing.T) {
	ctx := context.Background()
	msgs := []sample.Message{
		pgTx("c", `{"order_id":1,"status":"a"}`, 501, 100, 110, 1, "false", 0).m,
		pgTx("c", `{"order_id":2,"status":"a"}`, 501, 100, 120, 2, "false", 0).m,
		{}, // a tombstone
		pgTx("u", `{"order_id":1,"status":"b"}`, 502, 130, 140, 1, "false", 0).m,
		pgTx("c", `{"order_id":3,"status":"a"}`, 502, 130, 150, 2, "false", 0).m,
		pgTx("c", `{"order_id":2,"status":"a"}`, 501, 100, 120, 2, "false", 0).m, // T501's second change redelivered
		pgTx("u", `{"order_id":2,"status":"c"}`, 503, 160, 170, 1, "false", 0).m,
	}
	spec := TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"}, MaxEvents: 100,
		MaxQuarantine: 1000, Group: "shop"}.Defaults()
	kc := kafkaTopic(t, spec.Topic, msgs)
	w, err := cut.CommitPosition(cut.Postgres, "501:130")
	if err != nil {
		t.Fatal(err)
	}
	bound := &payload.CutBound{Number: 4, W: w.Hex()}
	cat := mustCatalog(t)
	a := New(cat, kc)
	a.StateDir = t.TempDir()
	b1 := lake.Batch{ID: "b1", Seq: 1, Topic: spec.Topic, Ranges: []lake.Range{{From: 0, To: 7}}, EndOffsets: lake.Offsets{0: 7}}
	res, err := a.ApplyBatch(ctx, ApplyRequest{Spec: spec, Batch: b1, Cut: bound})
	if err != nil {
		t.Fatal(err)
	}
	wantGroup := &payload.GroupProgress{TxSeen: map[string]payload.TxSeen{"501": {Orders: [][2]int64{{1, 2}}, Last: pgs(120, 120)}},
		FetchedPast: map[int32]string{0: pgs(120, 120)}, NewestTx: map[int32]payload.TxAt{0: {ID: "501", Order: 2, Seq: pgs(120, 120)}}, Own: true}
	if !reflect.DeepEqual(res.EndOffsets, lake.Offsets{0: 3}) || res.Records != 3 || res.Changes != 2 || res.Tombstones != 1 ||
		res.Next != nil || !reflect.DeepEqual(res.Group, wantGroup) {
		t.Fatalf("bounded batch: end %v, %d records, %d changes, %d tombstones, next %v, group %+v; want end 3, 3, 2, 1, nil, %+v",
			res.EndOffsets, res.Records, res.Changes, res.Tombstones, res.Next, res.Group, wantGroup)
	}
	name := lake.TableName{Namespace: "shop", Name: "orders"}
	mirrorCols := []string{"order_id", "status", lake.ColSeq, lake.ColDeleted}
	atW := tableText(t, cat, name, false, mirrorCols...)

	// A rerun (a retried attempt) finds it committed, with the same end.
	res, err = a.ApplyBatch(ctx, ApplyRequest{Spec: spec, Batch: b1, Cut: bound, Rerun: true})
	if err != nil || !reflect.DeepEqual(res.EndOffsets, lake.Offsets{0: 3}) || res.Records != 3 {
		t.Fatalf("rerun: %v, end %v, %d records", err, res.EndOffsets, res.Records)
	}
	// Bounded at the same W again: nothing below it is left.
	b2 := lake.Batch{ID: "b2", Seq: 2, Topic: spec.Topic, Ranges: []lake.Range{{From: 3, To: 7}}, EndOffsets: lake.Offsets{0: 7}}
	before := metadataFiles(t, a, name)
	res, err = a.ApplyBatch(ctx, ApplyRequest{Spec: spec, Batch: b2, Cut: bound})
	if err != nil || !reflect.DeepEqual(res.EndOffsets, lake.Offsets{0: 3}) || res.Records != 0 {
		t.Fatalf("at W already: %v, end %v, %d records", err, res.EndOffsets, res.Records)
	}
	if got := tableText(t, cat, name, false, mirrorCols...); got != atW {
		t.Fatalf("an empty bounded batch changed the mirror:\n%s\nwas:\n%s", got, atW)
	}
	// and committed nothing: a table held at a cut plans a batch every
	// few seconds, each of which would write three metadata files
	if after := metadataFiles(t, a, name); !reflect.DeepEqual(after, before) {
		t.Fatalf("an empty bounded batch committed: metadata %v, was %v", after, before)
	}
	// nor does its rerun
	if res, err = a.ApplyBatch(ctx, ApplyRequest{Spec: spec, Batch: b2, Cut: bound, Rerun: true}); err != nil || !reflect.DeepEqual(res.EndOffsets, lake.Offsets{0: 3}) || res.Records != 0 {
		t.Fatalf("at W already, rerun: %v, end %v, %d records", err, res.EndOffsets, res.Records)
	}
	if after := metadataFiles(t, a, name); !reflect.DeepEqual(after, before) {
		t.Fatalf("an empty bounded batch's rerun committed: metadata %v, was %v", after, before)
	}
	// The table at W: its cut can be published; the tags are its current
	// Iceberg snapshots.
	pub := PublishCutRequest{Group: "shop", Number: 4, W: bound.W, TxID: "501:130", Tables: []string{spec.Table}}
	if pr, err := a.PublishCut(ctx, pub); err != nil || len(pr.Tagged) != 1 || pr.Tagged[0].Mirror == 0 || pr.Tagged[0].History == 0 {
		t.Fatalf("publish the cut at W: %+v, %v", pr, err)
	}
	// The rest, unbounded.
	b3 := lake.Batch{ID: "b3", Seq: 3, Topic: spec.Topic, Ranges: []lake.Range{{From: 3, To: 7}}, EndOffsets: lake.Offsets{0: 7}}
	if res, err = a.ApplyBatch(ctx, ApplyRequest{Spec: spec, Batch: b3}); err != nil || res.Records != 4 {
		t.Fatalf("the rest: %v, %d records", err, res.Records)
	}

	whole := mustCatalog(t)
	aw := New(whole, kc)
	aw.StateDir = t.TempDir()
	if _, err := aw.ApplyBatch(ctx, ApplyRequest{Spec: spec, Batch: b1}); err != nil {
		t.Fatal(err)
	}
	histCols := []string{"order_id", "status", lake.ColSeq, lake.ColValidToSeq, lake.ColIsCurrent}
	for _, h := range []bool{false, true} {
		cols := mirrorCols
		if h {
			cols = histCols
		}
		if got, want := tableText(t, cat, name, h, cols...), tableText(t, whole, name, h, cols...); got != want {
			t.Fatalf("history %v: cut at W then the rest\n%s\none batch\n%s", h, got, want)
		}
	}
	// Past W now (a table that left the cut, e.g. for a re-snapshot,
	// while its group published): a cut at W is refused, not retried,
	// and nothing is tagged.
	pub.Number = 5
	_, err = a.PublishCut(ctx, pub)
	var ae *temporal.ApplicationError
	wantPast := "lake: publish a cut: table shop.orders: a table is past the cut: its mirror has applied up to " + pgs(170, 170) + ", above W " + bound.W +
		", so no Iceberg snapshot of it holds the table at W (it left the cut: a re-snapshot or backfill, a bound it dropped, or a run started anew before its first batch); " +
		"nothing was tagged, and a later cut will be taken"
	if !errors.As(err, &ae) || ae.Message() != wantPast || !ae.NonRetryable() || ae.Type() != payload.ErrTypeBadSpec {
		t.Fatalf("publish past W: %v\nwant %s", err, wantPast)
	}
	if tbl, err := cat.LoadTable(ctx, name.Mirror()); err != nil || len(cuts.Refs(tbl)) != 2 {
		t.Fatalf("mirror tags after a cut refused: %v, %v; want cut-4 and consistent", cuts.Refs(tbl), err)
	}
	wantAtW := "1 a " + pgs(110, 110) + " false\n2 a " + pgs(120, 120) + " false"
	if atW != wantAtW {
		t.Fatalf("the mirror at W:\n%s\nwant:\n%s", atW, wantAtW)
	}

	// A W that is no position is refused before anything is written.
	b4 := lake.Batch{ID: "b4", Seq: 4, Topic: spec.Topic, Ranges: []lake.Range{{From: 7, To: 7}}, EndOffsets: lake.Offsets{0: 7}}
	for w, msg := range map[string]string{
		"xyz": `batch b4 bounded at cut 5: W "xyz" is not a position: cdc: _seq "xyz" is not a whole number of 16-digit words`,
		"":    `batch b4 bounded at cut 5: W "" is not a position: empty`,
	} {
		_, err := a.ApplyBatch(ctx, ApplyRequest{Spec: spec, Batch: b4, Cut: &payload.CutBound{Number: 5, W: w}})
		var ae *temporal.ApplicationError
		if !errors.As(err, &ae) || ae.Message() != msg || !ae.NonRetryable() || ae.Type() != payload.ErrTypeBadSpec {
			t.Fatalf("W %q: %v", w, err)
		}
	}
}

// metadataFiles is the current metadata file of the table name's bronze,
// mirror and history (each commit writes a new one).
func metadataFiles(t *testing.T, a *Activities, name lake.TableName) []string {
	t.Helper()
	var out []string
	for _, ident := range []table.Identifier{name.Bronze(), name.Mirror(), name.History()} {
		tbl, err := a.Catalog.LoadTable(context.Background(), ident)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tbl.MetadataLocation())
	}
	return out
}
