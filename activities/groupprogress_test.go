package activities

import (
	"fmt"
	"maps"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// pgTx is a Debezium PostgreSQL change of transaction txID (source.txId,
// and transaction.id "txID:lsn" as Debezium writes it) at source.sequence
// [lastCommit, lsn], delivered in partition part; snapshot is
// source.snapshot ("false" for a streamed change).
func pgTx(op, after string, txID, lastCommit, lsn int, snapshot string, part int32) wev {
	v := fmt.Sprintf(`{"before":null,"after":%s,"source":{"version":"2.7.0.Final","connector":"postgresql","name":"pg","ts_ms":%d,"snapshot":%q,"db":"db","sequence":"[\"%d\", \"%d\"]","schema":"public","table":"orders","txId":%d,"lsn":%d},"op":%q,"ts_ms":%d,"transaction":{"id":"%d:%d","total_order":1,"data_collection_order":1}}`,
		after, 1767258000000+lsn, snapshot, lastCommit, lsn, txID, lsn, op, 1767258000000+lsn, txID, lsn)
	return wev{m: sample.Message{Value: []byte(v), Op: op[0]}, lsn: lsn, part: part}
}

// A grouped table's batch reports, per source transaction id, its
// streamed change events (snapshot reads left out) and, per partition,
// the highest position it fetched there; a table without a group
// reports nothing (no allocation: Group nil).
func TestApplyGroupProgress(t *testing.T) {
	batch := []wev{
		pgTx("r", `{"order_id":9,"status":"s"}`, 500, 0, 90, "true", 0), // a snapshot read: no transaction
		pgTx("c", `{"order_id":1,"status":"a"}`, 501, 100, 110, "false", 0),
		pgTx("c", `{"order_id":2,"status":"a"}`, 501, 100, 120, "false", 1),
		pgTx("u", `{"order_id":1,"status":"b"}`, 501, 100, 130, "false", 0),
		pgTx("c", `{"order_id":3,"status":"a"}`, 502, 140, 150, "false", 1),
	}
	w := newWrun(t, TableSpec{})
	w.spec.Group = "shop"
	res, _ := w.apply(batch, false)
	want := &payload.GroupProgress{
		TxEvents:    map[string]int64{"501": 3, "502": 1},
		FetchedPast: map[int32]string{0: pgs(130, 130), 1: pgs(150, 150)},
	}
	if g := res.Group; g == nil || !maps.Equal(g.TxEvents, want.TxEvents) || !maps.Equal(g.FetchedPast, want.FetchedPast) {
		t.Fatalf("Group = %+v, want %+v", g, want)
	}
	if res.Mirror.Applied != 5 {
		t.Fatalf("mirror applied %d, want 5", res.Mirror.Applied)
	}
	// a batch of snapshot reads only: positions, no transactions
	res, _ = w.apply([]wev{pgTx("r", `{"order_id":8,"status":"s"}`, 500, 0, 95, "last", 1)}, false)
	if g := res.Group; g == nil || g.TxEvents != nil || !maps.Equal(g.FetchedPast, map[int32]string{1: pgs(0, 95)}) {
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
