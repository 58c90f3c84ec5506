package activities

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// tallyKafkaTs is the Kafka record timestamp of tallyRecords: 2026-01-02T02:50:45.678Z.
var tallyKafkaTs = time.UnixMicro(1767322245678000)

// tallyRecords is one batch with a record of every kind the totals count:
// three changes, a tombstone, a transaction metadata event, a record that
// does not decode (quarantined), and a change whose source gave no commit
// time (source.ts_ms 0, no envelope ts_ms).
func tallyRecords() []sample.Message {
	noTime := `{"before":null,"after":{"order_id":3,"status":"a"},"source":{"version":"2.7.0.Final","connector":"postgresql","name":"pg","ts_ms":0,"snapshot":"false","db":"db","sequence":"[null, \"130\"]","schema":"public","table":"orders","txId":130,"lsn":130},"op":"c"}`
	return []sample.Message{
		sample.PostgresChange("c", "null", `{"order_id":1,"status":"a"}`, 100),
		sample.PostgresChange("c", "null", `{"order_id":2,"status":"a"}`, 110),
		sample.PostgresChange("u", "null", `{"order_id":1,"status":"b"}`, 120),
		{Key: []byte(`{"order_id":2}`)}, // tombstone
		{Value: []byte(`{"status":"BEGIN","id":"571:53195829","ts_ms":1767258000000,"event_count":null,"data_collections":null}`)},
		{Value: []byte(`not json`)},
		{Value: []byte(noTime)},
	}
}

// tallyApply applies tallyRecords as batch 1 with a fresh catalog, broker
// and worker. crashAt ("", "bronze", "mirror", "history") fails the first
// attempt right after that table's commit (a worker killed between
// commits); the batch is then applied again as a retry (Rerun), the way
// the workflow runs it on another worker.
func tallyApply(t *testing.T, crashAt string) (ApplyResult, *Activities, TableSpec) {
	t.Helper()
	ctx := context.Background()
	spec := TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"}, MaxQuarantine: 10}.Defaults()
	_, kc := kfakeBroker(t)
	if err := kc.CreateTopic(ctx, spec.Topic, 1); err != nil {
		t.Fatal(err)
	}
	msgs := tallyRecords()
	for _, m := range msgs {
		if err := kc.Produce(ctx, &kgo.Record{Topic: spec.Topic, Key: m.Key, Value: m.Value, Timestamp: tallyKafkaTs}); err != nil {
			t.Fatal(err)
		}
	}
	cat := mustCatalog(t)
	a := New(cat, kc)
	a.StateDir = t.TempDir()
	n := int64(len(msgs))
	req := ApplyRequest{Spec: spec, Batch: lake.Batch{ID: spec.Table + "#1", Seq: 1, Topic: spec.Topic,
		Ranges: []lake.Range{{From: 0, To: n}}, EndOffsets: lake.Offsets{0: n}}}
	if crashAt != "" {
		a.AfterCommit = func(_ context.Context, b lake.Batch, table string) error {
			if table == crashAt {
				return errors.New("simulated crash after the " + table + " commit")
			}
			return nil
		}
		if _, err := a.ApplyBatch(ctx, req); err == nil {
			t.Fatalf("crash after %s: the first attempt did not fail", crashAt)
		}
		// the retry runs on a new worker: no local state, no prefetch
		a = New(cat, kc)
		a.StateDir = t.TempDir()
		req.Rerun = true
	}
	res, err := a.ApplyBatch(ctx, req)
	if err != nil {
		t.Fatalf("crash after %q: %v", crashAt, err)
	}
	return res, a, spec
}

// tallyCounts renders every count of an ApplyResult that the table's
// totals add up (workflows.Totals.add), and SnapshotLast, which moves
// the phase, and the history's keys left to the late-key rebuild.
func tallyCounts(r ApplyResult) string {
	return fmt.Sprintf("records %d changes %d tombstones %d tx %d quarantined %d snapshot rows %d last %v kafka-ts %d | bronze %d | applied %d stale %d dups %d rows %d | history rows %d woven %d unwoven %d pending %d",
		r.Records, r.Changes, r.Tombstones, r.TxMetadata, r.Quarantined, r.SnapshotRows, r.SnapshotLast, r.SourceTsFromKafka,
		r.Bronze.Appended, r.Mirror.Applied, r.Mirror.Stale, r.Mirror.Duplicates, r.Mirror.RowsWritten,
		r.History.RowsWritten, r.WovenKeys(), r.History.Unwoven, r.History.Pending)
}

// A batch retried after a crash between (or after) its commits reports
// exactly the counts a clean run reports, so the status totals of a
// crashed table equal a clean run's (issue 34 item 9: a retry that found
// its batch committed reported 0 tombstones, transaction metadata events
// and quarantined records; its commits now carry the batch's tally,
// lakemirror.batch-tally). The change without a source commit time gets
// the Kafka record timestamp as _source_ts and is counted as such.
// A worker that retries after the mirror's commit and before the
// history's writes the batch's history in order too (the mirror's commit
// lists the keys it found late: none here), so it counts the batch's 4
// history rows; before, it left the batch's keys to the late-key rebuild,
// which counted them as 3 rebuilt keys.
func TestRetriedBatchCountsLikeACleanOne(t *testing.T) {
	clean, a, spec := tallyApply(t, "")
	const want = "records 7 changes 4 tombstones 1 tx 1 quarantined 1 snapshot rows 0 last false kafka-ts 1 | bronze 7 | applied 4 stale 0 dups 0 rows 3 | history rows 4 woven 0 unwoven 0 pending 0"
	if got := tallyCounts(clean); got != want {
		t.Fatalf("clean run:\n got %s\nwant %s", got, want)
	}
	name, _ := lake.ParseTableName(spec.Table)
	mirror, err := a.Catalog.LoadTable(context.Background(), name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := lake.ReadRows(context.Background(), mirror, []string{"order_id"})
	if err != nil {
		t.Fatal(err)
	}
	var ts []string
	for _, r := range rows {
		ts = append(ts, fmt.Sprintf("%v=%v", r["order_id"], r[lakecat.ColSourceTs]))
	}
	if got, want := fmt.Sprint(ts), "[1=2026-01-01T09:00:00.120000Z 2=2026-01-01T09:00:00.110000Z 3=2026-01-02T02:50:45.678000Z]"; got != want {
		t.Errorf("mirror _source_ts %s, want %s (order 3: the Kafka record timestamp)", got, want)
	}
	for _, at := range []string{"bronze", "mirror", "history"} {
		res, _, _ := tallyApply(t, at)
		if got := tallyCounts(res); got != want {
			t.Errorf("crash after the %s commit, retried:\n got %s\nwant %s", at, got, want)
		}
	}
}
