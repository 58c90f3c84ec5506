package activities

import (
	"fmt"
	"maps"
	"reflect"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/cut"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// pgTx is a Debezium PostgreSQL change of transaction txID (source.txId,
// and transaction.id "txID:lsn" as Debezium writes it) at source.sequence
// [lastCommit, lsn], the transaction's order-th event of the table
// (transaction.total_order and data_collection_order; 0: no transaction
// block), delivered in partition part; snapshot is source.snapshot
// ("false" for a streamed change).
func pgTx(op, after string, txID, lastCommit, lsn, order int, snapshot string, part int32) wev {
	block := "null"
	if order > 0 {
		block = fmt.Sprintf(`{"id":"%d:%d","total_order":%d,"data_collection_order":%d}`, txID, lsn, order, order)
	}
	v := fmt.Sprintf(`{"before":null,"after":%s,"source":{"version":"2.7.0.Final","connector":"postgresql","name":"pg","ts_ms":%d,"snapshot":%q,"db":"db","sequence":"[\"%d\", \"%d\"]","schema":"public","table":"orders","txId":%d,"lsn":%d},"op":%q,"ts_ms":%d,"transaction":%s}`,
		after, 1767258000000+lsn, snapshot, lastCommit, lsn, txID, lsn, op, 1767258000000+lsn, block)
	return wev{m: sample.Message{Value: []byte(v), Op: op[0]}, lsn: lsn, part: part}
}

// A grouped table's batch reports, per source transaction id, its
// streamed change events by identity (data_collection_order ranges, the
// positions of events without one; snapshot reads left out) and, per
// partition, the highest position it fetched there; a table without a
// group reports nothing (no allocation: Group nil).
func TestApplyGroupProgress(t *testing.T) {
	batch := []wev{
		pgTx("r", `{"order_id":9,"status":"s"}`, 500, 0, 90, 0, "true", 0), // a snapshot read: no transaction
		pgTx("c", `{"order_id":1,"status":"a"}`, 501, 100, 110, 1, "false", 0),
		pgTx("c", `{"order_id":2,"status":"a"}`, 501, 100, 120, 2, "false", 1),
		pgTx("u", `{"order_id":1,"status":"b"}`, 501, 100, 130, 3, "false", 0),
		pgTx("c", `{"order_id":3,"status":"a"}`, 502, 140, 150, 1, "false", 1),
		pgTx("c", `{"order_id":4,"status":"a"}`, 503, 150, 160, 0, "false", 1), // no transaction block
	}
	w := newWrun(t, TableSpec{})
	w.spec.Group = "shop"
	res, _ := w.apply(batch, false)
	want := &payload.GroupProgress{
		TxSeen: map[string]payload.TxSeen{"501": {Orders: [][2]int64{{1, 3}}, Last: pgs(130, 130)},
			"502": {Orders: [][2]int64{{1, 1}}, Last: pgs(150, 150)}, "503": {Seqs: []string{pgs(160, 160)}, Last: pgs(160, 160)}},
		FetchedPast: map[int32]string{0: pgs(130, 130), 1: pgs(160, 160)},
	}
	if g := res.Group; g == nil || !reflect.DeepEqual(g, want) {
		t.Fatalf("Group = %+v, want %+v", g, want)
	}
	if res.Mirror.Applied != 6 {
		t.Fatalf("mirror applied %d, want 6", res.Mirror.Applied)
	}
	// a batch of snapshot reads only: positions, no transactions
	res, _ = w.apply([]wev{pgTx("r", `{"order_id":8,"status":"s"}`, 500, 0, 95, 0, "last", 1)}, false)
	if g := res.Group; g == nil || g.TxSeen != nil || g.TxEvents != nil || !maps.Equal(g.FetchedPast, map[int32]string{1: pgs(0, 95)}) {
		t.Fatalf("snapshot-only batch: Group = %+v", g)
	}

	// a direct load's batch fetched no partition: it reports nothing
	var r ApplyResult
	r.StageSeconds = map[string]float64{}
	ev := &cdc.Event{Op: cdc.OpRead, Seq: cdc.PostgresSeq(900, 0), Snapshot: cdc.SnapshotRow}
	if _, err := w.a.batchResult(w.spec, lake.Batch{ID: "load", Load: &payload.LoadCursor{ID: "l"}}, &r, &decoded{events: []*cdc.Event{ev}}, lake.WriteOutput{}, nil); err != nil || r.Group != nil {
		t.Fatalf("a load's batch: Group %+v, %v", r.Group, err)
	}

	plain := newWrun(t, TableSpec{})
	res, _ = plain.apply(batch, false)
	if res.Group != nil {
		t.Fatalf("a table without a group reports %+v", res.Group)
	}
}

// A connector restart redelivers a transaction's events at new offsets:
// the reports of the batches, through the real write path and a worker
// restart, fed to the group's Tracker as GroupWorkflow does, complete
// the transaction only when its last event arrives, not when the
// redelivered events make the count reach the END's; a redelivery after
// the cut passed the transaction leaves nothing in the Tracker.
func TestApplyGroupProgressRedelivery(t *testing.T) {
	w := newWrun(t, TableSpec{})
	w.spec.Group = "shop"
	tr := cut.NewTracker(cut.Postgres, []string{"public.orders"})
	if err := tr.End(cut.End{ID: "601:400", Commit: cdc.PostgresSeq(400, 0), Counts: map[string]int64{"public.orders": 3}}); err != nil {
		t.Fatal(err)
	}
	feed := func(what string, res ApplyResult) {
		t.Helper()
		for id, s := range res.Group.TxSeen {
			last, err := cdc.ParseSeqHex(s.Last)
			if err == nil {
				err = tr.AppliedEvents("public.orders", id, s.Orders, nil, last)
			}
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
	}
	e1 := pgTx("c", `{"order_id":1,"status":"a"}`, 601, 300, 310, 1, "false", 0)
	e2 := pgTx("c", `{"order_id":2,"status":"a"}`, 601, 300, 320, 2, "false", 0)
	e3 := pgTx("c", `{"order_id":3,"status":"a"}`, 601, 300, 330, 3, "false", 0)
	res, _ := w.apply([]wev{e1, e2}, false)
	if want := (map[string]payload.TxSeen{"601": {Orders: [][2]int64{{1, 2}}, Last: pgs(320, 320)}}); !reflect.DeepEqual(res.Group.TxSeen, want) {
		t.Fatalf("batch 1: %+v, want %+v", res.Group.TxSeen, want)
	}
	feed("batch 1", res)
	w.restart()
	// The connector restarted: e2 again, at the next offset.
	res, _ = w.apply([]wev{e2}, false)
	if want := (map[string]payload.TxSeen{"601": {Orders: [][2]int64{{2, 2}}, Last: pgs(320, 320)}}); !reflect.DeepEqual(res.Group.TxSeen, want) {
		t.Fatalf("batch 2: %+v, want %+v", res.Group.TxSeen, want)
	}
	feed("batch 2", res)
	if c := tr.Cut(); c.W != "" || len(c.Holds) != 1 || c.Holds[0].Missing != 1 || tr.AppliedCount("public.orders", "601") != 2 {
		t.Fatalf("after the redelivery: cut %+v, applied %d; want no cut, 1 missing, 2 applied", c, tr.AppliedCount("public.orders", "601"))
	}
	res, _ = w.apply([]wev{e3, e1}, false) // e3 and e1 again
	if want := (map[string]payload.TxSeen{"601": {Orders: [][2]int64{{1, 1}, {3, 3}}, Last: pgs(330, 330)}}); !reflect.DeepEqual(res.Group.TxSeen, want) {
		t.Fatalf("batch 3: %+v, want %+v", res.Group.TxSeen, want)
	}
	feed("batch 3", res)
	if c := tr.Cut(); c.W != cdc.PostgresSeq(400, 0) || len(c.Holds) != 0 {
		t.Fatalf("complete: cut %+v", c)
	}
	// e2 once more after the cut passed its transaction: not kept.
	res, _ = w.apply([]wev{e2}, false)
	feed("batch 4", res)
	if seen := tr.State().Seen; seen != nil {
		t.Fatalf("after the cut: seen %v", seen)
	}
}
