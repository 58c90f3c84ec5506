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
	"go.temporal.io/sdk/converter"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/workflows"
)

// handOverSettle is how long an activity may wait in its worker's queue
// before status calls it a wait for hand-over: a live worker takes a task
// within milliseconds.
const handOverSettle = time.Second

// addHandOverReason sets st.PhaseReason when the table waits for a
// hand-over: its next activity waits in the queue of its worker
// (st.Owner) and nobody has taken it for handOverSettle (that worker is
// gone, killed or restarted under another worker id, and the table moves
// to another worker when the activity's schedule-to-start timeout ends;
// docs/design.md, "Routing"), or the table has no worker (its worker
// stopped and handed it over, st.Unowned) and its claim has waited
// handOverSettle on the shared queue for a worker to take it. It reads
// the workflow's pending activities (DescribeWorkflowExecution, within
// 3 s); when they cannot be read, st is left as it is.
func addHandOverReason(ctx context.Context, c client.Client, st *workflows.Status) {
	if st.Owner == "" && st.Unowned == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	desc, err := c.DescribeWorkflowExecution(ctx, workflows.WorkflowID(st.Table), "")
	if err != nil {
		return
	}
	r := handOverReason(st.Owner, desc.GetPendingActivities(), time.Now())
	if st.Owner == "" {
		r = claimReason(st.Unowned, desc.GetPendingActivities(), time.Now())
	}
	if r == "" {
		r = buildReason(desc.GetPendingActivities())
	}
	if r != "" {
		st.PhaseReason = r
	}
}

// claimReason is the phase reason for a table without a worker whose
// last worker let it go as unowned says (workflows.Status.Unowned), with
// these pending activities at now: "waiting for a worker to take the
// table: <unowned> (for <N> s)" when its claim (ClaimTable) is scheduled
// on the shared queue, not started, for at least handOverSettle (no
// worker polls it: none runs, or all are stopping); N is the whole
// seconds since the claim's attempt was scheduled. "" otherwise.
func claimReason(unowned string, pending []*workflowpb.PendingActivityInfo, now time.Time) string {
	if unowned == "" {
		return ""
	}
	for _, p := range pending {
		if p.GetActivityType().GetName() != "ClaimTable" || p.GetState() != enumspb.PENDING_ACTIVITY_STATE_SCHEDULED ||
			p.GetActivityOptions().GetTaskQueue().GetName() != activities.TaskQueue || p.GetScheduledTime() == nil {
			continue
		}
		waited := now.Sub(p.GetScheduledTime().AsTime())
		if waited < handOverSettle {
			continue
		}
		return fmt.Sprintf("waiting for a worker to take the table: %s (for %d s)", unowned, int64(waited.Seconds()))
	}
	return ""
}

// buildReason is the phase reason of a table whose running activity
// waits for its local state to be built from the tables: the activity's
// last heartbeat detail when it starts with activities.BuildingPrefix
// ("building the local state from the tables: R rows read, K keys
// written in D (stage S)"), as of that heartbeat. "" otherwise.
func buildReason(pending []*workflowpb.PendingActivityInfo) string {
	for _, p := range pending {
		if p.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED || p.GetHeartbeatDetails() == nil {
			continue
		}
		var detail string
		if err := converter.GetDefaultDataConverter().FromPayloads(p.GetHeartbeatDetails(), &detail); err != nil {
			continue
		}
		if strings.HasPrefix(detail, activities.BuildingPrefix) {
			return detail
		}
	}
	return ""
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
