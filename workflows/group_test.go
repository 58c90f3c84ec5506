package workflows

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/cut"
	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// txTopic is a kfake broker with a one-partition transaction topic
// holding values, and a client for it.
func txTopic(t *testing.T, topic string, values ...string) *kafka.Client {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	kc, err := kafka.NewClient(cluster.ListenAddrs())
	require.NoError(t, err)
	t.Cleanup(kc.Close)
	ctx := context.Background()
	require.NoError(t, kc.CreateTopic(ctx, topic, 1))
	var recs []*kgo.Record
	for _, v := range values {
		recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(v)})
	}
	require.NoError(t, kc.Produce(ctx, recs...))
	return kc
}

func groupEnv(t *testing.T, kc *kafka.Client) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivity(&activities.Activities{Kafka: kc}) // the real reader, on kfake
	env.RegisterWorkflow(GroupWorkflow)
	return env
}

// computeOnly makes env's group workflow take the branch of runs before
// cutPublishVersion: it computes its cut and publishes none.
func computeOnly(env *testsuite.TestWorkflowEnvironment) {
	env.OnGetVersion(cutPublishVersion, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
}

// positionsComputeOnly makes env's group workflow take the branch of
// runs before cutPositionVersion: without a transaction topic it computes
// its cut and publishes none, and it keeps no memo.
func positionsComputeOnly(env *testsuite.TestWorkflowEnvironment) {
	env.OnGetVersion(cutPositionVersion, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
}

func queryCut(t *testing.T, env *testsuite.TestWorkflowEnvironment) GroupCut {
	t.Helper()
	v, err := env.QueryWorkflow(QueryCut)
	require.NoError(t, err)
	var c GroupCut
	require.NoError(t, v.Get(&c))
	return c
}

func pgHex(lsn uint64) string { return cdc.PostgresSeq(lsn, 0).Hex() }

func endValue(tx, lsn int, ts int64, counts string) string {
	return fmt.Sprintf(`{"status":"END","id":"%d:%d","event_count":1,"data_collections":[%s],"ts_ms":%d}`, tx, lsn, counts, ts)
}

// The group workflow reads its transaction topic every cut interval (the
// real ReadGroupTransactions on kfake), takes the tables' registrations
// and batch reports, and its cut query shows the cut: none while a table
// misses an event of the first END (the hold says which and how many),
// cut 1 at the first END once both tables applied its events (counts,
// matched by txId), the next END held by the table that has not fetched
// past it. The run continues as new after RoundsPerRun intervals with its
// state, and the next run goes on from it: cut 2 once that table fetched
// past the second END.
func TestGroupWorkflowCut(t *testing.T) {
	const topic = "srv.transaction"
	kc := txTopic(t, topic,
		`{"status":"BEGIN","id":"571:900","event_count":null,"data_collections":null,"ts_ms":1000}`,
		endValue(571, 1000, 1001, `{"data_collection":"public.accounts","event_count":2},{"data_collection":"public.transfers","event_count":1}`),
		endValue(572, 2000, 2001, `{"data_collection":"public.accounts","event_count":1},{"data_collection":"public.audit","event_count":1}`))
	checked := 0
	accounts := GroupMember{Table: "shop.accounts", Collection: "public.accounts", TransactionTopic: topic}
	transfers := GroupMember{Table: "shop.transfers", Collection: "public.transfers", TransactionTopic: topic}

	env := groupEnv(t, kc)
	computeOnly(env)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupRegister, accounts)
		env.SignalWorkflow(SignalGroupRegister, transfers)
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, BatchSeq: 1, TxEvents: map[string]int64{"571": 2},
			FetchedPast: map[int32]string{0: cdc.PostgresSeq(950, 950).Hex()}, Partitions: []int32{0}})
	}, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Equal(t, GroupCut{Group: "shop", TransactionTopic: topic, Tables: []string{"shop.accounts", "shop.transfers"},
			Holds:       []GroupHold{{Table: "shop.transfers", Collection: "public.transfers", TxID: "571:1000", Commit: pgHex(1000), Missing: 1}},
			ReadOffsets: payload.Offsets{0: 3}, Foreign: []string{"public.audit"}, Reports: 1, Ends: 2}, c)
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: transfers, BatchSeq: 1, TxEvents: map[string]int64{"571": 1},
			FetchedPast: map[int32]string{0: cdc.PostgresSeq(1000, 990).Hex()}, Partitions: []int32{0}})
	}, 70*time.Second)
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Equal(t, GroupCut{Group: "shop", TransactionTopic: topic, Number: 1, W: pgHex(1000), TxID: "571:1000", SourceTsMs: 1001,
			Tables:      []string{"shop.accounts", "shop.transfers"},
			Holds:       []GroupHold{{Table: "shop.accounts", Collection: "public.accounts", TxID: "572:2000", Commit: pgHex(2000), Missing: 1}},
			ReadOffsets: payload.Offsets{0: 3}, Foreign: []string{"public.audit"}, Reports: 2, Ends: 2}, c)
		checked++
	}, 130*time.Second)
	env.ExecuteWorkflow(GroupWorkflow, GroupInput{Group: "shop", TransactionTopic: topic, RoundsPerRun: 3})
	require.Equal(t, 1, checked)
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	var next GroupInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	require.NotNil(t, next.State)
	require.Equal(t, int64(1), next.State.Number)
	require.Equal(t, int64(2), next.State.Reports)
	require.Equal(t, int64(2), next.State.Ends)
	require.Equal(t, payload.Offsets{0: 3}, next.State.Next)

	env = groupEnv(t, kc)
	computeOnly(env)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, BatchSeq: 2,
			FetchedPast: map[int32]string{0: cdc.PostgresSeq(2100, 2100).Hex()}, Partitions: []int32{0}})
	}, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Equal(t, GroupCut{Group: "shop", TransactionTopic: topic, Number: 2, W: pgHex(2000), TxID: "572:2000", SourceTsMs: 2001,
			Tables: []string{"shop.accounts", "shop.transfers"}, ReadOffsets: payload.Offsets{0: 3}, Foreign: []string{"public.audit"}, Reports: 3, Ends: 2}, c)
		checked++
	}, 70*time.Second)
	env.ExecuteWorkflow(GroupWorkflow, next)
	require.Equal(t, 2, checked)
	require.ErrorAs(t, env.GetWorkflowError(), &can)
}

