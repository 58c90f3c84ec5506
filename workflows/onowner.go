package workflows

import (
	"errors"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/payload"
)

// onOwner runs the activity of registered name activity
// (payload.Activity*) on arg with opts into out on the worker holding
// table's state: TableOwner (on the shared queue, 3 attempts) names that
// worker's queue, and the job is scheduled there with ownerWait to be
// taken. It runs on opts' queue (the shared one) instead when no worker
// holds the table, the owner cannot be found, or the owner takes no task
// within ownerWait (it is gone; the job then builds the state it needs on
// whichever worker takes it, as before routing). Errors: the job's.
func onOwner(ctx workflow.Context, table string, opts workflow.ActivityOptions, activity string, arg, out any) error {
	if workflow.GetVersion(ctx, ownerJobsVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), activity, arg).Get(ctx, out)
	}
	lookup := workflow.WithActivityOptions(ctx, ownerLookupOptions(table))
	var queue string
	if err := workflow.ExecuteActivity(lookup, payload.ActivityTableOwner, table).Get(ctx, &queue); err != nil {
		workflow.GetLogger(ctx).Warn("the table's worker is unknown; running the job on the shared queue", "table", table, "error", err)
		queue = ""
	}
	shared := opts.TaskQueue
	if shared == "" {
		shared = workflow.GetInfo(ctx).TaskQueueName
	}
	if queue != "" && queue != shared {
		o := opts
		o.TaskQueue = queue
		o.ScheduleToStartTimeout = ownerWait
		err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, o), activity, arg).Get(ctx, out)
		var te *temporal.TimeoutError
		if !errors.As(err, &te) || te.TimeoutType() != enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START {
			return err
		}
		workflow.GetLogger(ctx).Warn("the table's worker took no task; running the job on the shared queue", "table", table, "worker_queue", queue)
	}
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), activity, arg).Get(ctx, out)
}
