package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/payload"
)

// Re-snapshot modes (the resnapshot signal's payload).
const (
	ResnapshotDirect      = "direct"      // read the source table directly (LoadTable), soft-delete ghost rows
	ResnapshotIncremental = "incremental" // ask the Debezium connector for an incremental snapshot
)

// loadTable runs a direct load (initial or re-snapshot) as one long
// activity that resumes after its last committed chunk when retried.
// Since loadVisibleVersion a load that keeps failing shows the table as
// retrying with the load's last error (execInterruptible), and a stop
// signal ends it while it retries or runs. It returns false when the
// workflow is asked to stop (blocked, retrying or loading).
func loadTable(ctx workflow.Context, st *TableState, id string, resnapshot bool) bool {
	prev := st.Phase
	st.Phase = PhaseSnapshot
	defer func() {
		if st.Phase == PhaseSnapshot {
			st.Phase = prev
		}
	}()
	opts := loadOptions(id, st.Spec)
	if workflow.GetVersion(ctx, loadVisibleVersion, workflow.DefaultVersion, 1) == 1 {
		// a failing load shows as retrying with its error, and a stop takes
		// effect while it retries or runs (the activity is cancelled; a
		// later start resumes after its last committed chunk)
		var res payload.LoadResult
		err := execInterruptible(ctx, st, opts, payload.ActivityLoadTable, func(bool) any {
			return payload.LoadRequest{Spec: st.Spec, LoadID: id, Resnapshot: resnapshot, Chunk: st.Spec.LoadChunk, Position: st.Offsets}
		}, &res, func() bool { return st.Stopping })
		for err != nil {
			if errors.Is(err, errStopping) || errors.Is(err, errInterrupted) || !block(ctx, st, err) {
				return false
			}
			err = execInterruptible(ctx, st, opts, payload.ActivityLoadTable, func(bool) any {
				return payload.LoadRequest{Spec: st.Spec, LoadID: id, Resnapshot: resnapshot, Chunk: st.Spec.LoadChunk, Position: st.Offsets}
			}, &res, func() bool { return st.Stopping })
		}
		st.LastLoad = &res
		st.Totals.LoadedRows += res.Rows
		st.Totals.Ghosts += int64(res.Ghosts)
		return true
	}
	for {
		var res payload.LoadResult
		o, err := st.routeTo(ctx, opts)
		if err != nil {
			return false // stopping
		}
		err = workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, o), payload.ActivityLoadTable, payload.LoadRequest{
			Spec: st.Spec, LoadID: id, Resnapshot: resnapshot, Chunk: st.Spec.LoadChunk, Position: st.Offsets}).Get(ctx, &res)
		if st.handOver(ctx, err) {
			continue
		}
		if err == nil {
			st.LastLoad = &res
			st.Totals.LoadedRows += res.Rows
			st.Totals.Ghosts += int64(res.Ghosts)
			return true
		}
		if !block(ctx, st, err) {
			return false
		}
	}
}

// resnapshot serves a resnapshot signal between batches.
func resnapshot(ctx workflow.Context, st *TableState) bool {
	mode := st.ResnapshotRequested
	st.ResnapshotRequested = ""
	st.Resnapshots++
	id := resnapshotID(ctx, st.Resnapshots)
	if mode == ResnapshotIncremental {
		var sig payload.SignalResult
		err := workflow.ExecuteActivity(withShort(ctx), payload.ActivitySignalIncrementalSnapshot, st.Spec, id).Get(ctx, &sig)
		if err != nil {
			return block(ctx, st, err)
		}
		workflow.GetLogger(ctx).Info("incremental snapshot requested", "signal", sig.Value)
		return true
	}
	return loadTable(ctx, st, id, true)
}

// resnapshotID names the n-th re-snapshot of this table's workflow chain:
// "resnapshot-<n>-<first 8 characters of the chain's first run id>". The
// count starts again in a workflow started anew (after a stop); the run
// id keeps the load id, and so the load cursor and the bronze topic of the
// load's rows, its own (a reused id would resume the earlier load, or find
// its rows already in bronze).
func resnapshotID(ctx workflow.Context, n int) string {
	run := workflow.GetInfo(ctx).FirstRunID
	if len(run) > 8 {
		run = run[:8]
	}
	if run == "" {
		return fmt.Sprintf("resnapshot-%d", n)
	}
	return fmt.Sprintf("resnapshot-%d-%s", n, run)
}
