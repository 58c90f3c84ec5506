package workflows

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.temporal.io/sdk/testsuite"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// crashTotalsRecords is one batch with a record of every kind the totals
// count (the records of activities' TestRetriedBatchCountsLikeACleanOne):
// three changes, a tombstone, a transaction metadata event, a record that
// does not decode (quarantined), and a change whose source gave no
// commit time.
func crashTotalsRecords() []sample.Message {
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

// crashTotals runs TableWorkflow with the real activities (a local
// catalog, a kfake broker holding crashTotalsRecords; PlanBatch's later
// plans find nothing more) until the batch is applied, and returns the
// table's status totals. crashAt ("" for a
// clean run, or "bronze", "mirror", "history") fails ApplyBatch's first
// attempt right after that table's commit, on a worker of its own (a
// worker killed between commits); Temporal's retry runs on another
// worker, with no local state.
func crashTotals(t *testing.T, crashAt string) Totals {
	t.Helper()
	ctx := context.Background()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	kc, err := kafka.NewClient(cluster.ListenAddrs())
	require.NoError(t, err)
	t.Cleanup(kc.Close)
	spec := activities.TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"}, MaxEvents: 10,
		MaxWait: 100 * time.Millisecond, MaxQuarantine: 10}
	require.NoError(t, kc.CreateTopic(ctx, spec.Topic, 1))
	msgs := crashTotalsRecords()
	for _, m := range msgs {
		require.NoError(t, kc.Produce(ctx, &kgo.Record{Topic: spec.Topic, Key: m.Key, Value: m.Value}))
	}
	cat, err := lake.OpenCatalog(ctx, lake.CatalogConfig{LocalDir: t.TempDir()})
	require.NoError(t, err)
	acts := activities.New(cat, kc)
	acts.StateDir = t.TempDir()
	lost := activities.New(cat, kc) // the worker that dies after its commit
	lost.StateDir = t.TempDir()
	lost.AfterCommit = func(_ context.Context, _ lake.Batch, table string) error {
		if table == crashAt {
			return errors.New("simulated crash after the " + table + " commit")
		}
		return nil
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivity(acts)
	env.RegisterWorkflow(TableWorkflow)
	env.SetTestTimeout(time.Minute) // real activities on a loaded machine
	plans := 0
	env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(time.Second).Return(func(ctx context.Context, req activities.PlanRequest) (activities.Plan, error) {
		if plans++; plans == 1 {
			return acts.PlanBatch(ctx, req)
		}
		return activities.Plan{Offsets: req.Offsets, HighWatermarks: req.Offsets}, nil // nothing more (after a second of test time)
	})
	attempts := 0
	env.OnActivity(acts.ApplyBatch, mock.Anything, mock.Anything).Return(func(ctx context.Context, req activities.ApplyRequest) (activities.ApplyResult, error) {
		attempts++
		if attempts == 1 && crashAt != "" {
			return lost.ApplyBatch(ctx, req)
		}
		return acts.ApplyBatch(ctx, req)
	})
	var st Status
	env.RegisterDelayedCallback(func() {
		st = status(t, env)
		env.SignalWorkflow(SignalStop, nil)
	}, time.Minute)
	env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: spec})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, lake.Offsets{0: int64(len(msgs))}, st.Offsets, "crash after %q: the batch was not applied", crashAt)
	want := 1
	if crashAt != "" {
		want = 2
	}
	require.Equal(t, want, attempts, "crash after %q: ApplyBatch attempts", crashAt)
	return st.Totals
}

// The table's status totals after a crash between (or after) a batch's
// commits, its retry on another worker and any late-key rebuild equal a
// clean run's exactly (issue 34 item 9). A crash after the mirror's commit
// and before the history's counted the batch's history as 3 keys rebuilt
// by RebuildKeys and 0 history rows; the retry now completes the history
// itself and counts the 4 history rows the lost attempt staged.
func TestCrashTotalsLikeACleanRun(t *testing.T) {
	clean := crashTotals(t, "")
	require.Equal(t, Totals{Batches: 1, Records: 7, Changes: 4, Applied: 4, Tombstones: 1, Quarantined: 1, TxMetadata: 1,
		RowsWritten: 3, BronzeRows: 7, HistoryRows: 4, SourceTsFromKafka: 1}, clean)
	for _, at := range []string{"bronze", "mirror", "history"} {
		require.Equal(t, clean, crashTotals(t, at), "crash after the %s commit", at)
	}
}
