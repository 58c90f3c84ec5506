package workflows

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/payload"
)

// iterationsPerRun bounded one run's history before canVersion: after
// this many plan/apply rounds (or when the server suggested it) the
// workflow continued as new. Runs of histories recorded before still do.
const iterationsPerRun = 200

// A run continues as new when its history is large (canVersion): at this
// many events or bytes, or when the server suggests it (its own limits:
// Temporal fails a workflow at 51,200 events or 50 MiB and warns at 10,240
// events or 10 MiB), so a busy table makes a new run every few thousand
// batches and an idle one every few weeks, not every 200 rounds.
const (
	historyEventsPerRun = 10_000
	historyBytesPerRun  = 8 << 20
)

// idleWait is how long PlanBatch waits for a first record of an idle table
// before returning an empty plan (payload.PlanRequest.IdleWait): an idle
// table costs one planning activity per idleWait, a few an hour, instead
// of one per MaxWait.
const idleWait = 15 * time.Minute

// TableWorkflow runs one source table's pipeline for as long as the table
// is mirrored: recover offsets from the Iceberg tables on a fresh start,
// then loop: plan a batch (exact offset ranges, recorded in history),
// apply it, advance the offsets to what the apply committed. Pause,
// resume, stop and retry are signals taken between batches; the status
// query reports phase, offsets, lag and the last batch. A batch that fails
// with a non-retryable error leaves the table "blocked" with the error in
// status until a retry (or stop) signal. It never completes on its own;
// a stop signal completes it after the in-flight batch (nil error). It
// returns a continue-as-new error, carrying the state, when the run's
// history is large (runIsLong) or a settings update was taken (so the new
// run's input shows the settings in effect); a non-retryable ErrTypeBadSpec error when
// the spec names no table or no topic; the SDK's error when a query or
// update handler cannot be registered.
//
// Each round of the loop is a sequence of steps (steps.go): take the
// signals, then stop, continue as new after a settings update, pause,
// continue as new for the history's size, or serve an operator's
// request (re-snapshot, backfill); else plan a batch, take in the plan,
// and apply it.
func TableWorkflow(ctx workflow.Context, in TableInput) error {
	st, err := runState(in)
	if err != nil {
		return err
	}
	r, err := startRun(ctx, st)
	if err != nil {
		return err
	}
	defer r.showStopped(ctx)
	if !st.Recovered && !r.recover(ctx) {
		return nil
	}
	// canVersion decides when continueAsNew is due (runIsLong); runs have
	// always asked it here, after recovery
	r.bySize = workflow.GetVersion(ctx, canVersion, workflow.DefaultVersion, 1) == 1
	for round := 0; ; round++ {
		ready := r.takeNext() // the plan the last batch's apply made, for this round only
		r.takeSignals(ctx)
		switch {
		case st.Stopping:
			r.stop(ctx)
			return nil
		case st.settingsChanged():
			return r.continueAsNew(ctx) // the new run's input shows the settings in effect
		case st.Paused:
			r.pause(ctx)
			continue
		case runIsLong(ctx, round, r.bySize):
			return r.continueAsNew(ctx)
		case st.ResnapshotRequested != "" || len(st.Backfill) > 0:
			r.leaveCut(ctx)
			if !r.serveRequest(ctx) {
				return nil
			}
			continue
		case r.cutWait(ctx):
			continue // frozen or held for the group's cut: the round starts again
		}
		plan, ok := r.plan(ctx, ready)
		if !ok {
			return nil
		}
		if plan == nil || !r.takePlan(ctx, plan) {
			continue // no plan this round, or nothing to apply
		}
		if !r.apply(ctx, plan) {
			return nil
		}
	}
}

// runIsLong reports whether the run should continue as new before round
// i: its history is large (bySize), or i reached iterationsPerRun (runs
// recorded before canVersion), or the server suggests it.
func runIsLong(ctx workflow.Context, i int, bySize bool) bool {
	info := workflow.GetInfo(ctx)
	if info.GetContinueAsNewSuggested() {
		return true
	}
	if !bySize {
		return i >= iterationsPerRun
	}
	return info.GetCurrentHistoryLength() >= historyEventsPerRun || info.GetCurrentHistorySize() >= historyBytesPerRun
}

