package main

import (
	"testing"
	"time"

	activitypb "go.temporal.io/api/activity/v1"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

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

// TestBuildReason: a running activity whose last heartbeat says it waits
// for the table's local state to be built gives that as the reason;
// another running activity's detail, a scheduled one or one without
// details gives none.
func TestBuildReason(t *testing.T) {
	const building = "building the local state from the tables: 1310720 rows read, 0 keys written in 1m12s (stage prepare)"
	act := func(state enumspb.PendingActivityState, detail any) *workflowpb.PendingActivityInfo {
		p := &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: "ApplyBatch"}, State: state}
		if detail != nil {
			d, err := converter.GetDefaultDataConverter().ToPayloads(detail)
			if err != nil {
				t.Fatal(err)
			}
			p.HeartbeatDetails = d
		}
		return p
	}
	for _, c := range []struct {
		what string
		p    *workflowpb.PendingActivityInfo
		want string
	}{
		{"building", act(enumspb.PENDING_ACTIVITY_STATE_STARTED, building), building},
		{"another stage", act(enumspb.PENDING_ACTIVITY_STATE_STARTED, "mirror"), ""},
		{"scheduled", act(enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, building), ""},
		{"no heartbeat", act(enumspb.PENDING_ACTIVITY_STATE_STARTED, nil), ""},
		{"not a string", act(enumspb.PENDING_ACTIVITY_STATE_STARTED, 7), ""},
	} {
		if got := buildReason([]*workflowpb.PendingActivityInfo{c.p}); got != c.want {
			t.Errorf("%s: %q, want %q", c.what, got, c.want)
		}
	}
}

// TestStalledPlanReason: records wait (lag read from Kafka) while the
// owner's PlanBatch has run past MaxWait + planSettle: a live worker
// would have returned them, so status says the table waits for its
// worker to be taken as gone, with the heartbeat's silence and the time
// left; nothing while the plan may still be filling its batch, without
// lag, for another queue or activity, or a plan not started.
func TestStalledPlanReason(t *testing.T) {
	now := time.Date(2026, 12, 5, 4, 0, 0, 0, time.UTC)
	const owner = "lakemirror@wb2"
	plan := func(name string, state enumspb.PendingActivityState, queue string, started, heartbeat time.Duration) *workflowpb.PendingActivityInfo {
		p := &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: name}, State: state,
			LastStartedTime: timestamppb.New(now.Add(-started)),
			ActivityOptions: &activitypb.ActivityOptions{TaskQueue: &taskqueuepb.TaskQueue{Name: queue}, HeartbeatTimeout: durationpb.New(60 * time.Second)}}
		if heartbeat > 0 {
			p.LastHeartbeatTime = timestamppb.New(now.Add(-heartbeat))
		}
		return p
	}
	started := enumspb.PENDING_ACTIVITY_STATE_STARTED
	for _, c := range []struct {
		what string
		lag  int64
		p    *workflowpb.PendingActivityInfo
		want string
	}{
		{"an idle plan's worker killed 35 s after its last heartbeat", 134, plan("PlanBatch", started, owner, 5*time.Minute, 35*time.Second),
			"waiting for hand-over from worker wb2 (up to 25 s left): 134 records wait, but its plan has not returned; its last heartbeat was 35 s ago, and a worker silent for 60 s is taken as gone"},
		{"no heartbeat yet", 1, plan("PlanBatch", started, owner, 20*time.Second, 0),
			"waiting for hand-over from worker wb2 (up to 40 s left): 1 record waits, but its plan has not returned; its last heartbeat was 20 s ago, and a worker silent for 60 s is taken as gone"},
		{"due", 5, plan("PlanBatch", started, owner, 5*time.Minute, 61*time.Second),
			"waiting for hand-over from worker wb2 (up to 0 s left): 5 records wait, but its plan has not returned; its last heartbeat was 61 s ago, and a worker silent for 60 s is taken as gone"},
		{"the plan may still be filling its batch", 134, plan("PlanBatch", started, owner, 5*time.Second, 0), ""},
		{"no lag", 0, plan("PlanBatch", started, owner, 5*time.Minute, 35*time.Second), ""},
		{"another queue", 134, plan("PlanBatch", started, "lakemirror@other", 5*time.Minute, 35*time.Second), ""},
		{"a batch applying", 134, plan("ApplyBatch", started, owner, 5*time.Minute, 35*time.Second), ""},
		{"scheduled, not started", 134, plan("PlanBatch", enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, owner, 5*time.Minute, 0), ""},
	} {
		if got := stalledPlanReason(owner, c.lag, time.Second, []*workflowpb.PendingActivityInfo{c.p}, now); got != c.want {
			t.Errorf("%s:\n%q\nwant\n%q", c.what, got, c.want)
		}
	}
}
