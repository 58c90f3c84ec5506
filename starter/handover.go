package main

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/workflows"
)

// handOverSettle is how long an activity may wait in its worker's queue
// before status calls it a wait for hand-over: a live worker takes a task
// within milliseconds.
const handOverSettle = time.Second

// addHandOverReason sets st.PhaseReason when the table's next activity
// waits in the queue of its worker (st.Owner) and nobody has taken it for
// handOverSettle: that worker is gone (stopped, or restarted under another
// worker id), and the table moves to another worker when the activity's
// schedule-to-start timeout ends (docs/design.md, "Routing"). It reads
// the workflow's pending activities (DescribeWorkflowExecution, within
// 3 s); when they cannot be read, st is left as it is.
func addHandOverReason(ctx context.Context, c client.Client, st *workflows.Status) {
	if st.Owner == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	desc, err := c.DescribeWorkflowExecution(ctx, workflows.WorkflowID(st.Table), "")
	if err != nil {
		return
	}
	if r := handOverReason(st.Owner, desc.GetPendingActivities(), time.Now()); r != "" {
		st.PhaseReason = r
	}
}

// handOverReason is the phase reason for a table owned by the worker
// queue owner ("<queue>@<worker id>") with these pending activities at
// now: "waiting for hand-over from worker <id> (<N> s left)" when one of
// them is scheduled on owner's queue, not started, for at least
// handOverSettle, with a schedule-to-start timeout; N is the whole
// seconds until that timeout (rounded up; 0 when it is due). "" otherwise.
func handOverReason(owner string, pending []*workflowpb.PendingActivityInfo, now time.Time) string {
	worker := strings.TrimPrefix(owner, activities.TaskQueue+"@")
	for _, p := range pending {
		opts := p.GetActivityOptions()
		if p.GetState() != enumspb.PENDING_ACTIVITY_STATE_SCHEDULED || opts.GetTaskQueue().GetName() != owner ||
			opts.GetScheduleToStartTimeout() == nil || p.GetScheduledTime() == nil {
			continue
		}
		scheduled := p.GetScheduledTime().AsTime()
		if now.Sub(scheduled) < handOverSettle {
			continue
		}
		left := scheduled.Add(opts.GetScheduleToStartTimeout().AsDuration()).Sub(now)
		secs := max(int64(math.Ceil(left.Seconds())), 0)
		return fmt.Sprintf("waiting for hand-over from worker %s (%d s left)", worker, secs)
	}
	return ""
}
