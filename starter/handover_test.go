package main

import (
	"testing"
	"time"

	activitypb "go.temporal.io/api/activity/v1"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// TestHandOverReason: only an activity scheduled on the owner's queue,
// not started, for at least a second, makes a reason; its seconds left
// count to the schedule-to-start timeout.
func TestHandOverReason(t *testing.T) {
	now := time.Date(2026, 12, 5, 4, 0, 0, 0, time.UTC)
	pending := func(state enumspb.PendingActivityState, queue string, age time.Duration) *workflowpb.PendingActivityInfo {
		return &workflowpb.PendingActivityInfo{State: state, ScheduledTime: timestamppb.New(now.Add(-age)),
			ActivityOptions: &activitypb.ActivityOptions{TaskQueue: &taskqueuepb.TaskQueue{Name: queue}, ScheduleToStartTimeout: durationpb.New(20 * time.Second)}}
	}
	const owner = "lakemirror@3f2a9c0d1e7b"
	for _, c := range []struct {
		what string
		p    *workflowpb.PendingActivityInfo
		want string
	}{
		{"waiting 2.5 s", pending(enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, owner, 2500*time.Millisecond), "waiting for hand-over from worker 3f2a9c0d1e7b (18 s left)"},
		{"due", pending(enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, owner, 25*time.Second), "waiting for hand-over from worker 3f2a9c0d1e7b (0 s left)"},
		{"just scheduled", pending(enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, owner, 500*time.Millisecond), ""},
		{"started", pending(enumspb.PENDING_ACTIVITY_STATE_STARTED, owner, 10*time.Second), ""},
		{"the shared queue (a claim)", pending(enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, "lakemirror", 10*time.Second), ""},
	} {
		if got := handOverReason(owner, []*workflowpb.PendingActivityInfo{c.p}, now); got != c.want {
			t.Errorf("%s: %q, want %q", c.what, got, c.want)
		}
	}
}
