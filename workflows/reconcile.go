package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/payload"
)

// ReconcileWorkflowName is the registered name of ReconcileWorkflow.
const ReconcileWorkflowName = "ReconcileWorkflow"

// ReconcileWorkflowID is the id `starter reconcile` gives a run started
// at time at: lakemirror-reconcile-<table>-<UTC time to the millisecond>.
func ReconcileWorkflowID(table string, at time.Time) string {
	return "lakemirror-reconcile-" + table + "-" + at.UTC().Format("20060102T150405.000Z")
}

// ReconcileWorkflow runs one reconciliation of a table against its
// source database (the Reconcile activity, beside ValidationWorkflow's
// checks) and returns its result; the run id written to the validation
// table (and the repair's load id) is this workflow's id, whatever the
// request says. Differences are results, not a workflow failure. The
// activity heartbeats its progress (the last key range read) every 10 s
// and a retry resumes there; source, storage and Kafka errors are
// retried (10 attempts, backoff to a minute), a bad spec or source table
// is not. Unlike maintenance it runs on the shared queue, not on the
// table's worker (onOwner): a run that fell back from a dead owner's queue
// would start a new activity and lose the progress the owner heartbeated
// (hours of key ranges), while only a repair uses the table's state (a
// worker without it builds one for the repair and drops it, and the
// owner's next batch rebuilds its own once).
func ReconcileWorkflow(ctx workflow.Context, req payload.ReconcileRequest) (payload.ReconcileResult, error) {
	ctx = workflow.WithActivityOptions(ctx, reconcileOptions(req.Spec.Table))
	req.RunID = workflow.GetInfo(ctx).WorkflowExecution.ID
	var res payload.ReconcileResult
	err := workflow.ExecuteActivity(ctx, payload.ActivityReconcile, req).Get(ctx, &res)
	return res, err
}
