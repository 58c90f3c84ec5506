package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/lake"
)

// A stopping worker's idle plan returns at once with Leaving
// (leaveVersion runs): the workflow forgets the worker, and its next plan
// first claims the table, naming the stopping worker as gone; no timeout,
// no heartbeat lost, counted as a hand-over on stop.
func TestStoppingOwnerHandsIdleTableOver(t *testing.T) {
	env, acts := newEnv(t)
	var claims []activities.ClaimRequest
	env.OnActivity(acts.ClaimTable, mock.Anything, mock.Anything).Return(func(_ context.Context, req activities.ClaimRequest) (activities.ClaimResult, error) {
		claims = append(claims, req)
		if len(claims) == 1 {
			return activities.ClaimResult{Queue: "lakemirror@w1", Tables: 1}, nil
		}
		return activities.ClaimResult{Queue: "lakemirror@w2", Tables: 1}, nil
	})
	env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{Offsets: lake.Offsets{0: 40}}, nil)
	var queues []string
	env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(spec.MaxWait).Return(func(ctx context.Context, req activities.PlanRequest) (activities.Plan, error) {
		queues = append(queues, activity.GetInfo(ctx).TaskQueue)
		return activities.Plan{Offsets: req.Offsets, HighWatermarks: lake.Offsets{0: 40}, Leaving: len(queues) == 1}, nil
	})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalStop, nil) }, 5*time.Second)
	env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: spec})
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, []string{"lakemirror@w1", "lakemirror@w2", "lakemirror@w2"}, queues[:3])
	require.Equal(t, []activities.ClaimRequest{
		{Table: "shop.orders"},
		{Table: "shop.orders", Prev: "lakemirror@w1", Gone: true}}, claims)
	st := status(t, env)
	require.Equal(t, [5]int{2, 1, 0, 0, 0}, [5]int{st.Claims, st.StopHandOvers, st.HandOvers, st.Releases, st.HeartbeatsLost})
	require.Equal(t, "lakemirror@w2", st.Owner)
	require.Equal(t, lake.Offsets{0: 40}, st.Offsets)
}

// A stopping worker finishes the batch in flight and returns it with
// Leaving (and Release): the workflow records the batch, forgets the
// worker as a hand-over on stop (not a balancing release) and plans the
// next batch on the worker that takes the new claim.
func TestStoppingOwnerHandsOverAfterItsBatch(t *testing.T) {
	env, acts := newEnv(t)
	var claims []activities.ClaimRequest
	env.OnActivity(acts.ClaimTable, mock.Anything, mock.Anything).Return(func(_ context.Context, req activities.ClaimRequest) (activities.ClaimResult, error) {
		claims = append(claims, req)
		if len(claims) == 1 {
			return activities.ClaimResult{Queue: "lakemirror@w1", Tables: 1}, nil
		}
		return activities.ClaimResult{Queue: "lakemirror@w2", Tables: 1}, nil
	})
	env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{Offsets: lake.Offsets{0: 40}}, nil)
	var plans []string
	env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(spec.MaxWait).Return(func(ctx context.Context, req activities.PlanRequest) (activities.Plan, error) {
		plans = append(plans, activity.GetInfo(ctx).TaskQueue)
		if len(plans) == 1 {
			return activities.Plan{Ranges: []lake.Range{{Partition: 0, From: 40, To: 50}}, Records: 10,
				Offsets: lake.Offsets{0: 50}, HighWatermarks: lake.Offsets{0: 50}}, nil
		}
		return activities.Plan{Offsets: req.Offsets, HighWatermarks: req.Offsets}, nil
	})
	var applies []string
	env.OnActivity(acts.ApplyBatch, mock.Anything, mock.Anything).Return(func(ctx context.Context, req activities.ApplyRequest) (activities.ApplyResult, error) {
		applies = append(applies, activity.GetInfo(ctx).TaskQueue)
		return activities.ApplyResult{BatchID: req.Batch.ID, EndOffsets: lake.Offsets{0: 50}, Changes: 10, Release: true, Leaving: true}, nil
	})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalStop, nil) }, 5*time.Second)
	env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: spec})
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, []string{"lakemirror@w1"}, applies)
	require.Equal(t, []string{"lakemirror@w1", "lakemirror@w2"}, plans[:2])
	require.Equal(t, []activities.ClaimRequest{
		{Table: "shop.orders"},
		{Table: "shop.orders", Prev: "lakemirror@w1", Gone: true}}, claims)
	st := status(t, env)
	require.Equal(t, [5]int{2, 1, 0, 0, 0}, [5]int{st.Claims, st.StopHandOvers, st.HandOvers, st.Releases, st.HeartbeatsLost})
	require.Equal(t, "lakemirror@w2", st.Owner)
	require.Equal(t, lake.Offsets{0: 50}, st.Offsets)
	require.Equal(t, int64(1), st.Totals.Batches)
}

