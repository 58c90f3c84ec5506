//go:build e2e

package runner

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/internal/source/pgtest"
	"github.com/lakemirror/lakemirror/workflows"
)

// TestRecordReplayHistories records the histories of table workflows on
// the embedded server, for the replay test (workflows/replay_test.go):
// a stream with late keys (batches and rebuilds), a table blocked by the
// quarantine limit that is retried, still fails and is stopped, and a
// pause and resume followed by a settings update, (from v5) a table
// handed over from a stopped worker to another, (from v10) an idle
// table handed over the same way, (from v13) a table of a source group
// and its GroupWorkflow, and (from v15) a group without a transaction
// topic taking a cut per position and one of its tables. The workflows start
// with the spec in the memo, as `starter start` starts them. It runs only
// when asked:
//
//	LAKEMIRROR_RECORD_REPLAY=workflows/testdata/replay LAKEMIRROR_RECORD_PREFIX=v2- \
//	  go test -tags e2e -run TestRecordReplayHistories ./worker/runner/
//
// Histories of a commit's workflows are kept so that later workflow code
// must replay them (docs/design.md, "Exactly-once batch bookkeeping").
func TestRecordReplayHistories(t *testing.T) {
	dir := os.Getenv("LAKEMIRROR_RECORD_REPLAY")
	if dir == "" {
		t.Skip("LAKEMIRROR_RECORD_REPLAY not set")
	}
	prefix := os.Getenv("LAKEMIRROR_RECORD_PREFIX")
	r := startRunner(t)
	stopped := map[*Runner]bool{}
	defer func() {
		if !stopped[r] {
			r.Stop()
		}
	}()
	ctx := context.Background()
	starter := r.Client // the client workflows are started with (a running worker's)
	start := func(spec activities.TableSpec) {
		_, err := starter.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: workflows.WorkflowID(spec.Table), TaskQueue: activities.TaskQueue, WorkflowExecutionErrorWhenAlreadyStarted: true,
			TypedSearchAttributes: temporal.NewSearchAttributes(
				temporal.NewSearchAttributeKeyKeyword("LakemirrorTable").ValueSet(spec.Table),
				temporal.NewSearchAttributeKeyKeyword("LakemirrorTopic").ValueSet(spec.Topic)),
			Memo: map[string]any{"spec": spec},
		}, workflows.TableWorkflowName, workflows.TableInput{Spec: spec})
		if err != nil {
			t.Fatal(err)
		}
	}
	save := func(table, name string) {
		saveHistory(t, r.Client, workflows.WorkflowID(table), filepath.Join(dir, prefix+name+".json"))
	}

	// batches and late-key rebuilds, stopped
	stream := faultyStream(31)
	spec := activities.TableSpec{Table: "replay.stream", Topic: "replay.public.stream", KeyColumns: []string{"order_id"}, MaxEvents: 20, MaxWait: 200 * time.Millisecond}
	ends := produce(t, r, spec.Topic, 1, stream.Delivered)
	start(spec)
	waitCaughtUp(t, r.Client, spec.Table, ends)
	stopWorkflow(t, r.Client, spec.Table)
	save(spec.Table, "stream")

	// blocked by the quarantine limit, retried (blocked again), stopped
	bad := activities.TableSpec{Table: "replay.blocked", Topic: "replay.public.blocked", KeyColumns: []string{"order_id"}, MaxEvents: 20, MaxWait: 200 * time.Millisecond, MaxQuarantine: 1}
	produce(t, r, bad.Topic, 1, []sample.Message{{Value: []byte("not json")}, {Value: []byte("{nor this")}})
	start(bad)
	waitFor(t, "blocked", func() bool { return status(t, r.Client, bad.Table).Phase == workflows.PhaseBlocked })
	if err := r.Client.SignalWorkflow(ctx, workflows.WorkflowID(bad.Table), "", workflows.SignalRetry, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	waitFor(t, "blocked again", func() bool { return status(t, r.Client, bad.Table).Phase == workflows.PhaseBlocked })
	stopWorkflow(t, r.Client, bad.Table)
	save(bad.Table, "blocked")

	// paused and resumed between batches, stopped
	ps := activities.TableSpec{Table: "replay.paused", Topic: "replay.public.paused", KeyColumns: []string{"order_id"}, MaxEvents: 20, MaxWait: 200 * time.Millisecond}
	half := len(stream.Delivered) / 2
	produce(t, r, ps.Topic, 1, stream.Delivered[:half])
	start(ps)
	waitFor(t, "some batches", func() bool { return status(t, r.Client, ps.Table).Totals.Batches > 2 })
	signal := func(sig string) {
		if err := r.Client.SignalWorkflow(ctx, workflows.WorkflowID(ps.Table), "", sig, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
	}
	runID := func() string {
		d, err := r.Client.DescribeWorkflowExecution(ctx, workflows.WorkflowID(ps.Table), "")
		if err != nil {
			t.Fatal(err)
		}
		return d.WorkflowExecutionInfo.Execution.RunId
	}
	signal(workflows.SignalPause)
	pausedRun := runID()
	ten := 10 // a settings update while paused (the memo follows it from v4 on; from v12 the run continues as new)
	h, err := r.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: workflows.WorkflowID(ps.Table), UpdateName: workflows.UpdateSettings,
		Args: []any{workflows.SettingsRequest{SettingsChange: payload.SettingsChange{MaxEvents: &ten}}}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	signal(workflows.SignalResume)
	stopWorkflow(t, r.Client, ps.Table)
	save(ps.Table, "paused")
	if runID() != pausedRun { // the run the update ended (v12 on): paused, the update, continued as new
		saveRunHistory(t, r.Client, workflows.WorkflowID(ps.Table), pausedRun, filepath.Join(dir, prefix+"settings.json"))
	}

	// (from v13) a table of a source group: after each batch it reports
	// to the group's workflow (group-report marker), which reads the
	// group's transaction topic every 2 s; (from v14) the group takes a
	// cut in the table (cut-publish marker: freeze, bound, PublishCut,
	// release; the END touches no table of the group, so the cut is
	// complete at once); the table stopped, the group's workflow
	// terminated, both saved. (From v16) the table names its source
	// table: its events are of public.orders, and the group confirms a
	// named collection (cut-unconfirmed marker)
	gs := activities.TableSpec{Table: "replay.grouped", Topic: "replay.public.grouped", KeyColumns: []string{"order_id"}, MaxEvents: 20, MaxWait: 200 * time.Millisecond,
		Group: "replay", TransactionTopic: "replay.transaction", SourceTable: "public.orders"}
	produce(t, r, gs.TransactionTopic, 1, []sample.Message{{Value: []byte(`{"status":"END","id":"571:53195832","event_count":1,"data_collections":[{"data_collection":"public.other","event_count":1}],"ts_ms":1486500577691}`)}})
	groupID := workflows.GroupWorkflowID(gs.Group)
	if _, err := starter.SignalWithStartWorkflow(ctx, groupID, workflows.SignalGroupRegister, workflows.GroupMemberOf(gs),
		client.StartWorkflowOptions{ID: groupID, TaskQueue: activities.TaskQueue}, workflows.GroupWorkflowName,
		workflows.GroupInput{Group: gs.Group, TransactionTopic: gs.TransactionTopic, CutEvery: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	ends = produce(t, r, gs.Topic, 1, stream.Delivered[:half])
	start(gs)
	waitCaughtUp(t, r.Client, gs.Table, ends)
	waitFor(t, "the group's reports and read", func() bool {
		v, err := r.Client.QueryWorkflow(ctx, groupID, "", workflows.QueryCut)
		if err != nil {
			t.Fatal(err)
		}
		var c workflows.GroupCut
		if err := v.Get(&c); err != nil {
			t.Fatal(err)
		}
		return c.Ends == 1 && c.Reports >= 2 && c.Published != nil
	})
	stopWorkflow(t, r.Client, gs.Table)
	save(gs.Table, "grouped")
	if err := r.Client.TerminateWorkflow(ctx, groupID, "", "recorded"); err != nil {
		t.Fatal(err)
	}
	saveHistory(t, r.Client, groupID, filepath.Join(dir, prefix+"group.json"))

	// (from v15) a source group without a transaction topic cuts per
	// position (cut-per-position marker): posa (changes at LSN 100 and
	// 102) and posb (101) report, the group freezes them and bounds them
	// at posa's watermark, 102; posb holds the cut until a change at 105
	// arrives, which its bounded batch stops before (cut-held-report
	// marker: it reports partition 0 fetched past W); then PublishCut and
	// the release. posb stopped, the group terminated, both saved; the
	// group's memo is upserted along the way
	pa := activities.TableSpec{Table: "replay.posa", Topic: "replay.public.posa", KeyColumns: []string{"id"}, MaxEvents: 20, MaxWait: 200 * time.Millisecond, Group: "replaypos"}
	pb := activities.TableSpec{Table: "replay.posb", Topic: "replay.public.posb", KeyColumns: []string{"id"}, MaxEvents: 20, MaxWait: 200 * time.Millisecond, Group: "replaypos"}
	posID := workflows.GroupWorkflowID(pa.Group)
	for _, sp := range []activities.TableSpec{pa, pb} {
		if _, err := starter.SignalWithStartWorkflow(ctx, posID, workflows.SignalGroupRegister, workflows.GroupMemberOf(sp),
			client.StartWorkflowOptions{ID: posID, TaskQueue: activities.TaskQueue}, workflows.GroupWorkflowName,
			workflows.GroupInput{Group: pa.Group, CutEvery: 2 * time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	change := func(lsn int) sample.Message {
		m := sample.PostgresChange("u", "null", `{"id":1,"v":`+strconv.Itoa(lsn)+`}`, lsn)
		m.Key = []byte(`{"id":1}`)
		return m
	}
	endsA := produce(t, r, pa.Topic, 1, []sample.Message{change(100), change(102)})
	endsB := produce(t, r, pb.Topic, 1, []sample.Message{change(101)})
	start(pa)
	start(pb)
	waitCaughtUp(t, r.Client, pa.Table, endsA)
	waitCaughtUp(t, r.Client, pb.Table, endsB)
	posCut := func() workflows.GroupCut {
		v, err := r.Client.QueryWorkflow(ctx, posID, "", workflows.QueryCut)
		if err != nil {
			t.Fatal(err)
		}
		var c workflows.GroupCut
		if err := v.Get(&c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	waitFor(t, "the cut per position bound", func() bool { p := posCut().Pending; return p != nil && p.W != "" })
	time.Sleep(6 * time.Second) // posb held: a bounded batch that applies nothing, polled again
	if err := r.Kafka.Produce(ctx, &kgo.Record{Topic: pb.Topic, Key: []byte(`{"id":1}`), Value: change(105).Value}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the cut per position published", func() bool { return posCut().Published != nil })
	time.Sleep(2 * time.Second) // posb released, applies 105
	stopWorkflow(t, r.Client, pa.Table)
	stopWorkflow(t, r.Client, pb.Table)
	save(pb.Table, "posgrouped")
	if err := r.Client.TerminateWorkflow(ctx, posID, "", "recorded"); err != nil {
		t.Fatal(err)
	}
	saveHistory(t, r.Client, posID, filepath.Join(dir, prefix+"posgroup.json"))

	// routed (from v5): claimed by one of two workers, which stops; the
	// table is handed over to the other (schedule-to-start timeout, a new
	// claim), stopped
	ho := activities.TableSpec{Table: "replay.handover", Topic: "replay.public.handover", KeyColumns: []string{"order_id"}, MaxEvents: 20, MaxWait: 200 * time.Millisecond}
	r2 := startRunner(t)
	defer func() {
		if !stopped[r2] {
			r2.Stop()
		}
	}()
	produce(t, r, ho.Topic, 1, stream.Delivered[:half])
	start(ho)
	waitFor(t, "some batches", func() bool { return status(t, r.Client, ho.Table).Totals.Batches > 2 })
	first, second := r, r2
	if status(t, r.Client, ho.Table).Owner == WorkerQueue(r2.WorkerID) {
		first, second = r2, r
	}
	first.Stop()
	stopped[first] = true
	ends = produceMore(t, second, ho.Topic, stream.Delivered[half:])
	waitCaughtUpWithin(t, second.Client, ho.Table, ends, 4*time.Minute)
	stopWorkflow(t, second.Client, ho.Table)
	saveHistory(t, second.Client, workflows.WorkflowID(ho.Table), filepath.Join(dir, prefix+"handover.json"))

	// (from v10) an idle table's worker stops gracefully: its idle plan
	// returns with Leaving, the other worker claims the table and applies
	// a record produced after the stop; stopped
	idle := activities.TableSpec{Table: "replay.handoveridle", Topic: "replay.public.handoveridle", KeyColumns: []string{"order_id"}, MaxEvents: 20, MaxWait: 200 * time.Millisecond}
	third := startRunner(t)
	defer func() {
		if !stopped[third] {
			third.Stop()
		}
	}()
	ends = produce(t, second, idle.Topic, 1, stream.Delivered[:5])
	starter = second.Client
	start(idle)
	waitCaughtUp(t, second.Client, idle.Table, ends)
	owner, other := second, third
	if status(t, second.Client, idle.Table).Owner == WorkerQueue(third.WorkerID) {
		owner, other = third, second
	}
	waitFor(t, "an idle plan", func() bool { return idlePlanning(t, other.Client, idle.Table, WorkerQueue(owner.WorkerID)) })
	owner.Stop()
	stopped[owner] = true
	ends = produceMore(t, other, idle.Topic, stream.Delivered[5:6])
	waitCaughtUpWithin(t, other.Client, idle.Table, ends, 4*time.Minute)
	stopWorkflow(t, other.Client, idle.Table)
	saveHistory(t, other.Client, workflows.WorkflowID(idle.Table), filepath.Join(dir, prefix+"handover-idle.json"))
}

// TestRecordReplayMaintenance records, beside TestRecordReplayHistories
// and asked the same way, the history of a MaintenanceWorkflow
// (compaction) run on a streamed table, as <prefix>maintenance.json.
func TestRecordReplayMaintenance(t *testing.T) {
	dir := os.Getenv("LAKEMIRROR_RECORD_REPLAY")
	if dir == "" {
		t.Skip("LAKEMIRROR_RECORD_REPLAY not set")
	}
	ctx := context.Background()
	r := startRunner(t)
	defer r.Stop()
	stream := faultyStream(31)
	spec := activities.TableSpec{Table: "replay.maint", Topic: "replay.public.maint", KeyColumns: []string{"order_id"}, MaxEvents: 20, MaxWait: 200 * time.Millisecond}
	ends := produce(t, r, spec.Topic, 1, stream.Delivered)
	startWorkflow(t, r.Client, spec)
	waitCaughtUp(t, r.Client, spec.Table, ends)
	id := "replay-maint-compact"
	run, err := r.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: activities.TaskQueue},
		workflows.MaintenanceWorkflowName, activities.MaintenanceRequest{Spec: spec.Defaults(), Job: activities.JobCompact})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	stopWorkflow(t, r.Client, spec.Table)
	saveHistory(t, r.Client, id, filepath.Join(dir, os.Getenv("LAKEMIRROR_RECORD_PREFIX")+"maintenance.json"))
}

// saveHistory writes the history of workflow id (its latest run) to
// path as JSON, the form client.HistoryFromJSON reads.
func saveHistory(t *testing.T, c client.Client, id, path string) {
	t.Helper()
	saveRunHistory(t, c, id, "", path)
}

// saveRunHistory writes the history of workflow id's run runID (the
// latest when "") to path, as saveHistory does.
func saveRunHistory(t *testing.T, c client.Client, id, runID, path string) {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), id, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var h historypb.History
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, e)
	}
	b, err := protojson.MarshalOptions{Indent: " "}.Marshal(&h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRecordReplayLoad records, beside TestRecordReplayHistories and
// asked the same way, the histories of table workflows with a direct
// initial load from a private PostgreSQL server: <prefix>load.json (a
// load in three chunks, then stopped) and, when
// LAKEMIRROR_RECORD_FAILING_LOAD is set (workflows with the
// load-visible-retries marker: before it a failing load could not be
// stopped), <prefix>load-failing.json (a load whose source database does
// not exist, shown retrying, stopped while retried).
func TestRecordReplayLoad(t *testing.T) {
	dir := os.Getenv("LAKEMIRROR_RECORD_REPLAY")
	if dir == "" {
		t.Skip("LAKEMIRROR_RECORD_REPLAY not set")
	}
	prefix := os.Getenv("LAKEMIRROR_RECORD_PREFIX")
	ctx := context.Background()
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	pgExec(t, dsn, `CREATE TABLE public.accounts (id bigint PRIMARY KEY, name text NOT NULL, amount numeric(12,2), created timestamptz)`,
		`INSERT INTO public.accounts SELECT i, 'acct-' || i, i * 1.5, '2001-01-01T00:00:00Z'::timestamptz + i * interval '1 hour' FROM generate_series(1, 12) i`)
	r := startRunner(t)
	defer r.Stop()
	r.Activities.Sources = map[string]string{"shopdb": dsn, "nosuch": strings.Replace(pg.DSN, "/postgres?", "/nosuchdb?", 1)}
	spec := activities.TableSpec{Table: "replay.load", Topic: "replay.public.load", KeyColumns: []string{"id"},
		Source: "shopdb", SourceTable: "public.accounts", LoadChunk: 5, MaxEvents: 20, MaxWait: 200 * time.Millisecond}
	if err := r.Kafka.CreateTopic(ctx, spec.Topic, 1); err != nil {
		t.Fatal(err)
	}
	startWorkflow(t, r.Client, spec)
	waitFor(t, "the load", func() bool { return status(t, r.Client, spec.Table).LastLoad != nil })
	stopWorkflow(t, r.Client, spec.Table)
	saveHistory(t, r.Client, workflows.WorkflowID(spec.Table), filepath.Join(dir, prefix+"load.json"))
	if os.Getenv("LAKEMIRROR_RECORD_FAILING_LOAD") == "" {
		return
	}
	bad := spec
	bad.Table, bad.Topic, bad.Source = "replay.loadfail", "replay.public.loadfail", "nosuch"
	if err := r.Kafka.CreateTopic(ctx, bad.Topic, 1); err != nil {
		t.Fatal(err)
	}
	startWorkflow(t, r.Client, bad)
	waitFor(t, "retrying", func() bool { return status(t, r.Client, bad.Table).Phase == workflows.PhaseRetrying })
	stopWorkflow(t, r.Client, bad.Table)
	saveHistory(t, r.Client, workflows.WorkflowID(bad.Table), filepath.Join(dir, prefix+"load-failing.json"))
}

// idlePlanning reports whether the table's workflow waits in an idle
// PlanBatch (started, with the idle heartbeat timeout of a minute) on
// queue.
func idlePlanning(t *testing.T, c client.Client, table, queue string) bool {
	t.Helper()
	desc, err := c.DescribeWorkflowExecution(context.Background(), workflows.WorkflowID(table), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range desc.GetPendingActivities() {
		if p.GetActivityType().GetName() == "PlanBatch" && p.GetState() == enums.PENDING_ACTIVITY_STATE_STARTED &&
			p.GetActivityOptions().GetTaskQueue().GetName() == queue && p.GetActivityOptions().GetHeartbeatTimeout().AsDuration() == time.Minute {
			return true
		}
	}
	return false
}
