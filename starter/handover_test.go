package main

import (
	"context"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"testing"
	"time"

	activitypb "go.temporal.io/api/activity/v1"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/lakemirror/lakemirror/worker/runner"
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

// TestStatusWaitingForHandOver: a table whose worker stopped (a worker
// restarted under another worker id) shows in status as "stream: waiting
// for hand-over from worker <old id> (N s left)" until the new worker
// takes it over; then plain "stream" again, owned by the new worker.
func TestStatusWaitingForHandOver(t *testing.T) {
	st := testStack(t)
	args := namespace(t, st, "cli-handover")
	s := st.Settings
	s.Namespace, s.WorkerID = "cli-handover", "oldworker1"
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	first, err := runner.Start(context.Background(), s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := cli(t, append([]string{"produce", "ho.public.orders"}, args...)...); code != exitOK {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
	if code, _, stderr := cli(t, append([]string{"start", "ho.public.orders", "--table", "ho.orders", "--key", "order_id", "--max-wait", "200ms", "--schedules=false"}, args...)...); code != exitOK {
		t.Fatalf("start: exit %d: %s", code, stderr)
	}
	if code, _, stderr := cli(t, append([]string{"wait", "ho.orders", "--timeout", "1m"}, args...)...); code != exitOK {
		t.Fatalf("wait: exit %d: %s", code, stderr)
	}
	first.Stop()
	s.WorkerID = "newworker2"
	second, err := runner.Start(context.Background(), s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Stop()
	defer func() {
		_ = second.Client.TerminateWorkflow(context.Background(), "lakemirror-table-ho.orders", "", "test ends")
	}()
	waiting := regexp.MustCompile(`(?m)^phase +stream: waiting for hand-over from worker oldworker1 \((\d+) s left\)$`)
	var seen []string
	// the old worker's idle plan is noticed gone when its heartbeat times
	// out: up to 60 s for an idle wait (fast-recovery, docs/design.md
	// "Recovery after a worker dies"), then the 3 s probe on its queue
	waitFor(t, 2*time.Minute, "status saying the table waits for the hand-over", func() bool {
		_, out, _ := cli(t, append([]string{"status", "ho.orders"}, args...)...)
		m := waiting.FindStringSubmatch(out)
		if m == nil {
			return false
		}
		seen = append(seen, m[0])
		n, _ := strconv.Atoi(m[1])
		if n > 20 {
			t.Fatalf("%q: more seconds left than the 20 s schedule-to-start timeout", m[0])
		}
		return true
	})
	waitUntil(t, "the new worker taking the table", func() bool {
		stat := statusOf(t, second.Client, "ho.orders")
		return stat.Owner == runner.WorkerQueue("newworker2")
	})
	_, out, _ := cli(t, append([]string{"status", "ho.orders"}, args...)...)
	if !regexp.MustCompile(`(?m)^phase +stream$`).MatchString(out) {
		t.Fatalf("after the hand-over (seen: %q):\n%s", seen, out)
	}
}