// settingsChanged reports whether a settings update was taken in this run
// of settingsRunVersion, which then continues as new at its next round.
func (st *TableState) settingsChanged() bool {
	return st.settingsRun == 1 && st.settingsChanges > 0
}

// recordCatalog records the catalog an activity's worker reported (id)
// as the table's, when the table has none yet, and upserts the memo; a
// no-op for runs before memoSpecVersion.
func (st *TableState) recordCatalog(ctx workflow.Context, id string) {
	if st.memoSpec < 1 || id == "" || st.Spec.Catalog != "" {
		return
	}
	st.Spec.Catalog = id
	st.upsertSpecMemo(ctx)
}

// upsertSpecMemo writes st.Spec to the memo's "spec" (memoSpecVersion
// runs only); a failure is logged, never fatal.
func (st *TableState) upsertSpecMemo(ctx workflow.Context) {
	if st.memoSpec < 1 {
		return
	}
	if err := workflow.UpsertMemo(ctx, map[string]any{"spec": st.Spec}); err != nil {
		workflow.GetLogger(ctx).Warn("upsert memo", "error", err)
	}
}

// runBatch applies one batch of exact ranges (numbered next in sequence)
// and, when it left late keys, their rebuild; it records the result in the
// state. endOffsets are the offsets to continue from once it is applied.
// stream: a batch of the stream (not a backfill's re-apply), reported to
// the table's group (reportToGroup). It returns false when the workflow
// is asked to stop while blocked.
func runBatch(ctx workflow.Context, st *TableState, ranges []payload.Range, endOffsets payload.Offsets, stream bool) (payload.ApplyResult, bool) {
	st.BatchSeq++
	batch := payload.Batch{ID: fmt.Sprintf("%s#%d", st.Spec.Table, st.BatchSeq), Seq: st.BatchSeq,
		Topic: st.Spec.Topic, Ranges: ranges, EndOffsets: endOffsets}
	start := workflow.Now(ctx)
	var bound *payload.CutBound
	if stream {
		bound = st.cutBound() // the group's cut: the batch applies nothing above its W
	}
	res, ok := applyBatch(ctx, st, batch, bound)
	if !ok {
		return res, false
	}
	st.ownerLeft(ctx, res.Leaving) // its worker is stopping: a rebuild or the next batch claims the table first
	// a batch that left late keys counts as applied once they are rebuilt
	if pending := res.History.Pending + res.Mirror.Pending; pending > 0 && !rebuild(ctx, st, pending) {
		return res, false
	}
	st.release(ctx, res)
	st.LastBatch, st.LastError = &res, ""
	st.LastBatchAt = workflow.Now(ctx)
	st.Totals.add(&res)
	if res.Mirror.Watermark > st.Watermark {
		st.Watermark = res.Mirror.Watermark
	}
	st.NewestSourceTs = max(st.NewestSourceTs, res.Mirror.MaxSourceTs)
	st.noteBatch(ctx, &res, start)
	if stream { // a backfill re-applies past records: counted once already
		reportToGroup(ctx, st, &res, batch, bound)
	}
	return res, true
}

