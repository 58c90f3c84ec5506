package workflows

import (
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
	var res payload.MaintenanceResult
	err := onOwner(ctx, req.Spec.Table, maintenanceOptions(req), payload.ActivityMaintain, req, &res)
	return res, err
}

// ScheduleID is the Temporal Schedule id of a table's periodic job.
func ScheduleID(table, job string) string { return "lakemirror-" + job + "-" + table }
