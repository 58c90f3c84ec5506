package activities

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/cut"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
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
		// partition 0 ends on 501's third event; partition 1 on an event
		// without a transaction block, after 502's first
		NewestTx: map[int32]payload.TxAt{0: {ID: "501", Order: 3, Seq: pgs(130, 130)}, 1: {ID: "502", Order: 1, Seq: pgs(150, 150)}},
		Own:      true, // the events name public.orders, the table's data collection
	}
	if g := res.Group; g == nil || !reflect.DeepEqual(g, want) {
		t.Fatalf("Group = %+v, want %+v", g, want)
	}
	// the mirror keeps them (the highest per partition; a partition's
	// newest transaction only while it has one), and Recover returns them
	// with the applied position
	props := func() (string, string) {
		t.Helper()
		m, err := w.cat.LoadTable(context.Background(), lake.TableName{Namespace: "shop", Name: "orders"}.Mirror())
		if err != nil {
			t.Fatal(err)
		}
		return m.Properties()[lakecat.PropFetchedPast], m.Properties()[lakecat.PropNewestTx]
	}
	fp, nt := props()
	if wantFP, wantNT := `{"0":"`+pgs(130, 130)+`","1":"`+pgs(160, 160)+`"}`, `{"0":{"id":"501","order":3,"seq":"`+pgs(130, 130)+`"},"1":{"id":"502","order":1,"seq":"`+pgs(150, 150)+`"}}`; fp != wantFP || nt != wantNT {
		t.Fatalf("mirror properties %s %s, want %s %s", fp, nt, wantFP, wantNT)
	}
	rec, err := w.a.Recover(context.Background(), w.spec)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Source != "mirror" || rec.Watermark != pgs(160, 160) || !maps.Equal(rec.FetchedPast, map[int32]string{0: pgs(130, 130), 1: pgs(160, 160)}) ||
		!maps.Equal(rec.NewestTx, map[int32]payload.TxAt{0: {ID: "501", Order: 3, Seq: pgs(130, 130)}, 1: {ID: "502", Order: 1, Seq: pgs(150, 150)}}) {
		t.Fatalf("Recover = %+v", rec)
	}
	if res.Mirror.Applied != 6 {
		t.Fatalf("mirror applied %d, want 6", res.Mirror.Applied)
	}
	// a batch of snapshot reads only: positions, no transactions
	res, _ = w.apply([]wev{pgTx("r", `{"order_id":8,"status":"s"}`, 500, 0, 95, 0, "last", 1)}, false)
	if g := res.Group; g == nil || g.TxSeen != nil || g.TxEvents != nil || !maps.Equal(g.FetchedPast, map[int32]string{1: pgs(0, 95)}) || !g.Own {
		t.Fatalf("snapshot-only batch: Group = %+v", g)
	}
	if fp, nt := props(); fp != `{"0":"`+pgs(130, 130)+`","1":"`+pgs(160, 160)+`"}` || nt != `{"0":{"id":"501","order":3,"seq":"`+pgs(130, 130)+`"},"1":{"id":"502","order":1,"seq":"`+pgs(150, 150)+`"}}` {
		t.Fatalf("after a read below them: mirror properties %s %s", fp, nt)
	}
	// partition 0 moves on to 504's first event, then to a change
	// without a transaction block: 504's stays its newest
	nt504 := `{"0":{"id":"504","order":1,"seq":"` + pgs(170, 170) + `"},"1":{"id":"502","order":1,"seq":"` + pgs(150, 150) + `"}}`
	w.apply([]wev{pgTx("c", `{"order_id":5,"status":"a"}`, 504, 160, 170, 1, "false", 0)}, false)
	if _, nt := props(); nt != nt504 {
		t.Fatalf("after 504: newest %s", nt)
	}
	w.apply([]wev{pgTx("c", `{"order_id":6,"status":"a"}`, 505, 170, 180, 0, "false", 0)}, false)
	if fp, nt := props(); fp != `{"0":"`+pgs(180, 180)+`","1":"`+pgs(160, 160)+`"}` || nt != nt504 {
		t.Fatalf("after 505: mirror properties %s %s", fp, nt)
	}
	// events of another data collection than the table's (a group without
	// a transaction topic does not refuse them) do not confirm its own
	other := newWrun(t, TableSpec{})
	other.spec.Group, other.spec.SourceTable = "shop", "public.sales"
	if res, _ = other.apply(batch[1:2], false); res.Group == nil || res.Group.Own || len(res.Group.TxSeen) != 1 {
		t.Fatalf("another collection's events: Group = %+v", res.Group)
	}

	// a direct load's batch fetched no partition: it reports nothing
	var r ApplyResult
	r.StageSeconds = map[string]float64{}
	ev := &cdc.Event{Op: cdc.OpRead, Seq: cdc.PostgresSeq(900, 0), Snapshot: cdc.SnapshotRow}
	if _, err := w.a.batchResult(w.spec, lake.Batch{ID: "load", Load: &payload.LoadCursor{ID: "l"}}, &r, &decoded{events: []*cdc.Event{ev}}, marks{}, lake.WriteOutput{}, nil); err != nil || r.Group != nil {
		t.Fatalf("a load's batch: Group %+v, %v", r.Group, err)
	}

	plain := newWrun(t, TableSpec{})
	res, _ = plain.apply(batch, false)
	if res.Group != nil {
		t.Fatalf("a table without a group reports %+v", res.Group)
	}
}

