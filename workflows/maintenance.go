package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/payload"
)

// MaintenanceWorkflowName is the registered name of MaintenanceWorkflow.
const MaintenanceWorkflowName = "MaintenanceWorkflow"

// MaintenanceWorkflow runs one maintenance job (purge, compact, expire)
// on a table's Iceberg tables: what Temporal Schedules start periodically
// per table, and `starter maintain` starts on demand. The job runs on the
// worker holding the table's state (onOwner), serialized there with the
// table's batches; commit conflicts with batches committed elsewhere are
// retried (60 attempts, backoff to a minute).
func MaintenanceWorkflow(ctx workflow.Context, req payload.MaintenanceRequest) (payload.MaintenanceResult, error) {
	opts := workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    time.Minute,
		Summary:             fmt.Sprintf("%s %s", req.Job, req.Spec.Table),
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute,
			MaximumAttempts: 60, NonRetryableErrorTypes: []string{payload.ErrTypeBadSpec}},
	}
	var res payload.MaintenanceResult
	err := onOwner(ctx, req.Spec.Table, opts, payload.ActivityMaintain, req, &res)
	return res, err
}

// ScheduleID is the Temporal Schedule id of a table's periodic job.
func ScheduleID(table, job string) string { return "lakemirror-" + job + "-" + table }
