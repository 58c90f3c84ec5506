package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/payload"
)

// The steps of TableWorkflow, in the order a run takes them: runState and
// startRun open the run, recover reads a fresh table's position, and each
// round of the loop takes the signals (takeSignals), then stops, pauses,
// continues as new or serves an operator's request, or plans a batch
// (plan), takes in the plan (takePlan) and applies it (apply). A step that
// a version marker changes asks the marker (versions.go) or reads the
// version the run took. Every step issues the commands the loop body did
// before it was split into steps, in the same order: the recorded
// histories (testdata/replay) replay unchanged.

// tableRun is one run of a table's workflow: the table state, which the
// next run continues from, and what the run's steps share.
type tableRun struct {
	st  *TableState
	sig *signals          // the operator signals' channels
	sa  *searchAttributes // the phase publisher (st.published)
	// planInApply is planInApplyVersion taken: a batch's ApplyResult.Next
	// is applied in the round after it without a PlanBatch.
	planInApply bool
	// bySize is canVersion taken: the run continues as new by history
	// size, not after iterationsPerRun rounds.
	bySize bool
	// next is the last batch's ApplyResult.Next, for the round right after
	// it only, and nextSettings the settings updates taken when that batch
	// was planned: a plan made under settings since changed (MaxEvents,
	// MaxBatchEvents) is dropped and the batch planned anew.
	next         *payload.Plan
	nextSettings int
}

// runState is the state a run starts from: the one handed over by the
// previous run (continue-as-new), else a fresh one with in.Spec's
// defaults. It fails with a non-retryable ErrTypeBadSpec error when the
// spec names no table or no topic.
func runState(in TableInput) (*TableState, error) {
	st := in.State
	if st == nil {
		st = &TableState{Phase: PhaseStarting, Offsets: payload.Offsets{}}
	}
	if st.Spec.Table == "" {
		st.Spec = in.Spec.Defaults()
	}
	if st.Spec.Table == "" || st.Spec.Topic == "" {
		return nil, temporal.NewNonRetryableApplicationError("table and topic are required", payload.ErrTypeBadSpec, nil)
	}
	return st, nil
}

// startRun asks the markers every run asks at its start (memoSpecVersion,
// routeVersion, fastRecoveryVersion, planInApplyVersion, leaveVersion,
// before the update handlers, which use them), then registers the status
// query and the updates, starts the signals coroutine and the phase
// publisher. An error is a handler the SDK refused.
func startRun(ctx workflow.Context, st *TableState) (*tableRun, error) {
	st.memoSpec = workflow.GetVersion(ctx, memoSpecVersion, workflow.DefaultVersion, 1)
	st.route = workflow.GetVersion(ctx, routeVersion, workflow.DefaultVersion, 1)
	st.fast = workflow.GetVersion(ctx, fastRecoveryVersion, workflow.DefaultVersion, 1)
	planInApply := workflow.GetVersion(ctx, planInApplyVersion, workflow.DefaultVersion, 1) == 1
	st.leave = workflow.GetVersion(ctx, leaveVersion, workflow.DefaultVersion, 1)
	st.notedWaits = workflow.GetVersion(ctx, waitNoteVersion, workflow.DefaultVersion, 1)
	st.settingsRun = workflow.GetVersion(ctx, settingsRunVersion, workflow.DefaultVersion, 1)
	st.ungroupedCut = workflow.GetVersion(ctx, cutUngroupedVersion, workflow.DefaultVersion, 1)
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) { return st.status(), nil }); err != nil {
		return nil, err
	}
	if err := registerUpdates(ctx, st); err != nil {
		return nil, err
	}
	sig := newSignals(ctx, st)
	workflow.Go(ctx, sig.loop)
	st.published = newSearchAttributes(ctx)
	return &tableRun{st: st, sig: sig, sa: st.published, planInApply: planInApply}, nil
}

// showStopped, deferred by TableWorkflow, publishes the phase stopped for
// a table stopped while blocked, retrying or loading (not the phase it was
// in).
func (r *tableRun) showStopped(ctx workflow.Context) {
	if r.st.Stopping && r.st.Phase != PhaseStopped {
		r.st.Phase = PhaseStopped
		r.st.publish(ctx)
	}
}