// A batch whose stopping worker was still waiting for the table's lock
// fails with ErrTypeWorkerLeaving, which leaveVersion runs list as
// non-retryable: the workflow claims the table again and runs the batch
// at once on the new worker, as a rerun (Rerun: the batch-id protocol
// finds whatever an earlier attempt committed).
func TestStoppingOwnerRefusesWaitingBatch(t *testing.T) {
	env, acts := newEnv(t)
	rec := &optionsRecorder{}
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{rec}})
	var claims []activities.ClaimRequest
	env.OnActivity(acts.ClaimTable, mock.Anything, mock.Anything).Return(func(_ context.Context, req activities.ClaimRequest) (activities.ClaimResult, error) {
		claims = append(claims, req)
		if len(claims) == 1 {
			return activities.ClaimResult{Queue: "lakemirror@w1", Tables: 1}, nil
		}
		return activities.ClaimResult{Queue: "lakemirror@w2", Tables: 1}, nil
	})
	env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{Offsets: lake.Offsets{0: 40}}, nil)
	plans := 0
	env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(spec.MaxWait).Return(func(_ context.Context, req activities.PlanRequest) (activities.Plan, error) {
		plans++
		if plans == 1 {
			return activities.Plan{Ranges: []lake.Range{{Partition: 0, From: 40, To: 50}}, Records: 10,
				Offsets: lake.Offsets{0: 50}, HighWatermarks: lake.Offsets{0: 50}}, nil
		}
		return activities.Plan{Offsets: req.Offsets, HighWatermarks: req.Offsets}, nil
	})
	type applyCall struct {
		queue   string
		attempt int32
		rerun   bool
	}
	var applies []applyCall
	env.OnActivity(acts.ApplyBatch, mock.Anything, mock.Anything).Return(func(ctx context.Context, req activities.ApplyRequest) (activities.ApplyResult, error) {
		info := activity.GetInfo(ctx)
		applies = append(applies, applyCall{info.TaskQueue, info.Attempt, req.Rerun})
		if len(applies) == 1 {
			return activities.ApplyResult{}, temporal.NewApplicationErrorWithOptions("the worker is stopping", activities.ErrTypeWorkerLeaving,
				temporal.ApplicationErrorOptions{Category: temporal.ApplicationErrorCategoryBenign})
		}
		return activities.ApplyResult{BatchID: req.Batch.ID, EndOffsets: lake.Offsets{0: 50}, Changes: 10}, nil
	})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalStop, nil) }, 5*time.Second)
	env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: spec})
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, []applyCall{{"lakemirror@w1", 1, false}, {"lakemirror@w2", 1, true}}, applies)
	got := rec.of("ApplyBatch")
	require.Len(t, got, 2)
	require.Contains(t, got[0].nonRetryable, activities.ErrTypeWorkerLeaving)
	require.Equal(t, []activities.ClaimRequest{
		{Table: "shop.orders"},
		{Table: "shop.orders", Prev: "lakemirror@w1", Gone: true}}, claims)
	st := status(t, env)
	require.Equal(t, [5]int{2, 1, 0, 0, 0}, [5]int{st.Claims, st.StopHandOvers, st.HandOvers, st.Releases, st.HeartbeatsLost})
	require.Equal(t, "lakemirror@w2", st.Owner)
	require.Equal(t, int64(1), st.Totals.Batches)
}

// Status.Unowned names the worker that let an unowned table go and why.
func TestUnownedSaysWhy(t *testing.T) {
	for why, want := range map[string]string{
		"stopped":  "worker 3f2a9c0d1e7b stopped and handed the table over",
		"gone":     "worker 3f2a9c0d1e7b took no activity in time (gone)",
		"released": "worker 3f2a9c0d1e7b released the table to balance the workers",
	} {
		st := &TableState{route: 1, prevOwner: "lakemirror@3f2a9c0d1e7b", prevWhy: why}
		require.Equal(t, want, st.status().Unowned, why)
		st.Owner = "lakemirror@w2"
		require.Equal(t, "", st.status().Unowned, why+", owned again")
	}
}
