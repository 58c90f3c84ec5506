package workflows

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/payload"
)

// visibleAttempts is how many attempts Temporal makes of a table's
// activity before the workflow sees its failure. The workflow then shows
// the table as retrying (phase, last error, search attribute, metric) and
// runs the activity again after a backoff, so an error that may pass (a
// service down, a wrong password, a full disk) is visible in status
// instead of retried silently forever.
const visibleAttempts = 4

// retryBackoff is the wait before re-running an activity that failed its
// attempts: 5 s doubling to at most a minute.
func retryBackoff(n int) time.Duration {
	return min(5*time.Second<<min(n, 4), time.Minute)
}

// errStopping: the workflow was asked to stop while an activity was
// being retried.
var errStopping = errors.New("the table is stopping")

// execVisible runs the activity of registered name activity
// (payload.Activity*) with the argument arg(rerun) (rerun: an earlier
// execution failed) into out, with opts' retry policy bounded to
// visibleAttempts, until it succeeds (nil), fails in a way retrying cannot
// fix (that error: a non-retryable application error, or one of the
// policy's non-retryable types, for the caller to block on), or the
// workflow is asked to stop (errStopping). Between executions the table
// is "retrying" with the error in status; a retry signal cuts the backoff
// short. On success the phase is restored and the error cleared.
func execVisible(ctx workflow.Context, st *TableState, opts workflow.ActivityOptions, activity string, arg func(rerun bool) any, out any) error {
	return execInterruptible(ctx, st, opts, activity, arg, out, nil)
}

// errInterrupted: the activity was cancelled because interrupt became
// true (execInterruptible).
var errInterrupted = errors.New("interrupted for a signal")

// execInterruptible is execVisible for an activity the workflow may give
// up on: when interrupt (nil: never) becomes true while the activity
// runs, it is cancelled and errInterrupted returned at once, without
// waiting for the activity to notice (its result is discarded).
func execInterruptible(ctx workflow.Context, st *TableState, opts workflow.ActivityOptions, activity string, arg func(rerun bool) any, out any, interrupt func() bool) error {
	rp := temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute}
	if opts.RetryPolicy != nil {
		rp = *opts.RetryPolicy
	}
	rp.MaximumAttempts = visibleAttempts
	opts.RetryPolicy = &rp
	prev, failed, moved, lost := st.Phase, false, false, 0
	for n := 0; ; n++ {
		o, err := st.routeTo(ctx, opts) // the table's worker (routeVersion runs)
		if err != nil {
			if failed {
				st.Phase = prev
			}
			return err
		}
		if st.fastRecovery() && o.HeartbeatTimeout > 0 { // a heartbeat timeout comes back here (heartbeatLost)
			lp := *o.RetryPolicy
			lp.NonRetryableErrorTypes = append(slices.Clone(lp.NonRetryableErrorTypes), heartbeatLostType)
			o.RetryPolicy = &lp
		}
		if st.handsOverOnStop() { // a stopping worker's refusal comes back here (ownerLeft)
			lp := *o.RetryPolicy
			lp.NonRetryableErrorTypes = append(slices.Clone(lp.NonRetryableErrorTypes), payload.ErrTypeWorkerLeaving)
			o.RetryPolicy = &lp
		}
		actx := workflow.WithActivityOptions(ctx, o)
		st.waiting(ctx, summaryOf(o, activity), o.TaskQueue) // the Web UI's current details name it
		if interrupt == nil {
			err = workflow.ExecuteActivity(actx, activity, arg(failed || moved)).Get(ctx, out)
		} else {
			cctx, cancel := workflow.WithCancel(actx)
			fut := workflow.ExecuteActivity(cctx, activity, arg(failed || moved))
			_ = workflow.Await(ctx, func() bool { return fut.IsReady() || interrupt() })
			if !fut.IsReady() {
				cancel()
				st.activity = activityNote{}
				if failed {
					st.Phase = prev
				}
				return errInterrupted
			}
			cancel()
			err = fut.Get(ctx, out)
		}
		st.activity = activityNote{}
		st.probing = false
		if err == nil {
			if failed {
				st.Phase, st.LastError = prev, ""
				st.publish(ctx)
			}
			return nil
		}
		if st.ownerLeft(ctx, workerLeaving(err)) { // the worker is stopping: claim the table again, run at once (as a rerun, like a hand-over)
			moved = true
			continue
		}
		if st.handOver(ctx, err) { // the worker is gone: claim the table again, run at once (an earlier attempt may have committed: rerun)
			moved = true
			continue
		}
		if lost < lostInARow && st.heartbeatLost(ctx, err) { // the worker may be dead: rerun on it at once, with probeWait to take it
			lost++
			moved = true
			continue
		}
		var ae *temporal.ApplicationError
		if errors.As(err, &ae) && (ae.NonRetryable() || slices.Contains(rp.NonRetryableErrorTypes, ae.Type())) {
			if failed {
				st.Phase = prev
			}
			return err
		}
		if errors.Is(err, workflow.ErrCanceled) || ctx.Err() != nil {
			return err
		}
		failed = true
		st.Phase, st.LastError = PhaseRetrying, errorText(err)
		st.publish(ctx)
		workflow.GetLogger(ctx).Warn("activity keeps failing; retrying", "error", st.LastError, "executions", n+1)
		st.retryRequested = false
		// the backoff's timer is the same command as AwaitWithTimeout's
		// (whose summary was "AwaitWithTimeout"): no version marker
		note := st.waitNote(PhaseRetrying, fmt.Sprintf("%s again in %s, or now with `starter retry %s`", activity, retryBackoff(n), st.Spec.Table))
		_, _ = workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{Timeout: retryBackoff(n), TimerOptions: workflow.TimerOptions{Summary: note}},
			func() bool { return st.retryRequested || st.Stopping })
		st.retryRequested = false
		if st.Stopping {
			st.Phase = prev
			return errStopping
		}
	}
}

// summaryOf is opts' Summary, or the activity's registered name
// ("Recover") when it has none.
func summaryOf(opts workflow.ActivityOptions, activity string) string {
	if opts.Summary != "" {
		return opts.Summary
	}
	return activity
}