// recover starts a fresh table (not yet Recovered): it reads the offsets
// and batch number the Iceberg tables hold (Recover; a failure, such as a
// spec the tables refuse, blocks until retry or stop), rebuilds the late
// keys a batch left pending, and runs the initial direct load of a table
// with a source that has not loaded. It returns false when the workflow is
// asked to stop.
func (r *tableRun) recover(ctx workflow.Context) bool {
	st := r.st
	var rec payload.RecoverResult
	for {
		err := execVisible(ctx, st, shortOptions(), payload.ActivityRecover, func(bool) any { return st.Spec }, &rec)
		if err == nil {
			break
		}
		if errors.Is(err, errStopping) || !block(ctx, st, err) {
			return false
		}
	}
	st.recordCatalog(ctx, rec.Catalog)
	st.Offsets, st.BatchSeq, st.Recovered = rec.Offsets, rec.BatchSeq, true
	st.Watermark = max(st.Watermark, rec.Watermark) // hex of one width: text order is position order
	//workflowcheck:ignore (a maximum per map key: the result does not depend on the order; deterministic)
	st.FetchedPast, _ = payload.MergeFetchedPast(st.FetchedPast, rec.FetchedPast)
	//workflowcheck:ignore (a maximum per map key: the result does not depend on the order; deterministic)
	st.NewestTx = payload.MergeNewestTx(st.NewestTx, rec.NewestTx)
	if st.Offsets == nil {
		st.Offsets = payload.Offsets{}
	}
	workflow.GetLogger(ctx).Info("recovered", "source", rec.Source, "batch_seq", rec.BatchSeq, "offsets", rec.Offsets)
	if rec.Pending > 0 && !rebuild(ctx, st, rec.Pending) {
		return false
	}
	return st.Spec.Source == "" || rec.Loaded || loadTable(ctx, st, payload.InitialLoadID, false)
}

// takeNext returns the plan the last batch's apply made (nil if none) and
// forgets it: it is good for the round right after that batch only.
func (r *tableRun) takeNext() *payload.Plan {
	ready := r.next
	r.next = nil
	return ready
}

// takeSignals applies every signal delivered so far to the state (in the
// order sent: leaveVersion runs let the signals coroutine run first, as an
// activity's result and signals often come in one task) and publishes the
// phase.
func (r *tableRun) takeSignals(ctx workflow.Context) {
	if r.st.handsOverOnStop() {
		r.sig.settle(ctx)
	}
	r.sig.drain()
	r.sa.upsert(ctx, r.st)
}

// stop shows the table stopped; the workflow then completes.
func (r *tableRun) stop(ctx workflow.Context) {
	r.st.Phase = PhaseStopped
	r.sa.upsert(ctx, r.st)
}

// pause shows the table paused and waits for resume or stop.
func (r *tableRun) pause(ctx workflow.Context) {
	r.st.Phase = PhasePaused
	r.sa.upsert(ctx, r.st)
	r.st.awaitNoted(ctx, r.st.waitNote(PhasePaused, "`starter resume "+r.st.Spec.Table+"`"),
		func() bool { return !r.st.Paused || r.st.Stopping || r.st.settingsChanged() })
}

// continueAsNew ends the run once every update handler has finished: it
// takes the signals still buffered and returns the continue-as-new error
// that hands the state to the next run.
func (r *tableRun) continueAsNew(ctx workflow.Context) error {
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	if r.st.handsOverOnStop() {
		r.sig.settle(ctx)
	}
	r.sig.drain()
	r.st.Runs++
	return workflow.NewContinueAsNewError(ctx, TableWorkflow, TableInput{Spec: r.st.Spec, State: r.st})
}

// serveRequest serves an operator's request between batches: a
// re-snapshot (resnapshot signal) before queued backfill ranges (backfill
// update). It returns false when the workflow is asked to stop.
func (r *tableRun) serveRequest(ctx workflow.Context) bool {
	if r.st.ResnapshotRequested != "" {
		return resnapshot(ctx, r.st)
	}
	return backfillStep(ctx, r.st)
}

// plan returns the round's batch plan: ready (the last apply's, see
// tableRun.next) when it starts at the table's offsets and no settings
// changed since it was made, else a PlanBatch's (askPlan). It returns nil
// and true when the round has no plan (stopping, interrupted, or blocked
// and retried: the loop's top takes the signal), and false when the
// workflow is asked to stop while blocked.
func (r *tableRun) plan(ctx workflow.Context, ready *payload.Plan) (*payload.Plan, bool) {
	st := r.st
	st.Phase = streamPhase(st)
	if ready != nil && ready.StartsAt(st.Offsets) && st.settingsChanges == r.nextSettings {
		p := *ready // planned by the last ApplyBatch (plan-in-apply)
		return &p, true
	}
	var plan payload.Plan
	err := r.askPlan(ctx, &plan)
	if errors.Is(err, errStopping) || errors.Is(err, errInterrupted) {
		return nil, true
	}
	if err != nil {
		return nil, block(ctx, st, err)
	}
	return &plan, true
}

