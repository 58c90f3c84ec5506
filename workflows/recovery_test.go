package workflows

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/lake"
)

// scheduled is one activity the workflow scheduled, with the options it
// scheduled it with (seen by optionsRecorder).
type scheduled struct {
	activity        string
	queue           string
	heartbeat       time.Duration
	scheduleToStart time.Duration
	nonRetryable    []string
}

// optionsRecorder is a workflow interceptor that records the options of
// every activity the workflow schedules: the test environment's activity
// info has no schedule-to-start timeout or retry policy.
type optionsRecorder struct {
	interceptor.WorkerInterceptorBase
	mu  sync.Mutex
	got []scheduled
}

func (r *optionsRecorder) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &recorderInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, r: r}
}

// of returns the recorded activities named name, in order.
func (r *optionsRecorder) of(name string) []scheduled {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []scheduled
	for _, s := range r.got {
		if s.activity == name {
			out = append(out, s)
		}
	}
	return out
}

type recorderInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	r *optionsRecorder
}

func (i *recorderInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&recorderOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}, r: i.r})
}

type recorderOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	r *optionsRecorder
}

func (o *recorderOutbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	opts := workflow.GetActivityOptions(ctx)
	s := scheduled{activity: activityType, queue: opts.TaskQueue, heartbeat: opts.HeartbeatTimeout, scheduleToStart: opts.ScheduleToStartTimeout}
	if opts.RetryPolicy != nil {
		s.nonRetryable = opts.RetryPolicy.NonRetryableErrorTypes
	}
	o.r.mu.Lock()
	o.r.got = append(o.r.got, s)
	o.r.mu.Unlock()
	return o.Next.ExecuteActivity(ctx, activityType, args...)
}

// A batch whose worker stops heartbeating (killed) comes back to the
// workflow (fast-recovery runs: TemporalTimeout:Heartbeat is
// non-retryable), is rerun on the same worker with probeWait to be taken,
// and when that worker takes nothing the table is handed over: the claim
// names the dead worker (Gone) and the batch reruns on the new one as a
// rerun (Rerun: the dead attempt may have committed).
//
// The SDK's test environment retries a heartbeat timeout whatever the
// policy says (internal.IsRetryable; the server honours the policy), so
// the first execution here fails its visibleAttempts attempts before the
// workflow sees it; the options recorded show what the server is asked.
func TestHeartbeatLostHandsOverDeadOwner(t *testing.T) {
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
		switch len(rec.of("ApplyBatch")) {
		case 1: // the worker is killed mid-batch
			return activities.ApplyResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil)
		case 2: // the probe: nobody polls the dead worker's queue
			return activities.ApplyResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
		}
		return activities.ApplyResult{BatchID: req.Batch.ID, EndOffsets: lake.Offsets{0: 50}, Changes: 10}, nil
	})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalStop, nil) }, time.Minute)
	env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: spec})
	require.NoError(t, env.GetWorkflowError())

	hb := []string{activities.ErrTypeUndecodable, activities.ErrTypeUnfit, activities.ErrTypeRetentionGap, activities.ErrTypeLogReset, activities.ErrTypeBadSpec, heartbeatLostType, activities.ErrTypeWorkerLeaving}
	require.Equal(t, []scheduled{
		{activity: "ApplyBatch", queue: "lakemirror@w1", heartbeat: 8 * time.Second, scheduleToStart: 20 * time.Second, nonRetryable: hb},
		{activity: "ApplyBatch", queue: "lakemirror@w1", heartbeat: 8 * time.Second, scheduleToStart: 3 * time.Second, nonRetryable: hb},
		{activity: "ApplyBatch", queue: "lakemirror@w2", heartbeat: 8 * time.Second, scheduleToStart: 20 * time.Second, nonRetryable: hb},
	}, rec.of("ApplyBatch"))
	require.Equal(t, []applyCall{
		{"lakemirror@w1", 1, false}, {"lakemirror@w1", 2, false}, {"lakemirror@w1", 3, false}, {"lakemirror@w1", 4, false}, // the test environment's retries
		{"lakemirror@w1", 1, true},  // the probe
		{"lakemirror@w2", 1, true}}, // after the hand-over
		applies)
	require.Equal(t, []activities.ClaimRequest{
		{Table: "shop.orders"},
		{Table: "shop.orders", Prev: "lakemirror@w1", Gone: true}}, claims)
	st := status(t, env)
	require.Equal(t, 1, st.HeartbeatsLost)
	require.Equal(t, 1, st.HandOvers)
	require.Equal(t, 2, st.Claims)
	require.Equal(t, "lakemirror@w2", st.Owner)
	require.Equal(t, lake.Offsets{0: 50}, st.Offsets)
	require.Equal(t, int64(1), st.Totals.Batches)
}