// Debezium's source snapshot reads share a position (PostgreSQL (0, L)),
// so a read that is not the last shows its partition complete only up to
// just below it (FetchedPast), and a batch that ends on one records the
// table in the middle of a source snapshot in its commits' tally
// (snapshot_open), which cuts.Publish refuses; the batch of the last read
// clears it (a breaker's run: cuts per position were published inside a
// source snapshot).
func TestApplySourceSnapshotOpen(t *testing.T) {
	w := newWrun(t, TableSpec{})
	w.spec.Group = "shop"
	tally := func() string {
		t.Helper()
		m, err := w.cat.LoadTable(context.Background(), lake.TableName{Namespace: "shop", Name: "orders"}.Mirror())
		if err != nil {
			t.Fatal(err)
		}
		return m.Properties()[lakecat.PropBatchTally]
	}
	res, _ := w.apply([]wev{
		pgTx("r", `{"order_id":1,"status":"s"}`, 500, 0, 95, 0, "first", 0),
		pgTx("r", `{"order_id":2,"status":"s"}`, 500, 0, 95, 0, "true", 0),
	}, false)
	if g := res.Group; g == nil || !maps.Equal(g.FetchedPast, map[int32]string{0: pgs(0, 94)}) {
		t.Fatalf("reads, the last to come: Group = %+v", g)
	}
	if got, want := tally(), `{"records":2,"changes":2,"tombstones":0,"tx_metadata":0,"quarantined":0,"snapshot_rows":2,"snapshot_open":true,"fetched_past":{"0":"`+pgs(0, 94)+`"}}`; got != want {
		t.Fatalf("tally %s, want %s", got, want)
	}
	res, _ = w.apply([]wev{pgTx("r", `{"order_id":3,"status":"s"}`, 500, 0, 95, 0, "last", 0)}, false)
	if g := res.Group; g == nil || !maps.Equal(g.FetchedPast, map[int32]string{0: pgs(0, 95)}) {
		t.Fatalf("the last read: Group = %+v", g)
	}
	if got, want := tally(), `{"records":1,"changes":1,"tombstones":0,"tx_metadata":0,"quarantined":0,"snapshot_rows":1,"snapshot_last":true,"fetched_past":{"0":"`+pgs(0, 95)+`"}}`; got != want {
		t.Fatalf("tally %s, want %s", got, want)
	}
	// reads on two partitions, one of them ending with a streamed change:
	// the other is still in the snapshot
	w.apply([]wev{
		pgTx("r", `{"order_id":4,"status":"s"}`, 500, 0, 200, 0, "true", 0),
		pgTx("r", `{"order_id":5,"status":"s"}`, 500, 0, 200, 0, "true", 1),
		pgTx("c", `{"order_id":6,"status":"a"}`, 501, 210, 220, 1, "false", 0),
	}, false)
	if got := tally(); !strings.Contains(got, `"snapshot_open":true`) {
		t.Fatalf("partition 1 ends on a read: tally %s", got)
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

func TestForeignCollection(t *testing.T) {
	ev := func(coll string, off int64) *cdc.Event {
		return &cdc.Event{Op: cdc.OpCreate, Collection: coll, Origin: cdc.Origin{Topic: "srv.dbo.orders", Partition: 2, Offset: off}}
	}
	grouped := TableSpec{Table: "app.orders", Topic: "srv.dbo.orders", Group: "g", TransactionTopic: "srv.transaction"}
	named := grouped
	named.SourceTable = "sales.orders"
	b := lake.Batch{ID: "b7"}
	for _, c := range []struct {
		name   string
		spec   TableSpec
		events []*cdc.Event
		want   string
	}{
		{"no group", TableSpec{Table: "app.orders", Topic: "srv.dbo.orders"}, []*cdc.Event{ev("testDB.dbo.orders", 0)}, ""},
		{"per-position group", TableSpec{Table: "app.orders", Topic: "srv.dbo.orders", Group: "g"}, []*cdc.Event{ev("testDB.dbo.orders", 0)}, ""},
		{"its own and unknown", grouped, []*cdc.Event{ev("dbo.orders", 0), ev("", 1)}, ""},
		{"topic default", grouped, []*cdc.Event{ev("", 0), ev("testDB.dbo.orders", 1), ev("testDB.dbo.orders", 2)},
			`table app.orders, batch b7: the change event at srv.dbo.orders/2@1 comes from data collection "testDB.dbo.orders", but group g matches the table by "dbo.orders" (the topic's last two segments); ` +
				`the group's transaction END events name "testDB.dbo.orders", so its cuts would not wait for this table's transactions. Nothing of the batch was written. ` +
				`To go on: starter stop app.orders, then start it again with --source-table testDB.dbo.orders (pipelines YAML: source_table: testDB.dbo.orders, then starter apply); ` +
				`if the topic holds more than one source table, the table cannot be in a group with a transaction topic`},
		{"source table", named, []*cdc.Event{ev("", 0), ev("sales.order_items", 1), ev("sales.order_items", 2)},
			`table app.orders, batch b7: the change event at srv.dbo.orders/2@1 comes from data collection "sales.order_items", but group g matches the table by "sales.orders" (--source-table); ` +
				`the group's transaction END events name "sales.order_items", so its cuts would not wait for this table's transactions. Nothing of the batch was written. ` +
				`To go on: starter stop app.orders, then start it again with --source-table sales.order_items (pipelines YAML: source_table: sales.order_items, then starter apply); ` +
				`if the topic holds more than one source table, the table cannot be in a group with a transaction topic`},
		{"two collections", named, []*cdc.Event{ev("sales.orders", 0), ev("sales.order_items", 1), ev("sales.orders", 2)},
			`table app.orders, batch b7: topic srv.dbo.orders holds the change events of more than one data collection (sales.orders, sales.order_items; the first not the table's at srv.dbo.orders/2@1), ` +
				`but a table in group g, with a transaction topic, must hold one source table's events: the group's transaction END events count each collection apart. Nothing of the batch was written. ` +
				`To go on: starter stop app.orders, then give each source table its own topic (Debezium's default topic naming) and start one table per topic in the group, or start this table without --group`},
		{"three collections", grouped, []*cdc.Event{ev("dbo.orders", 0), ev("testDB.dbo.orders", 1), ev("other", 2)},
			`table app.orders, batch b7: topic srv.dbo.orders holds the change events of more than one data collection (dbo.orders, testDB.dbo.orders, other; the first not the table's at srv.dbo.orders/2@1), ` +
				`but a table in group g, with a transaction topic, must hold one source table's events: the group's transaction END events count each collection apart. Nothing of the batch was written. ` +
				`To go on: starter stop app.orders, then give each source table its own topic (Debezium's default topic naming) and start one table per topic in the group, or start this table without --group`},
		{"two other collections", grouped, []*cdc.Event{ev("testDB.dbo.orders", 0), ev("testDB.dbo.items", 1)},
			`table app.orders, batch b7: topic srv.dbo.orders holds the change events of more than one data collection (testDB.dbo.orders, testDB.dbo.items; the first not the table's at srv.dbo.orders/2@0), ` +
				`but a table in group g, with a transaction topic, must hold one source table's events: the group's transaction END events count each collection apart. Nothing of the batch was written. ` +
				`To go on: starter stop app.orders, then give each source table its own topic (Debezium's default topic naming) and start one table per topic in the group, or start this table without --group`},
	} {
		err := foreignCollection(c.spec, b, c.events)
		var ae *temporal.ApplicationError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want nil", c.name, err)
		case c.want != "" && (!errors.As(err, &ae) || ae.Type() != ErrTypeBadSpec || !ae.NonRetryable() || ae.Message() != c.want):
			t.Errorf("%s:\n got  %v\n want %s (non-retryable %s)", c.name, err, c.want, ErrTypeBadSpec)
		}
	}
}
