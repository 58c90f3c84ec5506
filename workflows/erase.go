package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/payload"
)

// EraseWorkflowName is the registered name of EraseWorkflow.
const EraseWorkflowName = "EraseWorkflow"

// EraseWorkflowID is the workflow id `starter erase` gives an erasure of
// table requested at unixMilli: the erasure's id in the table's erasures
// table.
func EraseWorkflowID(table string, unixMilli int64) string {
	return fmt.Sprintf("lakemirror-erase-%s-%d", table, unixMilli)
}

// EraseWorkflow runs one erasure on request (the Erase activity, docs/design.md
// "Erasure") on the worker holding the table's state (onOwner), where it
// takes the table's lock: it runs between two of the table's batches and
// drops that worker's local state of the table. The erasure's id is the
// workflow's id. Its input carries the keys' salted hashes, never their
// values. Storage and commit failures are retried (the erasure continues
// where it stopped); a request that does not fit the table, and a refused
// erasure (a branch or tag keeps the keys; nothing changed), fail at once.
func EraseWorkflow(ctx workflow.Context, req payload.EraseRequest) (payload.EraseResult, error) {
	req.ID = workflow.GetInfo(ctx).WorkflowExecution.ID
	var res payload.EraseResult
	err := onOwner(ctx, req.Spec.Table, eraseOptions(req), payload.ActivityErase, req, &res)
	return res, err
}