// Without a transaction topic the group cuts per position: the lowest
// position every table fetched past on every partition; a table that has
// not reported every partition of its topic holds it.
func TestGroupWorkflowPositionCut(t *testing.T) {
	env := groupEnv(t, nil)
	positionsComputeOnly(env)
	checked := false
	a := GroupMember{Table: "shop.a", Collection: "public.a"}
	b := GroupMember{Table: "shop.b", Collection: "public.b"}
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: a, BatchSeq: 1,
			FetchedPast: map[int32]string{0: pgHex(500), 1: pgHex(300)}, Partitions: []int32{0, 1}})
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: b, BatchSeq: 1,
			FetchedPast: map[int32]string{0: pgHex(700)}, Partitions: []int32{0, 1}})
	}, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, GroupCut{Group: "shop", PerPosition: true, Tables: []string{"shop.a", "shop.b"},
			Holds: []GroupHold{{Table: "shop.b", Collection: "public.b"}}, Reports: 2}, queryCut(t, env))
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: b, BatchSeq: 2,
			FetchedPast: map[int32]string{1: pgHex(400)}, Partitions: []int32{0, 1}})
	}, 70*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, GroupCut{Group: "shop", Number: 1, W: pgHex(300), PerPosition: true, Tables: []string{"shop.a", "shop.b"},
			Holds: []GroupHold{{Table: "shop.a", Collection: "public.a"}}, Reports: 3}, queryCut(t, env))
		checked = true
	}, 130*time.Second)
	env.ExecuteWorkflow(GroupWorkflow, GroupInput{Group: "shop", RoundsPerRun: 3})
	require.True(t, checked)
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
}

// A grouped table signals its group's workflow after each batch that
// committed, with the batch's events per transaction, positions and
// partitions; a table without a group signals nothing.
func TestTableWorkflowReportsToGroup(t *testing.T) {
	grouped := spec
	grouped.Group, grouped.TransactionTopic = "shop", "srv.transaction"
	for _, s := range []activities.TableSpec{grouped, spec} {
		env, acts := newEnv(t)
		env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{Offsets: lake.Offsets{0: 0, 1: 0}}, nil).Once()
		env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(spec.MaxWait).Return(func(_ context.Context, req activities.PlanRequest) (activities.Plan, error) {
			if req.Offsets[0] == 0 {
				return activities.Plan{Ranges: []lake.Range{{Partition: 0, From: 0, To: 10}}, Records: 10,
					Offsets: lake.Offsets{0: 10, 1: 0}, HighWatermarks: lake.Offsets{0: 10, 1: 0}}, nil
			}
			return activities.Plan{Offsets: req.Offsets, HighWatermarks: lake.Offsets{0: 10, 1: 0}}, nil
		})
		progress := &payload.GroupProgress{TxEvents: map[string]int64{"571": 3}, FetchedPast: map[int32]string{0: pgHex(1000)}}
		env.OnActivity(acts.ApplyBatch, mock.Anything, mock.Anything).Return(func(_ context.Context, req activities.ApplyRequest) (activities.ApplyResult, error) {
			res := activities.ApplyResult{BatchID: req.Batch.ID, BatchSeq: req.Batch.Seq, Records: 10, EndOffsets: lake.Offsets{0: 10, 1: 0}}
			if req.Spec.Group != "" {
				res.Group = progress
			}
			return res, nil
		})
		signalled := 0
		if s.Group != "" {
			want := GroupReport{GroupMember: GroupMember{Table: "shop.orders", Collection: "public.orders", TransactionTopic: "srv.transaction"},
				BatchSeq: 1, TxEvents: progress.TxEvents, FetchedPast: progress.FetchedPast, Partitions: []int32{0, 1}}
			env.OnSignalExternalWorkflow(mock.Anything, "lakemirror-group-shop", "", SignalGroupReport, want).Return(func(_, _, _, _ string, _ any) error {
				signalled++
				return nil
			}).Once()
		}
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalStop, nil) }, 5*time.Second)
		env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: s})
		require.True(t, env.IsWorkflowCompleted())
		require.NoError(t, env.GetWorkflowError())
		if s.Group != "" {
			require.Equal(t, 1, signalled)
		}
		env.AssertExpectations(t)
	}
}

// A grouped table's backfill re-applies records its stream batches
// reported already: its batches send no report, the stream's batch after
// it does.
func TestTableWorkflowBackfillDoesNotReport(t *testing.T) {
	grouped := spec.Defaults()
	grouped.Group = "shop"
	env, acts := newEnv(t)
	env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(spec.MaxWait).Return(func(_ context.Context, req activities.PlanRequest) (activities.Plan, error) {
		if req.Offsets[0] == 10 {
			return activities.Plan{Ranges: []lake.Range{{Partition: 0, From: 10, To: 12}}, Records: 2,
				Offsets: lake.Offsets{0: 12}, HighWatermarks: lake.Offsets{0: 12}}, nil
		}
		return activities.Plan{Offsets: req.Offsets, HighWatermarks: lake.Offsets{0: 12}}, nil
	})
	var applied []lake.Batch
	env.OnActivity(acts.ApplyBatch, mock.Anything, mock.Anything).Return(func(_ context.Context, req activities.ApplyRequest) (activities.ApplyResult, error) {
		applied = append(applied, req.Batch)
		return activities.ApplyResult{BatchID: req.Batch.ID, BatchSeq: req.Batch.Seq, Records: 2, EndOffsets: req.Batch.EndOffsets,
			Group: &payload.GroupProgress{TxEvents: map[string]int64{"7": 2}}}, nil
	})
	var reported []int64
	env.OnSignalExternalWorkflow(mock.Anything, "lakemirror-group-shop", "", SignalGroupReport, mock.Anything).Return(func(_, _, _, _ string, arg any) error {
		reported = append(reported, arg.(GroupReport).BatchSeq)
		return nil
	})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalStop, nil) }, 10*time.Second)
	env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: grouped, State: &TableState{Spec: grouped, Phase: PhaseBackfill, Recovered: true,
		Offsets: payload.Offsets{0: 10}, BatchSeq: 4, Backfill: []payload.Range{{Partition: 0, From: 0, To: 10}}}})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, applied, 2)
	require.Equal(t, []lake.Range{{Partition: 0, From: 0, To: 10}}, applied[0].Ranges)  // the backfill: batch 5
	require.Equal(t, []lake.Range{{Partition: 0, From: 10, To: 12}}, applied[1].Ranges) // the stream: batch 6
	require.Equal(t, []int64{6}, reported)
}

