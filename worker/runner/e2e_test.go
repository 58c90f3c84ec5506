//go:build e2e

package runner

import (
	"context"
	"errors"
	"fmt"

	"log/slog"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/devstack"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/internal/testskip"
	"github.com/lakemirror/lakemirror/workflows"
)

// These tests run the real pipeline: an embedded Temporal server, an
// embedded Kafka broker (kfake) and a SQLite Iceberg catalog on a temp
// dir, with the worker of this package. One stack serves the package.

var stack *devstack.Stack

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	var err error
	stack, err = devstack.StartStack(ctx, devstack.StackOptions{UIPort: -1, SearchAttributes: workflows.SearchAttributeTypes})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start dev stack:", err)
		os.Exit(1)
	}
	code := testskip.Main(m, "worker/runner") // a summary line of the suites skipped for their missing emulators
	stack.Stop()
	os.Exit(code)
}

// quiet shows the worker's warnings and errors (activity failures) in test output.
var quiet = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

func startRunner(t *testing.T) *Runner {
	t.Helper()
	r, err := Start(context.Background(), stack.Settings, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// produce writes msgs to topic (created with the given partitions),
// keyed so that one key's records stay in order on one partition, and
// returns the end offsets.
func produce(t *testing.T, r *Runner, topic string, partitions int32, msgs []sample.Message) lake.Offsets {
	t.Helper()
	ctx := context.Background()
	if err := r.Kafka.CreateTopic(ctx, topic, partitions); err != nil {
		t.Fatal(err)
	}
	recs := make([]*kgo.Record, len(msgs))
	for i, m := range msgs {
		recs[i] = &kgo.Record{Topic: topic, Key: m.Key, Value: m.Value}
	}
	if err := r.Kafka.Produce(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	ends, err := r.Kafka.EndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	return lake.Offsets(ends)
}

func startWorkflow(t *testing.T, c client.Client, spec activities.TableSpec) {
	t.Helper()
	_, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{
		ID: workflows.WorkflowID(spec.Table), TaskQueue: activities.TaskQueue, WorkflowExecutionErrorWhenAlreadyStarted: true,
	}, workflows.TableWorkflowName, workflows.TableInput{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
}

func status(t *testing.T, c client.Client, table string) workflows.Status {
	t.Helper()
	v, err := c.QueryWorkflow(context.Background(), workflows.WorkflowID(table), "", workflows.QueryStatus)
	if err != nil {
		t.Fatal(err)
	}
	var st workflows.Status
	if err := v.Get(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// waitCaughtUp waits until the workflow's offsets reach ends.
func waitCaughtUp(t *testing.T, c client.Client, table string, ends lake.Offsets) workflows.Status {
	t.Helper()
	return waitCaughtUpWithin(t, c, table, ends, 90*time.Second)
}

// waitCaughtUpWithin is waitCaughtUp giving up after d.
func waitCaughtUpWithin(t *testing.T, c client.Client, table string, ends lake.Offsets, d time.Duration) workflows.Status {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		st := status(t, c, table)
		if st.Phase == workflows.PhaseBlocked {
			t.Fatalf("pipeline blocked: %s", st.LastError)
		}
		done := true
		for p, e := range ends {
			done = done && st.Offsets[p] >= e
		}
		if done {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("not caught up: offsets %v, want %v (status %+v)", st.Offsets, ends, st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func stopWorkflow(t *testing.T, c client.Client, table string) {
	t.Helper()
	ctx := context.Background()
	if err := c.SignalWorkflow(ctx, workflows.WorkflowID(table), "", workflows.SignalStop, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.GetWorkflow(ctx, workflows.WorkflowID(table), "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
}

// checkMirror compares the mirror with the generator's expected state,
// every column.
func checkMirror(t *testing.T, r *Runner, table string, want []sample.Row) {
	t.Helper()
	name, _ := lake.ParseTableName(table)
	tbl, err := r.Catalog.LoadTable(context.Background(), name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := lake.ReadRows(context.Background(), tbl, []string{"order_id"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want) {
		t.Fatalf("mirror has %d rows, want %d", len(rows), len(want))
	}
	for i, w := range want {
		g := rows[i]
		note := any(nil)
		if w.Note != nil {
			note = *w.Note
		}
		exp := map[string]any{"order_id": w.OrderID, "_is_deleted": w.Deleted, "_seq": w.Seq.Hex(),
			"_source_ts": time.UnixMicro(w.SourceTsMicros).UTC().Format("2006-01-02T15:04:05.000000Z07:00")}
		if w.Status != "" {
			exp["customer"], exp["status"], exp["amount"], exp["note"] = w.Customer, w.Status, w.Amount, note
			exp["updated_at"] = time.UnixMicro(w.UpdatedAtMicros).UTC().Format("2006-01-02T15:04:05.000000Z07:00")
		}
		for k, v := range exp {
			if fmt.Sprint(g[k]) != fmt.Sprint(v) {
				t.Errorf("order_id %d: %s = %v, want %v", w.OrderID, k, g[k], v)
			}
		}
	}
}

// checkBronze asserts the bronze table holds every offset of ends exactly
// once.
func checkBronze(t *testing.T, r *Runner, table string, ends lake.Offsets) {
	t.Helper()
	name, _ := lake.ParseTableName(table)
	tbl, err := r.Catalog.LoadTable(context.Background(), name.Bronze())
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := lake.ReadRows(context.Background(), tbl, []string{lakecat.BronzePartition, lake.BronzeOffset})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range ends.SortedPartitions() {
		for o := int64(0); o < ends[p]; o++ {
			want = append(want, fmt.Sprintf("%d/%d", p, o))
		}
	}
	var got []string
	for _, row := range rows {
		got = append(got, fmt.Sprintf("%v/%v", row[lakecat.BronzePartition], row[lake.BronzeOffset]))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("bronze holds %d records %v…, want each of %d offsets once", len(got), got[:min(len(got), 10)], len(want))
	}
}

func faultyStream(seed int64) sample.Stream {
	return sample.Generate(sample.Options{Seed: seed, Inserts: 60, Updates: 120, Deletes: 20, Duplicates: 15, Late: 10,
		OutOfOrder: 10, UnseenDeletes: 5, Tombstones: true, Envelope: true, ReplicaIdentityFull: true})
}

// The main job, end to end: a faulty Debezium stream on two partitions,
// small batches, and the mirror equals the expected state exactly.
func TestEndToEndFaultyStream(t *testing.T) {
	r := startRunner(t)
	defer r.Stop()
	stream := faultyStream(11)
	spec := activities.TableSpec{Table: "e2e.orders", Topic: "e2e.public.orders", KeyColumns: []string{"order_id"}, MaxEvents: 17, MaxWait: 200 * time.Millisecond}
	ends := produce(t, r, spec.Topic, 2, stream.Delivered)
	startWorkflow(t, r.Client, spec)
	st := waitCaughtUp(t, r.Client, spec.Table, ends)
	checkMirror(t, r, spec.Table, stream.Expected())
	checkBronze(t, r, spec.Table, ends)
	tombstones := 0
	for _, m := range stream.Delivered {
		if m.Tombstone() {
			tombstones++
		}
	}
	if st.Totals.Records != int64(len(stream.Delivered)) || st.Totals.Changes != int64(len(stream.Delivered)-tombstones) ||
		st.Totals.Duplicates == 0 || st.Totals.Stale == 0 || st.Totals.Tombstones != int64(tombstones) || st.Totals.BronzeRows != int64(len(stream.Delivered)) {
		t.Fatalf("totals %+v", st.Totals)
	}
	stopWorkflow(t, r.Client, spec.Table)
}

// A worker dies after some of a batch's Iceberg commits and before the
// workflow records the result: after the bronze commit, between the
// mirror and the history commits, and after the last commit. A fresh
// worker (empty indexes, new decoder) retries the batch; nothing is lost
// and nothing is duplicated in any table.
func TestCrashBetweenCommitAndRecord(t *testing.T) {
	for i, at := range []string{"bronze", "mirror", "history"} {
		t.Run("after "+at, func(t *testing.T) { crashAfter(t, at, int64(12+i)) })
	}
}

func crashAfter(t *testing.T, at string, seed int64) {
	stream := faultyStream(seed)
	spec := activities.TableSpec{Table: "e2e.crash_" + at, Topic: "e2e.public.crash_" + at, KeyColumns: []string{"order_id"}, MaxEvents: 25, MaxWait: 200 * time.Millisecond}
	r1 := startRunner(t)
	committed := make(chan struct{})
	var once sync.Once
	r1.Activities.AfterCommit = func(_ context.Context, b lake.Batch, table string) error {
		if b.Seq != 3 || table != at {
			return nil
		}
		once.Do(func() { close(committed) })
		return errors.New("simulated crash after the " + at + " commit of batch 3")
	}
	ends := produce(t, r1, spec.Topic, 1, stream.Delivered)
	startWorkflow(t, r1.Client, spec)
	select {
	case <-committed:
	case <-time.After(60 * time.Second):
		t.Fatal("batch 3 was never committed")
	}
	r1.Stop() // the retry after the activity's 1 s backoff lands on the new worker
	r2 := startRunner(t)
	defer r2.Stop()
	st := waitCaughtUp(t, r2.Client, spec.Table, ends)
	checkMirror(t, r2, spec.Table, stream.Expected())
	checkBronze(t, r2, spec.Table, ends)
	if st.Totals.BronzeRows != ends[0] { // the retried batch reports the bronze rows its lost attempt wrote
		t.Errorf("status counts %d bronze rows, want %d", st.Totals.BronzeRows, ends[0])
	}
	if got, want := historyLines(t, r2, spec.Table), expectedHistory(t, stream, merge.HistoryOptions{}); got != want {
		t.Fatalf("history differs\ngot:\n%s\nwant:\n%s", got, want)
	}
	name, _ := lake.ParseTableName(spec.Table)
	for _, ident := range [][]string{name.Mirror(), name.Bronze(), name.History()} {
		tbl, err := r2.Catalog.LoadTable(context.Background(), ident)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, s := range tbl.Metadata().Snapshots() {
			if s.Summary != nil && s.Summary.Properties[lakecat.PropBatchID] == spec.Table+"#3" {
				n++
			}
		}
		if n > 1 { // 0 when the batch's rows for that table all went another way (e.g. history keys left to the rebuild)
			t.Fatalf("%v has %d snapshots of batch 3, want at most 1", ident, n)
		}
	}
	stopWorkflow(t, r2.Client, spec.Table)
}

// A workflow started on existing tables continues from the offsets they
// record: nothing is read twice and batch numbers keep increasing.
func TestRestartRecoversOffsets(t *testing.T) {
	r := startRunner(t)
	defer r.Stop()
	stream := faultyStream(13)
	half := len(stream.Delivered) / 2
	spec := activities.TableSpec{Table: "e2e.recover", Topic: "e2e.public.recover", KeyColumns: []string{"order_id"}, MaxEvents: 30, MaxWait: 200 * time.Millisecond}
	ends := produce(t, r, spec.Topic, 1, stream.Delivered[:half])
	startWorkflow(t, r.Client, spec)
	first := waitCaughtUp(t, r.Client, spec.Table, ends)
	stopWorkflow(t, r.Client, spec.Table)

	recs := make([]*kgo.Record, 0)
	for _, m := range stream.Delivered[half:] {
		recs = append(recs, &kgo.Record{Topic: spec.Topic, Key: m.Key, Value: m.Value})
	}
	if err := r.Kafka.Produce(context.Background(), recs...); err != nil {
		t.Fatal(err)
	}
	ends2, _ := r.Kafka.EndOffsets(context.Background(), spec.Topic)
	if _, err := r.Client.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{
		ID: workflows.WorkflowID(spec.Table), TaskQueue: activities.TaskQueue,
	}, workflows.TableWorkflowName, workflows.TableInput{Spec: spec}); err != nil {
		t.Fatal(err)
	}
	second := waitCaughtUp(t, r.Client, spec.Table, lake.Offsets(ends2))
	if second.Totals.Records != int64(len(stream.Delivered)-half) {
		t.Fatalf("the restarted workflow read %d records, want only the %d new ones", second.Totals.Records, len(stream.Delivered)-half)
	}
	if second.BatchSeq <= first.BatchSeq || second.LastBatch.Bronze.Skipped != 0 {
		t.Fatalf("batch numbers %d then %d; last batch %+v", first.BatchSeq, second.BatchSeq, second.LastBatch)
	}
	checkMirror(t, r, spec.Table, stream.Expected())
	checkBronze(t, r, spec.Table, lake.Offsets(ends2))
	stopWorkflow(t, r.Client, spec.Table)
}
