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
	"github.com/lakemirror/lakemirror/internal/human"
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
	if r == "" && st.LagSource == lagFromKafka {
		r = stalledPlanReason(st.Owner, st.TotalLag, st.Spec.Defaults().MaxWait, desc.GetPendingActivities(), time.Now())
	}
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

// planSettle is how long past its MaxWait a worker's plan may run while
// records wait before status calls its worker silent: a live worker's
// plan sees new records within a second (it polls the high watermarks)
// and returns them at MaxWait at the latest.
const planSettle = 5 * time.Second

// stalledPlanReason is the phase reason for a table owned by the worker
// queue owner while lag records wait (lag read from Kafka just now), with
// these pending activities at now: when its PlanBatch has run on owner's
// queue for more than maxWait + planSettle (a live worker would have
// returned the waiting records), "waiting for hand-over from worker <id>
// (up to <N> s left): <lag> records wait, but its plan has not returned; its last
// heartbeat was <S> s ago, and a worker silent for <T> s is taken as
// gone". The worker may be dead (killed, its machine lost): Temporal
// notices at the plan's heartbeat timeout T, and the table then moves
// (docs/design.md, "Recovery after a worker dies"). N is T minus the
// silence (rounded up; 0 when due). "" otherwise.
func stalledPlanReason(owner string, lag int64, maxWait time.Duration, pending []*workflowpb.PendingActivityInfo, now time.Time) string {
	if lag <= 0 || owner == "" {
		return ""
	}
	worker := strings.TrimPrefix(owner, activities.TaskQueue+"@")
	for _, p := range pending {
		opts := p.GetActivityOptions()
		if p.GetActivityType().GetName() != "PlanBatch" || p.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED ||
			opts.GetTaskQueue().GetName() != owner || opts.GetHeartbeatTimeout() == nil || p.GetLastStartedTime() == nil {
			continue
		}
		started := p.GetLastStartedTime().AsTime()
		if now.Sub(started) < maxWait+planSettle {
			continue
		}
		last := started
		if hb := p.GetLastHeartbeatTime(); hb != nil && hb.AsTime().After(last) {
			last = hb.AsTime()
		}
		timeout := opts.GetHeartbeatTimeout().AsDuration()
		silent := max(now.Sub(last), 0)
		left := max(int64(math.Ceil((timeout - silent).Seconds())), 0)
		waits := human.Count(lag, "record waits", "records wait")
		return fmt.Sprintf("waiting for hand-over from worker %s (up to %d s left): %s, but its plan has not returned; "+
			"its last heartbeat was %d s ago, and a worker silent for %d s is taken as gone",
			worker, left, waits, int64(silent.Seconds()), int64(timeout.Seconds()))
	}
	return ""
}