// A table's reports name its events by data_collection_order
// (GroupReport.TxSeen): an event redelivered in a later batch counts
// once, so the transaction holds the cut until its missing event is
// reported (the count of the reports, 2, reached the END's at the
// redelivery); the state carried across continue-as-new keeps the
// orders seen.
func TestGroupWorkflowRedeliveredEvent(t *testing.T) {
	const topic = "srv.transaction"
	kc := txTopic(t, topic, endValue(571, 1000, 1001, `{"data_collection":"public.accounts","event_count":2}`))
	accounts := GroupMember{Table: "shop.accounts", Collection: "public.accounts", TransactionTopic: topic}
	seen := func(lo, hi int64) map[string]payload.TxSeen {
		return map[string]payload.TxSeen{"571": {Orders: [][2]int64{{lo, hi}}}}
	}
	fetched := map[int32]string{0: cdc.PostgresSeq(950, 950).Hex()}
	checked := 0
	env := groupEnv(t, kc)
	computeOnly(env)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupRegister, accounts)
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, BatchSeq: 1, TxSeen: seen(1, 1), FetchedPast: fetched, Partitions: []int32{0}})
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, BatchSeq: 2, TxSeen: seen(1, 1), FetchedPast: fetched, Partitions: []int32{0}})
	}, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Equal(t, GroupCut{Group: "shop", TransactionTopic: topic, Tables: []string{"shop.accounts"},
			Holds:       []GroupHold{{Table: "shop.accounts", Collection: "public.accounts", TxID: "571:1000", Commit: pgHex(1000), Missing: 1}},
			ReadOffsets: payload.Offsets{0: 1}, Reports: 2, Ends: 1}, c)
		checked++
	}, 70*time.Second)
	env.ExecuteWorkflow(GroupWorkflow, GroupInput{Group: "shop", TransactionTopic: topic, RoundsPerRun: 2})
	require.Equal(t, 1, checked)
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	var next GroupInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	require.NotNil(t, next.State)
	require.Equal(t, map[string]map[string]cut.StateSeen{"public.accounts": {"571": {Orders: cut.Orders{{1, 1}}}}}, next.State.Tracker.Seen)

	env = groupEnv(t, kc)
	computeOnly(env)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, BatchSeq: 3, TxSeen: seen(1, 2), FetchedPast: fetched, Partitions: []int32{0}})
	}, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Equal(t, GroupCut{Group: "shop", TransactionTopic: topic, Number: 1, W: pgHex(1000), TxID: "571:1000", SourceTsMs: 1001,
			Tables: []string{"shop.accounts"}, ReadOffsets: payload.Offsets{0: 1}, Reports: 3, Ends: 1}, c)
		checked++
	}, 70*time.Second)
	env.ExecuteWorkflow(GroupWorkflow, next)
	require.Equal(t, 2, checked)
}

// The group takes its cuts in the tables (cutPublishVersion): at its
// first round it freezes both tables; once both reported frozen
// (accounts at a position of transaction 571, transfers with nothing
// applied) it bounds them at the oldest END above the higher watermark
// (571's commit); once transfers applied 571's event the cut is complete
// and PublishCut runs with the tables (its request asserted exactly),
// the cut is published and the tables are released. The next attempt,
// a cut interval later, is given up when transfers does not freeze in
// time: the reason is kept and both tables are released.
func TestGroupWorkflowPublishesCuts(t *testing.T) {
	const topic = "srv.transaction"
	kc := txTopic(t, topic,
		endValue(571, 1000, 1001, `{"data_collection":"public.accounts","event_count":2},{"data_collection":"public.transfers","event_count":1}`),
		endValue(572, 2000, 2001, `{"data_collection":"public.accounts","event_count":1}`))
	accounts := GroupMember{Table: "shop.accounts", Collection: "public.accounts", TransactionTopic: topic}
	transfers := GroupMember{Table: "shop.transfers", Collection: "public.transfers", TransactionTopic: topic}
	env := groupEnv(t, kc)
	var sent []string
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", SignalGroupCut, mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		sent = append(sent, args.String(1)+" "+args.Get(4).(string))
	})
	tagged := []payload.CutTagged{{Table: "shop.accounts", Mirror: 11, History: 12}, {Table: "shop.transfers", Mirror: 21}}
	var published []payload.PublishCutRequest
	env.OnActivity(payload.ActivityPublishCut, mock.Anything, mock.Anything).Return(func(_ context.Context, req payload.PublishCutRequest) (payload.PublishCutResult, error) {
		published = append(published, req)
		return payload.PublishCutResult{Tagged: tagged}, nil
	})
	w1000 := pgHex(1000)
	wa, wt := "lakemirror-table-shop.accounts", "lakemirror-table-shop.transfers"
	checked := 0
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupRegister, accounts)
		env.SignalWorkflow(SignalGroupRegister, transfers)
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, BatchSeq: 1, TxEvents: map[string]int64{"571": 2},
			FetchedPast: map[int32]string{0: cdc.PostgresSeq(900, 950).Hex()}, Partitions: []int32{0}})
	}, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{wa + " freeze 1", wt + " freeze 1"}, sent)
		c := queryCut(t, env)
		require.NotNil(t, c.Pending)
		require.Equal(t, int64(1), c.Pending.Attempt)
		require.Equal(t, int64(1), c.Pending.Number)
		require.Equal(t, "", c.Pending.W)
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, Frozen: 1, Watermark: cdc.PostgresSeq(900, 950).Hex()})
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: transfers, Frozen: 1})
	}, 65*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{wa + " freeze 1", wt + " freeze 1", wa + " bound 1 " + w1000, wt + " bound 1 " + w1000}, sent)
		require.Empty(t, published)
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: transfers, BatchSeq: 1, TxEvents: map[string]int64{"571": 1},
			FetchedPast: map[int32]string{0: cdc.PostgresSeq(900, 990).Hex()}, Partitions: []int32{0}})
	}, 70*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []payload.PublishCutRequest{{Group: "shop", Number: 1, W: w1000, TxID: "571:1000", SourceTsMs: 1001,
			Tables: []string{"shop.accounts", "shop.transfers"}}}, published)
		require.Equal(t, []string{wa + " freeze 1", wt + " freeze 1", wa + " bound 1 " + w1000, wt + " bound 1 " + w1000,
			wa + " release 1", wt + " release 1"}, sent)
		c := queryCut(t, env)
		require.Nil(t, c.Pending)
		require.NotNil(t, c.Published)
		require.Equal(t, int64(1), c.Published.Number)
		require.Equal(t, w1000, c.Published.W)
		require.Equal(t, "571:1000", c.Published.TxID)
		require.Equal(t, int64(1001), c.Published.SourceTsMs)
		require.Equal(t, tagged, c.Published.Tagged)
		checked++
	}, 75*time.Second)
	// attempt 2: a cut interval after the release; transfers never freezes
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{wa + " freeze 2", wt + " freeze 2"}, sent[6:])
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, Frozen: 2, Watermark: cdc.PostgresSeq(1000, 1500).Hex()})
	}, 140*time.Second)
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Nil(t, c.Pending)
		require.Equal(t, int64(1), c.Aborts)
		require.Equal(t, "cut attempt 2: tables shop.transfers did not freeze within 1m0s (paused, blocked or busy with a long batch): they hold the cut", c.LastAbort)
		require.Equal(t, int64(1), c.Published.Number)
		require.Equal(t, []string{wa + " freeze 2", wt + " freeze 2", wa + " release 2", wt + " release 2"}, sent[6:])
		require.Len(t, published, 1)
		checked++
	}, 210*time.Second)
	env.ExecuteWorkflow(GroupWorkflow, GroupInput{Group: "shop", TransactionTopic: topic, RoundsPerRun: 4})
	require.Equal(t, 2, checked)
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
}