// reportToGroup signals the table's GroupWorkflow (SignalGroupReport)
// with what the batch did toward the group's cut (res.Group: events per
// transaction, positions fetched), for a table with a group whose batch
// read its records (groupReportVersion). In a group without a
// transaction topic a batch bounded at the group's W (bound, batch the
// batch as planned) also reports, on each partition where it stopped
// before a record above W (its end offset below the planned one), W as
// fetched past, and reports even when it applied nothing
// (cutHeldReportVersion). A group workflow that does not run (not
// started, or ended) fails the signal: logged, the table goes on.
//
//workflowcheck:ignore (maps.Copy goes over a map, but its result does not depend on the order; deterministic)
func reportToGroup(ctx workflow.Context, st *TableState, res *payload.ApplyResult, batch payload.Batch, bound *payload.CutBound) {
	if st.Spec.Group == "" {
		return
	}
	var past []int32
	if bound != nil && st.Spec.TransactionTopic == "" {
		for _, r := range batch.Ranges {
			if e, ok := res.EndOffsets[r.Partition]; ok && e < r.To {
				past = append(past, r.Partition)
			}
		}
		if workflow.GetVersion(ctx, cutHeldReportVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
			past = nil
		}
	}
	if res.Group == nil && len(past) == 0 {
		return
	}
	if workflow.GetVersion(ctx, groupReportVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	var prog payload.GroupProgress
	if res.Group != nil {
		prog = *res.Group
	}
	if len(past) > 0 {
		fetched := make(map[int32]string, len(prog.FetchedPast)+len(past))
		maps.Copy(fetched, prog.FetchedPast)
		for _, p := range past {
			fetched[p] = max(fetched[p], bound.W) // hex of one width: text order is position order
		}
		prog.FetchedPast = fetched
	}
	//workflowcheck:ignore (a maximum per map key: the result does not depend on the order; deterministic)
	st.FetchedPast, _ = payload.MergeFetchedPast(st.FetchedPast, prog.FetchedPast)
	//workflowcheck:ignore (a maximum per map key: the result does not depend on the order; deterministic)
	st.NewestTx = payload.MergeNewestTx(st.NewestTx, prog.NewestTx)
	//workflowcheck:ignore (sorted: deterministic)
	rep := GroupReport{GroupMember: GroupMemberOf(st.Spec), BatchSeq: res.BatchSeq, TxSeen: prog.TxSeen, TxEvents: prog.TxEvents,
		FetchedPast: prog.FetchedPast, Partitions: res.EndOffsets.SortedPartitions(), Own: prog.Own}
	if err := workflow.SignalExternalWorkflow(ctx, GroupWorkflowID(st.Spec.Group), "", SignalGroupReport, rep).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("the group's workflow did not take the batch's report", "group", st.Spec.Group, "error", err)
	}
}

// applyBatch runs ApplyBatch until it succeeds (bounded at the group's
// cut when bound is set), blocking the table on
// non-retryable failures until an operator signals retry. It returns
// false when the workflow is asked to stop while blocked.
func applyBatch(ctx workflow.Context, st *TableState, b payload.Batch, bound *payload.CutBound) (payload.ApplyResult, bool) {
	decision, rerun := "", false
	for {
		var res payload.ApplyResult
		err := execVisible(ctx, st, applyOptions(st, b, st.heartbeatTimeout()), payload.ActivityApplyBatch, func(failed bool) any {
			return payload.ApplyRequest{Spec: st.Spec, Batch: b, SchemaDecision: decision, Rerun: rerun || failed, Cut: bound}
		}, &res)
		if err == nil {
			return res, true
		}
		if errors.Is(err, errStopping) {
			return res, false
		}
		rerun = true
		var ae *temporal.ApplicationError
		if errors.As(err, &ae) && ae.Type() == payload.ErrTypeSchemaBlocked {
			d, ok := awaitSchemaDecision(ctx, st, err)
			if !ok {
				return res, false
			}
			decision = d
			continue
		}
		if !block(ctx, st, err) {
			return res, false
		}
	}
}

// awaitSchemaDecision shows the table as schema-blocked with the change
// in status and waits for the operator's schema signal ("evolve" or
// "skip") or stop.
func awaitSchemaDecision(ctx workflow.Context, st *TableState, err error) (string, bool) {
	st.LastError = errorText(err)
	prev := st.Phase
	st.Phase = PhaseSchemaBlocked
	st.publish(ctx)
	workflow.GetLogger(ctx).Error("schema change blocks the table", "error", st.LastError)
	st.schemaDecision = ""
	t := st.Spec.Table
	st.awaitNoted(ctx, st.waitNote(PhaseSchemaBlocked, "`starter schema "+t+" --evolve` or `--skip`"),
		func() bool { return st.schemaDecision != "" || st.Stopping })
	d := st.schemaDecision
	st.schemaDecision, st.Phase = "", prev
	st.publish(ctx)
	return d, !st.Stopping
}

