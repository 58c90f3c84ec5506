package workflows

import (
	"errors"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/payload"
)

// ownerWait is how long a routed activity may wait in its worker's queue
// before the worker counts as gone (ScheduleToStartTimeout) and the table
// is claimed again: a live worker takes a task within milliseconds.
const ownerWait = 20 * time.Second

// Fast recovery (fastRecoveryVersion runs; docs/design.md "Recovery after
// a worker dies"): the activities that hold a table's state heartbeat
// every second (the SDK sends one every 0.8 × deadAfter; an idle plan's
// timeout is idleDeadAfter instead, planWait), a heartbeat
// timeout comes back to the workflow at once instead of being retried by
// Temporal on the same queue, and the rerun waits at most probeWait for
// the owner: a live owner takes it within milliseconds and keeps the
// table; a dead one is known dead after probeWait and the table is
// claimed again. A kill is so recovered in deadAfter + probeWait + a claim
// + the rerun, instead of 30 s + 1 s + ownerWait + the same.
const (
	// deadAfter is the heartbeat timeout of PlanBatch, ApplyBatch and
	// RebuildKeys from fastRecoveryVersion on (30 s before).
	deadAfter = 8 * time.Second
	// probeWait is the schedule-to-start timeout of the rerun on the
	// owner after a heartbeat timeout.
	probeWait = 3 * time.Second
	// heartbeatLostType names a heartbeat timeout in a retry policy's
	// NonRetryableErrorTypes (Temporal's "TemporalTimeout:" + the
	// timeout type): Temporal then fails the activity to the workflow
	// instead of retrying it.
	heartbeatLostType = "TemporalTimeout:Heartbeat"
	// lostInARow is how many heartbeat timeouts in a row of one activity
	// on a live owner are rerun at once; then they count as failures
	// (retrying, with backoff).
	lostInARow = 3
)

// idleDeadAfter is the heartbeat timeout of an idle table's PlanBatch
// (the idle wait, up to idleWait) in fastRecoveryVersion runs. An idle
// PlanBatch has no batch in flight, so a dead worker costs no progress
// until a record arrives; a long timeout keeps its heartbeats few (the
// SDK sends one per 0.8 × the timeout: 48 s, 1,800 a day, where deadAfter
// would send 13,500). The price: a record that arrives for an idle table
// whose worker died waits up to idleDeadAfter + probeWait + a claim.
const idleDeadAfter = time.Minute

// planWait returns the idle wait (payload.PlanRequest.IdleWait) and
// the heartbeat timeout of the table's next PlanBatch (idleWaitVersion
// runs). Fast-recovery runs wait idleWait, with idleDeadAfter, only after
// a plan that found nothing (the table is idle); otherwise the plan waits
// at most MaxWait for its batch to fill, with deadAfter, and an empty one
// makes the next plan the idle one: one PlanBatch more each time the
// table falls idle. Older runs always wait idleWait with a 30 s timeout.
func (st *TableState) planWait() (wait, heartbeat time.Duration) {
	switch {
	case !st.fastRecovery():
		return idleWait, st.heartbeatTimeout()
	case st.idle:
		return idleWait, idleDeadAfter
	default:
		return 0, deadAfter
	}
}

// fastRecovery reports whether this run recovers from a dead worker fast
// (fastRecoveryVersion, routed runs).
func (st *TableState) fastRecovery() bool { return st.routed() && st.fast >= 1 }

// heartbeatTimeout is the heartbeat timeout of the table's ApplyBatch
// and RebuildKeys, and of its PlanBatch in runs before
// fastRecoveryVersion: deadAfter from fastRecoveryVersion on, 30 s before
// (PlanBatch from then on: planWait).
func (st *TableState) heartbeatTimeout() time.Duration {
	if st.fastRecovery() {
		return deadAfter
	}
	return 30 * time.Second
}

// heartbeatLost reports whether err is the heartbeat timeout of a routed
// activity of a fast-recovery run (its worker may be dead): the next
// routeTo gives the rerun probeWait on the owner, so that a dead owner is
// handed over (handOver) after probeWait.
func (st *TableState) heartbeatLost(ctx workflow.Context, err error) bool {
	var te *temporal.TimeoutError
	if !st.fastRecovery() || st.Owner == "" || !errors.As(err, &te) || te.TimeoutType() != enumspb.TIMEOUT_TYPE_HEARTBEAT {
		return false
	}
	workflow.GetLogger(ctx).Warn("the table's activity stopped heartbeating; rerunning it on its worker, which must take it within the probe wait", "worker_queue", st.Owner, "probe_wait", probeWait)
	st.probing = true
	st.HeartbeatsLost++
	return true
}

