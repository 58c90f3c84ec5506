package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/payload"
)

// ValidationWorkflowName is the registered name of ValidationWorkflow.
const ValidationWorkflowName = "ValidationWorkflow"

// ValidationWorkflowID is the id `starter validate` gives a run started
// at time at: lakemirror-validate-<table>-<UTC time to the millisecond>.
func ValidationWorkflowID(table string, at time.Time) string {
	return "lakemirror-validate-" + table + "-" + at.UTC().Format("20060102T150405.000Z")
}

// ValidationWorkflow runs the validation checks of one table once (the
// Validate activity) and returns their results; the run id written to the
// validation table is this workflow's id. Failing checks are results, not
// a workflow failure. Storage and Kafka errors are retried (10 attempts,
// backoff to a minute); a bad spec is not.
func ValidationWorkflow(ctx workflow.Context, spec payload.TableSpec) (payload.ValidationResult, error) {
	ctx = workflow.WithActivityOptions(ctx, validationOptions(spec.Table))
	req := payload.ValidationRequest{Spec: spec, RunID: workflow.GetInfo(ctx).WorkflowExecution.ID}
	var res payload.ValidationResult
	err := workflow.ExecuteActivity(ctx, payload.ActivityValidate, req).Get(ctx, &res)
	return res, err
}