// A grouped table takes part in its group's cut: frozen (the plan in
// flight cut short), it reports its watermark once and applies nothing; bound,
// its batches carry the cut (ApplyRequest.Cut) and, when one applies
// nothing (every record left is above W), it waits; released, it applies
// the rest unbounded.
func TestTableWorkflowTakesPartInCut(t *testing.T) {
	grouped := spec
	grouped.Group, grouped.TransactionTopic = "shop", "srv.transaction"
	env, acts := newEnv(t)
	env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{Offsets: lake.Offsets{0: 0}}, nil).Once()
	env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(time.Second).Return(func(_ context.Context, req activities.PlanRequest) (activities.Plan, error) {
		if from := req.Offsets[0]; from < 30 {
			to := min(from+10, 30)
			return activities.Plan{Ranges: []lake.Range{{Partition: 0, From: from, To: to}}, Records: to - from,
				Offsets: lake.Offsets{0: to}, HighWatermarks: lake.Offsets{0: 30}}, nil
		}
		return activities.Plan{Offsets: req.Offsets, HighWatermarks: lake.Offsets{0: 30}}, nil
	})
	var applied []string
	env.OnActivity(acts.ApplyBatch, mock.Anything, mock.Anything).Return(func(_ context.Context, req activities.ApplyRequest) (activities.ApplyResult, error) {
		r := req.Batch.Ranges[0]
		end := r.To
		line := fmt.Sprintf("[%d,%d)", r.From, r.To)
		if req.Cut != nil {
			end = max(min(r.To, 20), r.From) // records from offset 20 on are above W
			line += fmt.Sprintf(" cut %d %s", req.Cut.Number, req.Cut.W)
		}
		applied = append(applied, line)
		res := activities.ApplyResult{BatchID: req.Batch.ID, BatchSeq: req.Batch.Seq, Records: int(end - r.From), EndOffsets: lake.Offsets{0: end},
			Group: &payload.GroupProgress{FetchedPast: map[int32]string{0: pgHex(uint64(100 + end))}}}
		res.Mirror.Watermark = pgHex(uint64(100 + end))
		return res, nil
	})
	var reports []string
	env.OnSignalExternalWorkflow(mock.Anything, "lakemirror-group-shop", "", SignalGroupReport, mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		r := args.Get(4).(GroupReport)
		reports = append(reports, fmt.Sprintf("batch %d frozen %d watermark %s refused %d", r.BatchSeq, r.Frozen, r.Watermark, r.Refused))
	})
	w := pgHex(120)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalGroupCut, "freeze 1") }, 1500*time.Millisecond)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"[0,10)"}, applied) // the freeze cut the next plan short
		s := status(t, env)
		require.NotNil(t, s.Cut)
		require.Equal(t, CutHold{Attempt: 1, Reported: true, Since: s.Cut.Since}, *s.Cut)
		env.SignalWorkflow(SignalGroupCut, "bound 1 "+w)
		env.SignalWorkflow(SignalGroupCut, "bound 7 "+w) // not frozen for 7: refused
	}, 5*time.Second)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalGroupCut, "release 1") }, 14*time.Second)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalStop, nil) }, 20*time.Second)
	env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: grouped})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, []string{"[0,10)", "[10,20) cut 1 " + w, "[20,30) cut 1 " + w, "[20,30) cut 1 " + w, "[20,30)"}, applied)
	require.Equal(t, []string{
		"batch 1 frozen 0 watermark  refused 0",
		"batch 0 frozen 1 watermark " + pgHex(110) + " refused 0",
		"batch 2 frozen 0 watermark  refused 0",
		"batch 0 frozen 0 watermark  refused 7", // the second bound is taken while batch 2 is planned
		"batch 3 frozen 0 watermark  refused 0",
		"batch 4 frozen 0 watermark  refused 0",
		"batch 5 frozen 0 watermark  refused 0",
	}, reports)
}