// A heartbeat timeout on a worker that is alive (a stalled attempt) is
// rerun on that worker, which takes it: the table stays where its local
// state is, with no claim.
func TestHeartbeatLostOnLiveOwnerStays(t *testing.T) {
	env, acts := newEnv(t)
	rec := &optionsRecorder{}
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{rec}})
	claims := 0
	env.OnActivity(acts.ClaimTable, mock.Anything, mock.Anything).Return(func(context.Context, activities.ClaimRequest) (activities.ClaimResult, error) {
		claims++
		return activities.ClaimResult{Queue: "lakemirror@w1", Tables: 1}, nil
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
	var reruns []bool
	env.OnActivity(acts.ApplyBatch, mock.Anything, mock.Anything).Return(func(ctx context.Context, req activities.ApplyRequest) (activities.ApplyResult, error) {
		if len(rec.of("ApplyBatch")) == 1 {
			return activities.ApplyResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil)
		}
		reruns = append(reruns, req.Rerun)
		return activities.ApplyResult{BatchID: req.Batch.ID, EndOffsets: lake.Offsets{0: 50}, Changes: 10}, nil
	})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalStop, nil) }, time.Minute)
	env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: spec})
	require.NoError(t, env.GetWorkflowError())
	got := rec.of("ApplyBatch")
	require.Len(t, got, 2)
	require.Equal(t, []string{"lakemirror@w1", "lakemirror@w1"}, []string{got[0].queue, got[1].queue})
	require.Equal(t, []time.Duration{20 * time.Second, 3 * time.Second}, []time.Duration{got[0].scheduleToStart, got[1].scheduleToStart})
	require.Equal(t, []bool{true}, reruns)
	st := status(t, env)
	require.Equal(t, 1, claims)
	require.Equal(t, 1, st.HeartbeatsLost)
	require.Equal(t, 0, st.HandOvers)
	require.Equal(t, "lakemirror@w1", st.Owner)
	require.Equal(t, int64(1), st.Totals.Batches)
}

// Fast-recovery runs plan with the short heartbeat timeout (deadAfter)
// while the table has records, waiting at most MaxWait (IdleWait 0); only
// after a plan that found nothing does the next wait idleWait, with the
// long idleDeadAfter, so an idle table heartbeats once per 48 s, not per
// 6.4 s. A plan that finds records makes the next one short again.
func TestIdlePlanWaitsWithLongHeartbeat(t *testing.T) {
	env, acts := newEnv(t)
	rec := &optionsRecorder{}
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{rec}})
	env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{Offsets: lake.Offsets{0: 40}}, nil)
	var waits []time.Duration
	env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(spec.MaxWait).Return(func(_ context.Context, req activities.PlanRequest) (activities.Plan, error) {
		waits = append(waits, req.IdleWait)
		from := req.Offsets[0]
		switch len(waits) {
		case 1, 4: // records
			return activities.Plan{Ranges: []lake.Range{{Partition: 0, From: from, To: from + 10}}, Records: 10,
				Offsets: lake.Offsets{0: from + 10}, HighWatermarks: lake.Offsets{0: from + 10}}, nil
		}
		return activities.Plan{Offsets: req.Offsets, HighWatermarks: req.Offsets}, nil
	})
	env.OnActivity(acts.ApplyBatch, mock.Anything, mock.Anything).Return(func(_ context.Context, req activities.ApplyRequest) (activities.ApplyResult, error) {
		r := req.Batch.Ranges[0]
		return activities.ApplyResult{BatchID: req.Batch.ID, EndOffsets: lake.Offsets{0: r.To}, Changes: 10}, nil
	})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalStop, nil) }, 10*time.Second) // plans take spec.MaxWait each
	env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: spec})
	require.NoError(t, env.GetWorkflowError())
	var hbs []time.Duration
	for _, s := range rec.of("PlanBatch")[:6] {
		hbs = append(hbs, s.heartbeat)
	}
	require.Equal(t, []time.Duration{0, 0, idleWait, idleWait, 0, idleWait}, waits[:6])
	require.Equal(t, []time.Duration{8 * time.Second, 8 * time.Second, time.Minute, time.Minute, 8 * time.Second, time.Minute}, hbs)
}
