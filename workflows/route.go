package workflows

import (
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/activities"
)

// ownerWait is how long a routed activity may wait in its worker's queue
// before the worker counts as gone (ScheduleToStartTimeout) and the table
// is claimed again: a live worker takes a task within milliseconds.
const ownerWait = 20 * time.Second

// routed reports whether this run routes the table's activities.
func (st *TableState) routed() bool { return st.route >= 1 }

// routeTo returns opts scheduled on the table's worker, claiming the table
// first when it has none. Runs before routeVersion get opts unchanged.
// Errors: errStopping when the workflow is asked to stop while no worker
// takes the claim.
func (st *TableState) routeTo(ctx workflow.Context, opts workflow.ActivityOptions) (workflow.ActivityOptions, error) {
	if !st.routed() {
		return opts, nil
	}
	if st.Owner == "" {
		if err := claim(ctx, st); err != nil {
			return opts, err
		}
	}
	opts.TaskQueue = st.Owner
	opts.ScheduleToStartTimeout = ownerWait
	return opts, nil
}

// handOver reports whether err says the table's worker did not take an
// activity in ownerWait (it is gone): the owner is forgotten, so that the
// next routeTo claims the table again.
func (st *TableState) handOver(ctx workflow.Context, err error) bool {
	var te *temporal.TimeoutError
	if !st.routed() || !errors.As(err, &te) || te.TimeoutType() != enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START {
		return false
	}
	workflow.GetLogger(ctx).Warn("the table's worker took no activity; claiming the table again", "worker_queue", st.Owner)
	st.prevOwner, st.Owner = st.Owner, ""
	st.HandOvers++
	return true
}

// release forgets the owner after a batch whose worker released the table
// (activities.ApplyResult.Release): the next activity claims it again.
func (st *TableState) release(ctx workflow.Context, res activities.ApplyResult) {
	if !st.routed() || !res.Release {
		return
	}
	workflow.GetLogger(ctx).Info("the table's worker released it; claiming it again", "worker_queue", st.Owner)
	st.prevOwner, st.Owner = st.Owner, ""
	st.Releases++
}

// claim runs ClaimTable on the shared queue (the workflow's) until a
// worker takes the table, and records its queue as the owner (the
// workflow's queue when the worker has none). A worker at its share
// refuses (ClaimRefused) and the claim is retried at once, on any worker,
// up to activities.ClaimAttempts times; then a forced claim is taken by
// the first worker it reaches. Errors: errStopping when asked to stop
// meanwhile.
func claim(ctx workflow.Context, st *TableState) error {
	for force := false; ; force = true {
		opts := workflow.ActivityOptions{
			StartToCloseTimeout: 30 * time.Second,
			Summary:             "claim " + st.Spec.Table,
			RetryPolicy: &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, BackoffCoefficient: 1.5,
				MaximumInterval: 5 * time.Second}, // a forced claim: unlimited, a table waits for a worker
		}
		if !force {
			opts.RetryPolicy.MaximumAttempts = activities.ClaimAttempts
		}
		st.waiting(ctx, opts.Summary+" (waiting for a worker to take the table)", "")
		cctx, cancel := workflow.WithCancel(workflow.WithActivityOptions(ctx, opts))
		fut := workflow.ExecuteActivity(cctx, a.ClaimTable, activities.ClaimRequest{Table: st.Spec.Table, Prev: st.prevOwner, Force: force})
		_ = workflow.Await(ctx, func() bool { return fut.IsReady() || st.Stopping })
		st.activity = activityNote{}
		if !fut.IsReady() {
			cancel()
			return errStopping
		}
		cancel()
		var res activities.ClaimResult
		if err := fut.Get(ctx, &res); err != nil {
			var ae *temporal.ApplicationError
			if !force && errors.As(err, &ae) && ae.Type() == activities.ErrTypeClaimRefused {
				continue
			}
			return err
		}
		st.Owner = res.Queue
		if st.Owner == "" {
			st.Owner = workflow.GetInfo(ctx).TaskQueueName
		}
		st.Claims++
		workflow.GetLogger(ctx).Info("table claimed", "worker_queue", st.Owner, "worker_tables", res.Tables, "forced", force)
		return nil
	}
}