// A group without a transaction topic publishes its cuts per position
// (cutPositionVersion): it freezes its tables once every partition has a
// position, bounds them at the highest frozen watermark (above the
// PositionCut's W), publishes once every table has fetched past W on
// every partition (the held tables' reports), keeps its memo (the
// published cut, then the tables holding the next one), begins no cut
// while a partition has no change past the last cut, gives a cut up
// after cutBoundTimeout when a partition stays below W, naming it, and
// begins none again while a partition stays below that bound.
func TestGroupWorkflowPublishesCutsPerPosition(t *testing.T) {
	a := GroupMember{Table: "shop.a", Collection: "public.a"}
	b := GroupMember{Table: "shop.b", Collection: "public.b"}
	env := groupEnv(t, nil)
	var sent []string
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", SignalGroupCut, mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		sent = append(sent, args.String(1)+" "+args.Get(4).(string))
	})
	var memos []GroupMemo
	env.OnUpsertMemo(mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		memos = append(memos, *args.Get(0).(map[string]any)[MemoCut].(*GroupMemo))
	})
	tagged := []payload.CutTagged{{Table: "shop.a", Mirror: 11, History: 12}, {Table: "shop.b", Mirror: 21}}
	var published []payload.PublishCutRequest
	env.OnActivity(payload.ActivityPublishCut, mock.Anything, mock.Anything).Return(func(_ context.Context, req payload.PublishCutRequest) (payload.PublishCutResult, error) {
		published = append(published, req)
		return payload.PublishCutResult{Tagged: tagged}, nil
	})
	wa, wb := "lakemirror-table-shop.a", "lakemirror-table-shop.b"
	w := pgHex(500)
	var start time.Time
	checked := 0
	env.RegisterDelayedCallback(func() {
		start = env.Now().Add(-10 * time.Second).UTC()
		env.SignalWorkflow(SignalGroupRegister, a)
		env.SignalWorkflow(SignalGroupRegister, b)
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: a, BatchSeq: 1, FetchedPast: map[int32]string{0: pgHex(500)}, Partitions: []int32{0}})
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: b, BatchSeq: 1, FetchedPast: map[int32]string{0: pgHex(300), 1: pgHex(450)}, Partitions: []int32{0, 1}})
	}, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{wa + " freeze 1", wb + " freeze 1"}, sent) // at 10 s: every partition has a position
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: a, Frozen: 1, Watermark: pgHex(500), SourceTsMs: 5000})
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: b, Frozen: 1, Watermark: pgHex(300), SourceTsMs: 3000})
	}, 62*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{wa + " freeze 1", wb + " freeze 1", wa + " bound 1 " + w, wb + " bound 1 " + w}, sent)
		c := queryCut(t, env)
		require.NotNil(t, c.Pending)
		require.Equal(t, PendingCut{Attempt: 1, Number: 1, Tables: []string{"shop.a", "shop.b"}, Frozen: map[string]string{"shop.a": pgHex(500), "shop.b": pgHex(300)},
			W: w, SourceTsMs: 5000, Since: start.Add(10 * time.Second), BoundAt: start.Add(62 * time.Second), PerPosition: true, Freshest: 5000}, *c.Pending)
		require.Equal(t, []string{"shop.b partition 0 at " + pgHex(300), "shop.b partition 1 at " + pgHex(450)}, c.Waiting)
		// b's batch bounded at W stopped on partition 0 before a record above W
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: b, BatchSeq: 2, FetchedPast: map[int32]string{0: w}, Partitions: []int32{0, 1}})
	}, 65*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Empty(t, published)
		require.Equal(t, []string{"shop.b partition 1 at " + pgHex(450)}, queryCut(t, env).Waiting)
		last := memos[len(memos)-1]
		require.Equal(t, GroupMemo{Group: "shop", PerPosition: true, Pending: &MemoPendingCut{Attempt: 1, Number: 1, W: w, Since: start.Add(10 * time.Second).UTC(),
			Waiting: []string{"shop.b partition 1 at " + pgHex(450)}}}, last)
		// its held batch applied nothing, all of partition 1 above W
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: b, BatchSeq: 3, FetchedPast: map[int32]string{1: w}, Partitions: []int32{0, 1}})
	}, 68*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []payload.PublishCutRequest{{Group: "shop", Number: 1, W: w, SourceTsMs: 5000, Tables: []string{"shop.a", "shop.b"}, PerPosition: true}}, published)
		require.Equal(t, []string{wa + " freeze 1", wb + " freeze 1", wa + " bound 1 " + w, wb + " bound 1 " + w, wa + " release 1", wb + " release 1"}, sent)
		c := queryCut(t, env)
		require.Nil(t, c.Pending)
		at := start.Add(68 * time.Second)
		require.Equal(t, &PublishedCut{Number: 1, W: w, SourceTsMs: 5000, PublishedAt: at, Tagged: tagged, PerPosition: true, HeldMs: 58000}, c.Published)
		src := time.UnixMilli(5000).UTC()
		require.Equal(t, GroupMemo{Group: "shop", PerPosition: true, Published: &MemoPublished{Number: 1, W: w, SourceTs: &src, PerPosition: true,
			PublishedAt: at.UTC(), HeldMs: 58000}, HeldBy: []string{"shop.a", "shop.b"}}, memos[len(memos)-1])
		checked++
	}, 75*time.Second)
	// no partition moved past W: no cut begins when the next is due (128 s)
	env.RegisterDelayedCallback(func() {
		require.Len(t, sent, 6)
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: a, BatchSeq: 2, FetchedPast: map[int32]string{0: pgHex(800)}, Partitions: []int32{0}})
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: b, BatchSeq: 4, FetchedPast: map[int32]string{0: pgHex(700), 1: pgHex(900)}, Partitions: []int32{0, 1}})
	}, 140*time.Second)
	// attempt 2 began with the reports at 140 s; bound at 900, partition 0
	// of both stays below it
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{wa + " freeze 2", wb + " freeze 2"}, sent[6:])
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: a, Frozen: 2, Watermark: pgHex(800), SourceTsMs: 8000})
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: b, Frozen: 2, Watermark: pgHex(900), SourceTsMs: 9000})
	}, 190*time.Second)
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Nil(t, c.Pending)
		require.Equal(t, int64(1), c.Aborts)
		require.Equal(t, "cut attempt 2: the cut per position at "+pgHex(900)+" did not complete within 10m0s (shop.a partition 0 at "+pgHex(800)+
			"; shop.b partition 0 at "+pgHex(700)+"): a paused or blocked table, or a partition with no change above W, holds it", c.LastAbort)
		require.Equal(t, []string{wa + " freeze 2", wb + " freeze 2", wa + " bound 2 " + pgHex(900), wb + " bound 2 " + pgHex(900), wa + " release 2", wb + " release 2"}, sent[6:])
		require.Len(t, published, 1)
		last := memos[len(memos)-1]
		require.Equal(t, int64(1), last.Aborts)
		require.Equal(t, c.LastAbort, last.LastAbort)
		require.Nil(t, last.Pending)
		require.Equal(t, int64(1), last.Published.Number)
		require.Equal(t, []string{"shop.b"}, last.HeldBy) // below the bound given up: no cut begins
		checked++
	}, 800*time.Second)
	env.ExecuteWorkflow(GroupWorkflow, GroupInput{Group: "shop", RoundsPerRun: 5})
	require.Equal(t, 2, checked)
	require.Len(t, sent, 12) // no attempt 3 while the partitions stay below 900
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
}

