package main

import (
	"context"
	"io"
	"log/slog"
	"regexp"
	"testing"
	"time"

	activitypb "go.temporal.io/api/activity/v1"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/lakemirror/lakemirror/worker/runner"
	"github.com/lakemirror/lakemirror/workflows"
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

// TestClaimReason: a table without a worker whose claim has waited at
// least a second on the shared queue, not started, says why it has no
// worker and for how long the claim waited; nothing while the claim is
// fresh or running, for another activity, or without a known reason.
func TestClaimReason(t *testing.T) {
	now := time.Date(2026, 12, 5, 4, 0, 0, 0, time.UTC)
	claim := func(name string, state enumspb.PendingActivityState, queue string, age time.Duration) *workflowpb.PendingActivityInfo {
		return &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: name}, State: state, ScheduledTime: timestamppb.New(now.Add(-age)),
			ActivityOptions: &activitypb.ActivityOptions{TaskQueue: &taskqueuepb.TaskQueue{Name: queue}}}
	}
	const why = "worker oldworker1 stopped and handed the table over"
	for _, c := range []struct {
		what    string
		unowned string
		p       *workflowpb.PendingActivityInfo
		want    string
	}{
		{"waiting 12.7 s", why, claim("ClaimTable", enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, "lakemirror", 12700*time.Millisecond),
			"waiting for a worker to take the table: worker oldworker1 stopped and handed the table over (for 12 s)"},
		{"just scheduled", why, claim("ClaimTable", enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, "lakemirror", 500*time.Millisecond), ""},
		{"started", why, claim("ClaimTable", enumspb.PENDING_ACTIVITY_STATE_STARTED, "lakemirror", 10*time.Second), ""},
		{"another activity", why, claim("PlanBatch", enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, "lakemirror", 10*time.Second), ""},
		{"no reason known", "", claim("ClaimTable", enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, "lakemirror", 10*time.Second), ""},
	} {
		if got := claimReason(c.unowned, []*workflowpb.PendingActivityInfo{c.p}, now); got != c.want {
			t.Errorf("%s: %q, want %q", c.what, got, c.want)
		}
	}
}

// TestWorkerLine: status names the table's worker and how the table
// moved; a table without a worker says why; a table never claimed has no
// worker line.
func TestWorkerLine(t *testing.T) {
	for _, c := range []struct {
		st   workflows.Status
		want string
	}{
		{workflows.Status{Owner: "lakemirror@newworker2", Claims: 2, StopHandOvers: 1},
			"newworker2 (claims 2; hand-overs: 1 on a worker's stop, 0 by timeout; releases 0; heartbeats lost 0)"},
		{workflows.Status{Claims: 1, StopHandOvers: 1, Unowned: "worker oldworker1 stopped and handed the table over"},
			"none (worker oldworker1 stopped and handed the table over) (claims 1; hand-overs: 1 on a worker's stop, 0 by timeout; releases 0; heartbeats lost 0)"},
		{workflows.Status{Owner: "lakemirror@w3", Claims: 4, HandOvers: 1, Releases: 1, HeartbeatsLost: 2},
			"w3 (claims 4; hand-overs: 0 on a worker's stop, 1 by timeout; releases 1; heartbeats lost 2)"},
		{workflows.Status{}, ""},
	} {
		if got := workerLine(c.st); got != c.want {
			t.Errorf("%+v: %q, want %q", c.st, got, c.want)
		}
	}
}

// TestStatusWaitingForHandOver: a table whose worker stops gracefully
// while another runs (a rolling restart under another worker id) is
// handed over at once, not after a timeout: status shows plain "stream"
// with the new worker on its worker line, one hand-over on a worker's
// stop, none by timeout and no heartbeat lost. (While no worker runs at
// all, the status query gets no answer and says so; a table whose claim
// waits while workers run shows "waiting for a worker to take the table:
// worker X stopped and handed the table over (for N s)", TestClaimReason.)
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
	_, out, _ := cli(t, append([]string{"status", "ho.orders"}, args...)...)
	if !regexp.MustCompile(`(?m)^worker +oldworker1 \(claims 1; hand-overs: 0 on a worker's stop, 0 by timeout; releases 0; heartbeats lost 0\)$`).MatchString(out) {
		t.Fatalf("before the stop:\n%s", out)
	}
	s.WorkerID = "newworker2"
	second, err := runner.Start(context.Background(), s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Stop()
	defer func() {
		_ = second.Client.TerminateWorkflow(context.Background(), "lakemirror-table-ho.orders", "", "test ends")
	}()
	first.Stop()
	waitUntil(t, "the new worker taking the table", func() bool {
		stat := statusOf(t, second.Client, "ho.orders")
		return stat.Owner == runner.WorkerQueue("newworker2")
	})
	_, out, _ = cli(t, append([]string{"status", "ho.orders"}, args...)...)
	if !regexp.MustCompile(`(?m)^phase +stream$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^worker +newworker2 \(claims 2; hand-overs: 1 on a worker's stop, 0 by timeout; releases 0; heartbeats lost 0\)$`).MatchString(out) {
		t.Fatalf("after the hand-over:\n%s", out)
	}
}
