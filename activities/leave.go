package activities

import (
	"context"
	"sync"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/internal/payload"
)

// A worker that stops gracefully hands its tables over at once
// (docs/design.md, "Routing", "Graceful stop"): when the worker running an
// activity begins to stop (Activities.workerStop), a PlanBatch
// waiting for records returns its plan with Plan.Leaving, an ApplyBatch
// that finishes its batch returns ApplyResult.Leaving, and an ApplyBatch or
// RebuildKeys still waiting for the table's lock fails with
// ErrTypeWorkerLeaving; the workflow then forgets the worker and claims
// the table again on the shared queue, where the restarted worker or
// another takes it. A stopping worker refuses claims (ClaimTable).

// ErrTypeWorkerLeaving: the activity's worker is stopping and did not
// start the activity's work (payload.ErrTypeWorkerLeaving).
const ErrTypeWorkerLeaving = payload.ErrTypeWorkerLeaving

// workerStop is the channel closed when the worker running the activity
// of ctx begins to stop: Stopping when set (runner.Runner.Stop closes it
// before it stops the Temporal workers), otherwise the Temporal worker's
// own stop channel (activity.GetWorkerStopChannel); nil (never closed)
// outside an activity without Stopping.
func (a *Activities) workerStop(ctx context.Context) <-chan struct{} {
	if a.Stopping != nil {
		return a.Stopping
	}
	if !activity.IsActivity(ctx) {
		return nil
	}
	return activity.GetWorkerStopChannel(ctx)
}

// closed reports whether ch is closed (nil: never).
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// untilStop returns ctx, also cancelled once stop closes (for waits that
// end early when the worker stops), and the function releasing it.
func untilStop(ctx context.Context, stop <-chan struct{}) (context.Context, context.CancelFunc) {
	wctx, cancel := context.WithCancel(ctx)
	if stop == nil {
		return wctx, cancel
	}
	go func() {
		select {
		case <-stop:
			cancel()
		case <-wctx.Done():
		}
	}()
	return wctx, cancel
}

// workerLeaving is the ErrTypeWorkerLeaving error of an activity whose
// worker stopped while it waited for table's lock.
func workerLeaving(table string) error {
	return temporal.NewApplicationErrorWithOptions("the worker is stopping: table "+table+" is handed over to another worker",
		ErrTypeWorkerLeaving, temporal.ApplicationErrorOptions{Category: temporal.ApplicationErrorCategoryBenign})
}

// lockOrLeave takes mu (a table's lock), waiting while another activity
// holds it, unless the activity's worker begins to stop (workerStop)
// first: then it returns the ErrTypeWorkerLeaving error for table without
// the lock (a lock taken after that is released at once). Errors: that
// one only.
func (a *Activities) lockOrLeave(ctx context.Context, mu *sync.Mutex, table string) error {
	if mu.TryLock() {
		return nil
	}
	stop := a.workerStop(ctx)
	if stop == nil {
		mu.Lock()
		return nil
	}
	got := make(chan struct{})
	go func() { mu.Lock(); close(got) }()
	select {
	case <-got:
		return nil
	case <-stop:
		go func() { <-got; mu.Unlock() }()
		return workerLeaving(table)
	}
}

// leaveTable hands table over from a worker that is stopping: the worker
// stops holding it (so WriteSidecars at the worker's stop skips it) and,
// with sidecars on (SidecarEvery), writes its state sidecar first, under
// the table's lock (after a job in flight), so that the worker taking
// the table loads the state instead of building it from the tables. A
// failed write is logged; the next worker then builds the state.
func (a *Activities) leaveTable(ctx context.Context, table string) {
	a.owner.drop(table)
	if a.SidecarEvery <= 0 {
		return
	}
	a.mu.Lock()
	st := a.tables[table]
	a.mu.Unlock()
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	a.writeSidecar(ctx, st, true)
}