// A table of a group without a transaction topic reports each batch
// bounded at the group's W that stopped before a record above W as
// fetched past W on that partition, also a batch that applied nothing
// (cutHeldReportVersion); on the old branch such a batch reports nothing.
func TestTableWorkflowReportsPastCutPerPosition(t *testing.T) {
	w := pgHex(120)
	for _, c := range []struct {
		old  bool
		want []string
	}{
		{false, []string{
			"batch 1 frozen 0 fetched map[0:" + pgHex(110) + "]",
			"batch 0 frozen 1 fetched map[0:" + pgHex(110) + "]", // the frozen report carries what the table fetched
			"batch 2 frozen 0 fetched map[0:" + pgHex(120) + "]",
			"batch 3 frozen 0 fetched map[0:" + w + "]", // applied nothing: every record left is above W
			"batch 4 frozen 0 fetched map[0:" + w + "]",
			"batch 5 frozen 0 fetched map[0:" + pgHex(130) + "]",
		}},
		{true, []string{
			"batch 1 frozen 0 fetched map[0:" + pgHex(110) + "]",
			"batch 0 frozen 1 fetched map[0:" + pgHex(110) + "]", // the frozen report carries what the table fetched
			"batch 2 frozen 0 fetched map[0:" + pgHex(120) + "]",
			"batch 5 frozen 0 fetched map[0:" + pgHex(130) + "]",
		}},
	} {
		t.Run(fmt.Sprintf("old=%v", c.old), func(t *testing.T) {
			grouped := spec
			grouped.Group = "shop"
			env, acts := newEnv(t)
			if c.old {
				env.OnGetVersion(cutHeldReportVersion, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
			}
			env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{Offsets: lake.Offsets{0: 0}}, nil).Once()
			env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(time.Second).Return(func(_ context.Context, req activities.PlanRequest) (activities.Plan, error) {
				if from := req.Offsets[0]; from < 30 {
					to := min(from+10, 30)
					return activities.Plan{Ranges: []lake.Range{{Partition: 0, From: from, To: to}}, Records: to - from,
						Offsets: lake.Offsets{0: to}, HighWatermarks: lake.Offsets{0: 30}}, nil
				}
				return activities.Plan{Offsets: req.Offsets, HighWatermarks: lake.Offsets{0: 30}}, nil
			})
			env.OnActivity(acts.ApplyBatch, mock.Anything, mock.Anything).Return(func(_ context.Context, req activities.ApplyRequest) (activities.ApplyResult, error) {
				r := req.Batch.Ranges[0]
				end := r.To
				if req.Cut != nil {
					end = max(min(r.To, 20), r.From) // records from offset 20 on are above W
				}
				res := activities.ApplyResult{BatchID: req.Batch.ID, BatchSeq: req.Batch.Seq, Records: int(end - r.From), EndOffsets: lake.Offsets{0: end}}
				if end > r.From { // as ApplyBatch: a batch cut to nothing reports no progress
					res.Group = &payload.GroupProgress{FetchedPast: map[int32]string{0: pgHex(uint64(100 + end))}}
					res.Mirror.Watermark = pgHex(uint64(100 + end))
				}
				return res, nil
			})
			var reports []string
			env.OnSignalExternalWorkflow(mock.Anything, "lakemirror-group-shop", "", SignalGroupReport, mock.Anything).Return(nil).Run(func(args mock.Arguments) {
				r := args.Get(4).(GroupReport)
				reports = append(reports, fmt.Sprintf("batch %d frozen %d fetched %v", r.BatchSeq, r.Frozen, r.FetchedPast))
			})
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalGroupCut, "freeze 1") }, 1500*time.Millisecond)
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalGroupCut, "bound 1 "+w) }, 5*time.Second)
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalGroupCut, "release 1") }, 14*time.Second)
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalStop, nil) }, 20*time.Second)
			env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: grouped})
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			require.Equal(t, c.want, reports)
		})
	}
}

// A table whose data collection is not confirmed (no change event of it
// has named it, and it was not given as --source-table) while the ENDs
// name a collection no table of the group has may be misnamed: its
// transactions would not be waited for. The group (cutUnconfirmedVersion)
// begins no cut then, and the cut query's holds say why and how to go
// on. Started again under the collection the ENDs name, the table takes
// it off the foreign list, and the cut begins at the next round.
func TestGroupWorkflowHoldsUnconfirmed(t *testing.T) {
	const topic = "srv.transaction"
	kc := txTopic(t, topic,
		endValue(571, 1000, 1001, `{"data_collection":"sales.accounts","event_count":2},{"data_collection":"public.transfers","event_count":1}`))
	accounts := GroupMember{Table: "shop.accounts", Collection: "public.accounts", TransactionTopic: topic}
	transfers := GroupMember{Table: "shop.transfers", Collection: "public.transfers", TransactionTopic: topic, Named: true}
	env := groupEnv(t, kc)
	var sent []string
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", SignalGroupCut, mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		sent = append(sent, args.String(1)+" "+args.Get(4).(string))
	})
	var memos []GroupMemo
	env.OnUpsertMemo(mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		memos = append(memos, *args.Get(0).(map[string]any)[MemoCut].(*GroupMemo))
	})
	checked := 0
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupRegister, accounts)
		env.SignalWorkflow(SignalGroupRegister, transfers)
	}, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: transfers, BatchSeq: 1, TxEvents: map[string]int64{"571": 1},
			FetchedPast: map[int32]string{0: cdc.PostgresSeq(900, 990).Hex()}, Partitions: []int32{0}, Own: true})
	}, 62*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Empty(t, sent, "no cut begins")
		c := queryCut(t, env)
		require.Nil(t, c.Pending)
		require.Equal(t, []string{"sales.accounts"}, c.Foreign)
		require.Equal(t, []GroupHold{{Table: "shop.accounts", Collection: "public.accounts", Unconfirmed: true,
			Note: `no change event has named its data collection "public.accounts" yet, and the transaction topic's ENDs name sales.accounts, which no table of the group has: ` +
				"if one of them is this table's source table, stop the table and start it again with --source-table <that collection>; " +
				"if none is, its first change event confirms it, or stop it and start it again with --source-table public.accounts"}}, c.Holds)
		require.Equal(t, []string{"shop.accounts: " + c.Holds[0].Note}, memos[len(memos)-1].HeldBy) // the Web UI's memo too
		checked++
		// started again with --source-table sales.accounts; its batch applies 571's events
		accounts.Collection, accounts.Named = "sales.accounts", true
		env.SignalWorkflow(SignalGroupRegister, accounts)
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, BatchSeq: 1, TxEvents: map[string]int64{"571": 2},
			FetchedPast: map[int32]string{0: cdc.PostgresSeq(900, 950).Hex()}, Partitions: []int32{0}, Own: true})
	}, 65*time.Second)
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Empty(t, c.Foreign)
		require.Empty(t, c.Holds)
		require.Equal(t, pgHex(1000), c.W)
		require.Equal(t, []string{"lakemirror-table-shop.accounts freeze 1", "lakemirror-table-shop.transfers freeze 1"}, sent)
		checked++
	}, 125*time.Second)
	env.ExecuteWorkflow(GroupWorkflow, GroupInput{Group: "shop", TransactionTopic: topic, RoundsPerRun: 3})
	require.Equal(t, 2, checked)
}