// askPlan runs PlanBatch for the batch at the table's offsets into plan.
// Since idleWaitVersion an idle table waits inside PlanBatch (up to
// idleWait) for its first record, and a signal or settings change cuts
// the wait short (errInterrupted); fast-recovery runs wait so only after
// an empty plan, with the long idleDeadAfter heartbeat timeout, and a plan
// after records waits only MaxWait, with deadAfter (planWait). Before, a
// plan waited MaxWait. The error is execVisible's or execInterruptible's.
func (r *tableRun) askPlan(ctx workflow.Context, plan *payload.Plan) error {
	st := r.st
	if workflow.GetVersion(ctx, idleWaitVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return execVisible(ctx, st, planOptions(st.Spec, st.heartbeatTimeout()), payload.ActivityPlanBatch, func(bool) any {
			return payload.PlanRequest{Spec: st.Spec, Offsets: st.Offsets}
		}, plan)
	}
	settings := st.settingsChanges
	wait, heartbeat := st.planWait()
	err := execInterruptible(ctx, st, planOptions(st.Spec, heartbeat), payload.ActivityPlanBatch, func(bool) any {
		return payload.PlanRequest{Spec: st.Spec, Offsets: st.Offsets, IdleWait: wait, TopicWasMissing: st.TopicMissing}
	}, plan, func() bool {
		return st.Paused || st.Stopping || st.ResnapshotRequested != "" || len(st.Backfill) > 0 || st.settingsChanges != settings ||
			(st.Cut != nil && !st.Cut.Reported) // the group's cut freezes the table: it reports at once
	})
	if err == nil {
		st.idle = len(plan.Ranges) == 0
	}
	return err
}

// takePlan takes in what a plan found: a stopping owner (Leaving: the next
// activity claims the table), the catalog, the high watermarks and a
// missing topic. It reports whether the plan has a batch to apply; an
// empty plan's offsets (new partitions' starting points) become the
// table's.
func (r *tableRun) takePlan(ctx workflow.Context, plan *payload.Plan) bool {
	st := r.st
	st.ownerLeft(ctx, plan.Leaving)
	st.recordCatalog(ctx, plan.Catalog)
	st.HighWatermarks, st.TopicMissing = plan.HighWatermarks, plan.TopicMissing
	if len(plan.Ranges) == 0 {
		st.Offsets = plan.Offsets
		return false
	}
	return true
}

// apply applies plan's batch (runBatch: ApplyBatch, and RebuildKeys for
// late keys it left), advances the offsets to the batch's end, keeps the
// plan the apply made for the next round (planInApplyVersion runs) and
// sets the phase: snapshot while the connector's snapshot reads last,
// stream after. It returns false when the workflow is asked to stop while
// blocked.
func (r *tableRun) apply(ctx workflow.Context, plan *payload.Plan) bool {
	st := r.st
	settingsAtApply := st.settingsChanges // ApplyBatch plans the batch after it with the spec as now
	bound, before := st.cutBound(), st.Offsets
	res, ok := runBatch(ctx, st, plan.Ranges, plan.Offsets, true)
	if !ok {
		return false
	}
	if bound != nil && st.Cut != nil && st.Cut.W == bound.W && sameOffsets(res.EndOffsets, before) {
		st.Cut.Held = true // every record left is above W: wait for the release (cutWait)
	}
	st.Offsets = res.EndOffsets
	if r.planInApply {
		r.next, r.nextSettings = res.Next, settingsAtApply
	}
	if res.SnapshotLast || (st.Phase == PhaseSnapshot && res.SnapshotRows == 0 && res.Changes > 0) {
		st.SnapshotDone = true
	}
	if res.SnapshotRows > 0 && !res.SnapshotLast && !st.SnapshotDone {
		st.Phase = PhaseSnapshot
	} else {
		st.Phase = streamPhase(st)
	}
	return true
}

// sameOffsets reports whether a and b hold the same offsets.
//
//workflowcheck:ignore (the loop goes over a map, but its result does not depend on the order; deterministic)
func sameOffsets(a, b payload.Offsets) bool {
	if len(a) != len(b) {
		return false
	}
	for p, o := range a {
		if ob, ok := b[p]; !ok || ob != o {
			return false
		}
	}
	return true
}