// rebuild runs the late-key rebuild (RebuildKeys) for the keys the last
// batch left pending, before any later batch touches them. It returns
// false when the workflow is asked to stop while blocked.
func rebuild(ctx workflow.Context, st *TableState, pending int) bool {
	spec := st.Spec
	opts := workflow.ActivityOptions{
		ActivityID:          fmt.Sprintf("rebuild-%d", st.BatchSeq),
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    st.heartbeatTimeout(), // the activity heartbeats every second; a dead worker's attempt fails after this
		Summary:             fmt.Sprintf("rebuild %d late keys of %s from bronze after batch %d", pending, spec.Table, st.BatchSeq),
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute,
			NonRetryableErrorTypes: []string{payload.ErrTypeUndecodable, payload.ErrTypeUnfit, payload.ErrTypeBadSpec}},
	}
	for {
		var res payload.RebuildResult
		err := execVisible(ctx, st, opts, payload.ActivityRebuildKeys, func(bool) any {
			return payload.RebuildRequest{Spec: spec, AfterSeq: st.BatchSeq}
		}, &res)
		if errors.Is(err, errStopping) {
			return false
		}
		if err == nil {
			st.LastRebuild = &res
			st.Totals.RebuiltKeys += int64(res.Keys)
			st.Totals.UnwovenKeys += int64(res.Unwoven)
			return true
		}
		if !block(ctx, st, err) {
			return false
		}
	}
}

// block records a failure, shows the table as blocked and waits for a
// retry or stop signal. It returns false on stop.
func block(ctx workflow.Context, st *TableState, err error) bool {
	st.LastError = errorText(err)
	prev := st.Phase
	st.Phase = PhaseBlocked
	st.publish(ctx)
	workflow.GetLogger(ctx).Error("table blocked", "error", st.LastError)
	st.retryRequested = false
	st.awaitNoted(ctx, st.waitNote(PhaseBlocked, st.goOnBlocked()), func() bool { return st.retryRequested || st.Stopping })
	st.retryRequested = false
	st.Phase = prev
	st.publish(ctx)
	return !st.Stopping
}

func streamPhase(st *TableState) string {
	if st.Phase == PhaseSnapshot && !st.SnapshotDone {
		return PhaseSnapshot
	}
	return PhaseStream
}

// errorText is the innermost application error's message with its type.
func errorText(err error) string {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return fmt.Sprintf("%s: %s", ae.Type(), ae.Message())
	}
	return err.Error()
}

func withShort(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, shortOptions())
}

func shortOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute, NonRetryableErrorTypes: []string{payload.ErrTypeBadSpec}},
	}
}

// planOptions are PlanBatch's options; heartbeat is the heartbeat timeout
// (TableState.heartbeatTimeout).
func planOptions(spec payload.TableSpec, heartbeat time.Duration) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: spec.MaxWait + idleWait + time.Minute, // an idle table's plan waits up to idleWait
		HeartbeatTimeout:    heartbeat,
		Summary:             "plan next batch of " + spec.Topic,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second,
			NonRetryableErrorTypes: []string{payload.ErrTypeRetentionGap, payload.ErrTypeLogReset, payload.ErrTypeBadSpec}},
	}
}

// applyOptions are ApplyBatch's options for batch b of st's table (its
// summary: batchNote); heartbeat is the heartbeat timeout
// (TableState.heartbeatTimeout).
func applyOptions(st *TableState, b payload.Batch, heartbeat time.Duration) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		ActivityID:          fmt.Sprintf("apply-%d", b.Seq),
		StartToCloseTimeout: 15 * time.Minute,
		HeartbeatTimeout:    heartbeat, // the activity heartbeats every second; a dead worker's attempt fails after this
		Summary:             batchNote(streamPhase(st), b, st.Offsets, st.HighWatermarks),
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute, BackoffCoefficient: 2,
			NonRetryableErrorTypes: []string{payload.ErrTypeUndecodable, payload.ErrTypeUnfit, payload.ErrTypeRetentionGap, payload.ErrTypeLogReset, payload.ErrTypeBadSpec}},
	}
}