// A cut begun while the ENDs named only the group's collections is given
// up, not published, when an END read before it completes names a
// collection no table has while a table's own is not confirmed (its
// events carry no collection, as Oracle's): the reason says which table
// and how to go on; the tables are released.
func TestGroupWorkflowUnconfirmedGivesCutUp(t *testing.T) {
	const topic = "srv.transaction"
	kc := txTopic(t, topic,
		endValue(571, 1000, 1001, `{"data_collection":"public.accounts","event_count":1},{"data_collection":"public.transfers","event_count":1}`))
	accounts := GroupMember{Table: "shop.accounts", Collection: "public.accounts", TransactionTopic: topic}
	transfers := GroupMember{Table: "shop.transfers", Collection: "public.transfers", TransactionTopic: topic, Named: true}
	env := groupEnv(t, kc)
	var sent []string
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", SignalGroupCut, mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		sent = append(sent, args.String(1)+" "+args.Get(4).(string))
	})
	var published []payload.PublishCutRequest
	env.OnActivity(payload.ActivityPublishCut, mock.Anything, mock.Anything).Return(func(_ context.Context, req payload.PublishCutRequest) (payload.PublishCutResult, error) {
		published = append(published, req)
		return payload.PublishCutResult{}, nil
	})
	wa, wt := "lakemirror-table-shop.accounts", "lakemirror-table-shop.transfers"
	w1000 := pgHex(1000)
	checked := 0
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupRegister, accounts)
		env.SignalWorkflow(SignalGroupRegister, transfers)
	}, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{wa + " freeze 1", wt + " freeze 1"}, sent)
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, Frozen: 1})
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: transfers, Frozen: 1})
	}, 62*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{wa + " freeze 1", wt + " freeze 1", wa + " bound 1 " + w1000, wt + " bound 1 " + w1000}, sent)
		require.NoError(t, kc.Produce(context.Background(), &kgo.Record{Topic: topic,
			Value: []byte(endValue(572, 2000, 2001, `{"data_collection":"sales.audit","event_count":1}`))}))
	}, 63*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"sales.audit"}, queryCut(t, env).Foreign)
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, BatchSeq: 1, TxEvents: map[string]int64{"571": 1},
			FetchedPast: map[int32]string{0: cdc.PostgresSeq(900, 950).Hex()}, Partitions: []int32{0}})
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: transfers, BatchSeq: 1, TxEvents: map[string]int64{"571": 1},
			FetchedPast: map[int32]string{0: cdc.PostgresSeq(900, 990).Hex()}, Partitions: []int32{0}, Own: true})
	}, 70*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Empty(t, published)
		c := queryCut(t, env)
		require.Nil(t, c.Pending)
		require.Equal(t, int64(1), c.Aborts)
		require.Equal(t, `cut attempt 1: a table's data collection is not confirmed: shop.accounts: no change event has named its data collection "public.accounts" yet, `+
			"and the transaction topic's ENDs name sales.audit, which no table of the group has: "+
			"if one of them is this table's source table, stop the table and start it again with --source-table <that collection>; "+
			"if none is, its first change event confirms it, or stop it and start it again with --source-table public.accounts", c.LastAbort)
		require.Equal(t, []string{wa + " release 1", wt + " release 1"}, sent[4:])
		checked++
	}, 75*time.Second)
	env.ExecuteWorkflow(GroupWorkflow, GroupInput{Group: "shop", TransactionTopic: topic, RoundsPerRun: 2})
	require.Equal(t, 1, checked)
}