// routed reports whether this run routes the table's activities.
func (st *TableState) routed() bool { return st.route >= 1 }

// routeTo returns opts scheduled on the table's worker, claiming the table
// first when it has none. Runs before routeVersion get opts unchanged.
// A probing rerun (heartbeatLost) waits probeWait instead of ownerWait.
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
	if st.probing {
		opts.ScheduleToStartTimeout = probeWait
	}
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
	st.prevOwner, st.Owner, st.prevWhy = st.Owner, "", "gone"
	st.prevGone = true
	st.HandOvers++
	return true
}

// handsOverOnStop reports whether this run takes a stopping owner's
// hand-over at once (leaveVersion, routed runs).
func (st *TableState) handsOverOnStop() bool { return st.routed() && st.leave >= 1 }

// ownerLeft forgets the owner when leaving says it is stopping
// (activities.Plan.Leaving, activities.ApplyResult.Leaving, or an
// payload.ErrTypeWorkerLeaving failure) in handsOverOnStop runs, so
// that the next activity claims the table again at once; the claim says
// the owner is gone (ClaimRequest.Gone). It reports whether it did.
func (st *TableState) ownerLeft(ctx workflow.Context, leaving bool) bool {
	if !leaving || !st.handsOverOnStop() || st.Owner == "" {
		return false
	}
	workflow.GetLogger(ctx).Info("the table's worker is stopping; claiming the table again", "worker_queue", st.Owner)
	st.prevOwner, st.Owner, st.prevWhy = st.Owner, "", "stopped"
	st.prevGone = true
	st.StopHandOvers++
	return true
}

// workerLeaving reports whether err is an activity's
// payload.ErrTypeWorkerLeaving failure (its worker stopped before the
// activity's work began).
func workerLeaving(err error) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.Type() == payload.ErrTypeWorkerLeaving
}

// release forgets the owner after a batch whose worker released the table
// (payload.ApplyResult.Release): the next activity claims it again. A
// stopping worker's release (Leaving) was taken by ownerLeft in
// handsOverOnStop runs.
func (st *TableState) release(ctx workflow.Context, res payload.ApplyResult) {
	if !st.routed() || !res.Release || (res.Leaving && st.handsOverOnStop()) {
		return
	}
	workflow.GetLogger(ctx).Info("the table's worker released it; claiming it again", "worker_queue", st.Owner)
	st.prevOwner, st.Owner, st.prevWhy = st.Owner, "", "released"
	st.prevGone = false
	st.Releases++
}

// unowned is Status.Unowned: while the table has no owner after having
// one, which worker let it go and why.
func (st *TableState) unowned() string {
	if !st.routed() || st.Owner != "" || st.prevOwner == "" {
		return ""
	}
	_, id, _ := strings.Cut(st.prevOwner, "@") // "<queue>@<worker id>"
	w := "worker " + id
	switch st.prevWhy {
	case "stopped":
		return w + " stopped and handed the table over"
	case "gone":
		return w + " took no activity in time (gone)"
	case "released":
		return w + " released the table to balance the workers"
	}
	return ""
}

// claim runs ClaimTable on the shared queue (the workflow's) until a
// worker takes the table, and records its queue as the owner (the
// workflow's queue when the worker has none). A worker at its share
// refuses (ClaimRefused) and the claim is retried at once, on any worker,
// up to payload.ClaimAttempts times; then a forced claim is taken by
// the first worker it reaches. Errors: errStopping when asked to stop
// meanwhile.
func claim(ctx workflow.Context, st *TableState) error {
	for force := false; ; force = true {
		opts := claimOptions(st.Spec.Table, force)
		st.waiting(ctx, opts.Summary+" (waiting for a worker to take the table)", "")
		cctx, cancel := workflow.WithCancel(workflow.WithActivityOptions(ctx, opts))
		fut := workflow.ExecuteActivity(cctx, payload.ActivityClaimTable, payload.ClaimRequest{Table: st.Spec.Table, Prev: st.prevOwner, Force: force,
			Gone: st.prevGone && st.fastRecovery()})
		_ = workflow.Await(ctx, func() bool { return fut.IsReady() || st.Stopping })
		st.activity = activityNote{}
		if !fut.IsReady() {
			cancel()
			return errStopping
		}
		cancel()
		var res payload.ClaimResult
		if err := fut.Get(ctx, &res); err != nil {
			var ae *temporal.ApplicationError
			if !force && errors.As(err, &ae) && ae.Type() == payload.ErrTypeClaimRefused {
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