// A table that misses events below a bound cut's W and applies no batch
// (paused, blocked, without a worker) gives the cut up after
// cutStallTimeout (cutUnconfirmedVersion), so that the other tables,
// held at W, do not wait out cutBoundTimeout; a table that goes on
// reporting batches does not.
func TestGroupWorkflowStalledTableGivesCutUp(t *testing.T) {
	const topic = "srv.transaction"
	kc := txTopic(t, topic,
		endValue(571, 1000, 1001, `{"data_collection":"public.accounts","event_count":2},{"data_collection":"public.transfers","event_count":3}`))
	accounts := GroupMember{Table: "shop.accounts", Collection: "public.accounts", TransactionTopic: topic}
	transfers := GroupMember{Table: "shop.transfers", Collection: "public.transfers", TransactionTopic: topic}
	env := groupEnv(t, kc)
	var sent []string
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", SignalGroupCut, mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		sent = append(sent, args.String(1)+" "+args.Get(4).(string))
	})
	wa, wt := "lakemirror-table-shop.accounts", "lakemirror-table-shop.transfers"
	w1000 := pgHex(1000)
	checked := 0
	batch := func(m GroupMember, seq, events int64) GroupReport {
		return GroupReport{GroupMember: m, BatchSeq: seq, TxEvents: map[string]int64{"571": events},
			FetchedPast: map[int32]string{0: cdc.PostgresSeq(900, 900+uint64(seq)).Hex()}, Partitions: []int32{0}, Own: true}
	}
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupRegister, accounts)
		env.SignalWorkflow(SignalGroupRegister, transfers)
	}, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{wa + " freeze 1", wt + " freeze 1"}, sent)
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, Frozen: 1})
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: transfers, Frozen: 1})
	}, 62*time.Second)
	// bound at 62 s; accounts applies its two events, transfers one of
	// its three, then goes on with batches (a lagging table) until 150 s
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{wa + " bound 1 " + w1000, wt + " bound 1 " + w1000}, sent[2:])
		env.SignalWorkflow(SignalGroupReport, batch(accounts, 1, 2))
		env.SignalWorkflow(SignalGroupReport, batch(transfers, 1, 1))
	}, 64*time.Second)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalGroupReport, batch(transfers, 2, 0)) }, 150*time.Second)
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.NotNil(t, c.Pending, "a table that reports batches does not stall the cut")
		require.Equal(t, int64(0), c.Aborts)
		checked++
	}, 200*time.Second)
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Nil(t, c.Pending)
		require.Equal(t, int64(1), c.Aborts)
		require.Equal(t, "cut attempt 1: tables shop.transfers miss events below the cut at "+w1000+
			" and applied no batch for 2m0s (paused, blocked or without a worker): the cut is given up so that the other tables go on", c.LastAbort)
		require.Equal(t, []string{wa + " release 1", wt + " release 1"}, sent[4:6])
		checked++
	}, 275*time.Second)
	env.ExecuteWorkflow(GroupWorkflow, GroupInput{Group: "shop", TransactionTopic: topic, RoundsPerRun: 5})
	require.Equal(t, 2, checked)
}

// A cut begun just before the run continued as new, with no table frozen
// yet, goes on in the next run: its empty Frozen map, left out of the
// encoded state, does not stop the tables' frozen reports (before: the
// workflow task panicked on every attempt, and the group took no cut
// again; seen on the real stack).
func TestGroupWorkflowCutAcrossContinueAsNew(t *testing.T) {
	const topic = "srv.transaction"
	kc := txTopic(t, topic,
		endValue(571, 1000, 1001, `{"data_collection":"public.accounts","event_count":1},{"data_collection":"public.transfers","event_count":1}`))
	accounts := GroupMember{Table: "shop.accounts", Collection: "public.accounts", TransactionTopic: topic}
	transfers := GroupMember{Table: "shop.transfers", Collection: "public.transfers", TransactionTopic: topic}
	wa, wt := "lakemirror-table-shop.accounts", "lakemirror-table-shop.transfers"
	var sent []string
	env := groupEnv(t, kc)
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", SignalGroupCut, mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		sent = append(sent, args.String(1)+" "+args.Get(4).(string))
	})
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupRegister, accounts)
		env.SignalWorkflow(SignalGroupRegister, transfers)
	}, 10*time.Second)
	env.ExecuteWorkflow(GroupWorkflow, GroupInput{Group: "shop", TransactionTopic: topic, RoundsPerRun: 1})
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	require.Equal(t, []string{wa + " freeze 1", wt + " freeze 1"}, sent)
	var next GroupInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	require.NotNil(t, next.State.Pending)
	require.Nil(t, next.State.Pending.Frozen, "the empty map is left out of the encoded state")

	sent = nil
	env2 := groupEnv(t, kc)
	env2.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", SignalGroupCut, mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		sent = append(sent, args.String(1)+" "+args.Get(4).(string))
	})
	checked := 0
	env2.RegisterDelayedCallback(func() {
		env2.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, Frozen: 1})
		env2.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: transfers, Frozen: 1})
	}, time.Second)
	env2.RegisterDelayedCallback(func() {
		require.Equal(t, []string{wa + " bound 1 " + pgHex(1000), wt + " bound 1 " + pgHex(1000)}, sent)
		checked++
	}, 5*time.Second)
	env2.ExecuteWorkflow(GroupWorkflow, next)
	require.Equal(t, 1, checked)
	require.ErrorAs(t, env2.GetWorkflowError(), &can)
}

// PublishCut returns the cut as the group table recorded it when its
// number was recorded at another W (an earlier attempt appended its rows
// and was then given up): the group records that cut (W, transaction and
// source time), whose W the tags hold, not the W it bound this attempt
// at (a breaker's run: the cut query, memo and status said W2 while
// `_cuts` and the tags held W1).
func TestGroupWorkflowPublishRecordedCut(t *testing.T) {
	const topic = "srv.transaction"
	kc := txTopic(t, topic, endValue(571, 1000, 1001, `{"data_collection":"public.accounts","event_count":1}`))
	accounts := GroupMember{Table: "shop.accounts", Collection: "public.accounts", TransactionTopic: topic}
	env := groupEnv(t, kc)
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", SignalGroupCut, mock.Anything).Return(nil)
	tagged := []payload.CutTagged{{Table: "shop.accounts", Mirror: 11}}
	recorded := &payload.RecordedCut{W: pgHex(900), TxID: "560:900", SourceTsMs: 901}
	env.OnActivity(payload.ActivityPublishCut, mock.Anything, mock.Anything).Return(payload.PublishCutResult{Tagged: tagged, Recorded: recorded}, nil)
	checked := 0
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupRegister, accounts)
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, BatchSeq: 1, Own: true,
			TxSeen:      map[string]payload.TxSeen{"571": {Orders: [][2]int64{{1, 1}}, Last: cdc.PostgresSeq(900, 950).Hex()}},
			FetchedPast: map[int32]string{0: cdc.PostgresSeq(900, 950).Hex()}, Partitions: []int32{0}})
	}, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, Frozen: 1, Watermark: cdc.PostgresSeq(900, 950).Hex()})
	}, 65*time.Second)
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Nil(t, c.Pending)
		require.NotNil(t, c.Published)
		require.Equal(t, int64(1), c.Published.Number)
		require.Equal(t, pgHex(900), c.Published.W)
		require.Equal(t, "560:900", c.Published.TxID)
		require.Equal(t, int64(901), c.Published.SourceTsMs)
		require.Equal(t, tagged, c.Published.Tagged)
		checked++
	}, 75*time.Second)
	env.ExecuteWorkflow(GroupWorkflow, GroupInput{Group: "shop", TransactionTopic: topic, RoundsPerRun: 2})
	require.Equal(t, 1, checked)
}
