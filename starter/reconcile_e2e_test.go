//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/validation"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/internal/source/pgtest"
	"github.com/lakemirror/lakemirror/internal/telemetry"
	"github.com/lakemirror/lakemirror/workflows"
)

// `starter reconcile` through the real ReconcileWorkflow on the embedded
// stack against a private PostgreSQL: a mirror streamed from the topic
// agrees with the source table (exit 0); a delete at the source whose
// event is lost is a ghost row named by key (exit 1, the findings gauge
// 1); --repair soft-deletes it and the next run passes. `schedule
// --reconcile-every` puts it on a Temporal Schedule against the source's
// name on the worker (recdb): each triggered run writes its rows under its
// own run id; a DSN is refused; --pause, --unpause, --reconcile-every 0,
// --delete and drop act on it.
func TestReconcileCommand(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	dsn := pg.CreateDatabase(t)
	s := startStackSources(t, map[string]string{"recdb": dsn})
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	exec(`CREATE TABLE public.orders (order_id int PRIMARY KEY, status text NOT NULL);
		INSERT INTO public.orders VALUES (1, 'paid'), (2, 'new'), (3, 'new')`)
	const topic, table = "rec.public.orders", "rec.orders"
	if err := s.r.Kafka.CreateTopic(ctx, topic, 1); err != nil {
		t.Fatal(err)
	}
	pgc := sample.PostgresChange
	order := func(id int, status string) string { return fmt.Sprintf(`{"order_id":%d,"status":%q}`, id, status) }
	for _, m := range []sample.Message{pgc("c", "null", order(1, "new"), 100), pgc("c", "null", order(2, "new"), 110),
		pgc("c", "null", order(3, "new"), 115), pgc("u", order(1, "new"), order(1, "paid"), 120)} {
		if err := s.r.Kafka.Produce(ctx, &kgo.Record{Topic: topic, Value: m.Value}); err != nil {
			t.Fatal(err)
		}
	}
	if out, errw, code := s.cli("start", topic, "--table", table, "--key", "order_id", "--schedules=false"); code != exitOK {
		t.Fatalf("start: exit %d\n%s%s", code, out, errw)
	}
	waitFor(t, time.Minute, table+" at offset 4", func() bool {
		st := statusOf(t, s.r.Client, table)
		return st.Offsets[0] == 4 && st.LastBatch != nil
	})
	// the sample events' commit times are months old: the measured p99
	// is capped
	reconcile := func(extra ...string) (string, string, int) {
		return s.cli(append([]string{"reconcile", table, "--source", dsn, "--source-table", "public.orders",
			"--chunk", "2", "--pause", "0", "--settle-floor", "0", "--settle-max", "10ms"}, extra...)...)
	}
	out, errw, code := reconcile()
	for _, want := range []string{"PASS reconcile-ghost   0 ghost rows\n", "PASS reconcile-missing 0 missing rows\n",
		"PASS reconcile-changed 0 changed rows\n", "PASS op-balance        3 creates − 0 deletes = 3; 3 live mirror rows; 0 keys disagree\n",
		"2 key ranges (0 differed), 3 source rows, 3 live mirror rows; 0 keys re-read, 0 unsettled\n", "settling period 10ms (p99 of recent source-commit-to-apply delays ", "; capped by --settle-max)\n"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Fatalf("a clean table: exit %d, want %q in\n%s%s", code, want, out, errw)
		}
	}

	exec(`DELETE FROM public.orders WHERE order_id = 2`) // its event is lost
	out, errw, code = reconcile()
	key := "order_id=2"
	if code != exitFailure || !strings.Contains(out, "FAIL reconcile-ghost   1 ghost rows\n       key "+key+": live in the mirror (_seq "+cdc.SeqOf(110, 110).Hex()+"), absent from the source (read at ") ||
		!strings.Contains(errw, "1 of 4 checks failed") {
		t.Fatalf("after a lost delete: exit %d\n%s%s", code, out, errw)
	}
	if got := gauge(t, s, telemetry.MetricValFindings, "reconcile-ghost"); got != 1 {
		t.Fatalf("%s{check=reconcile-ghost} = %g, want 1", telemetry.MetricValFindings, got)
	}

	out, errw, code = reconcile("--repair")
	if code != exitFailure || !strings.Contains(out, "PASS reconcile-repair  repaired 1 ghost rows (soft-deleted), 0 missing rows, 0 changed rows at source position ") ||
		!strings.Contains(out, "       key "+key+": repaired (reconcile-ghost)\n") {
		t.Fatalf("--repair: exit %d\n%s%s", code, out, errw)
	}
	out, errw, code = reconcile()
	if code != exitOK || !strings.Contains(out, "PASS op-balance        3 creates − 1 deletes = 2; 2 live mirror rows; 0 keys disagree\n") {
		t.Fatalf("after the repair: exit %d\n%s%s", code, out, errw)
	}
	if got := gauge(t, s, telemetry.MetricValFindings, "reconcile-ghost"); got != 0 {
		t.Fatalf("%s{check=reconcile-ghost} = %g, want 0", telemetry.MetricValFindings, got)
	}
	// status shows the last reconciliation run
	out, errw, code = s.cli("status", table)
	if code != exitOK || !regexp.MustCompile(`\nlast reconciliation +\S+: 4 checks, all passed\n`).MatchString(out) || strings.Contains(out, "last validation") {
		t.Fatalf("status: exit %d\n%s%s", code, out, errw)
	}

	testReconcileSchedule(t, s, dsn)
}

// testReconcileSchedule is TestReconcileCommand's schedule part, on its
// table rec.orders (started without --source; the worker maps recdb to
// the source database dsn), clean after the repair.
func testReconcileSchedule(t *testing.T, s *e2eStack, dsn string) {
	ctx := context.Background()
	const table, id = "rec.orders", "lakemirror-reconcile-rec.orders"
	sc := s.r.Client.ScheduleClient()
	h := sc.GetHandle(ctx, id)
	gone := func(what string) {
		t.Helper()
		var nf *serviceerror.NotFound
		if _, err := h.Describe(ctx); !errors.As(err, &nf) {
			t.Fatalf("%s: describe %s: %v, want not found", what, id, err)
		}
	}
	// refused: a DSN (not repeated), no source to default to
	out, errw, code := s.cli("schedule", table, "--reconcile-every", "1h", "--reconcile-source", dsn, "--reconcile-source-table", "public.orders")
	if code != exitUsage || out != "" || errw != "starter: --reconcile-source is a DSN: a schedule stores its request, credentials included; give a source name the worker maps to the DSN (worker -sources name=dsn)\n" {
		t.Fatalf("a DSN: exit %d\n%s%s", code, out, errw)
	}
	out, errw, code = s.cli("schedule", table, "--reconcile-every", "1h")
	if code != exitUsage || out != "" || errw != "starter: rec.orders was started without --source: give --reconcile-source NAME, a source database the worker maps to a DSN (-sources name=dsn)\n" {
		t.Fatalf("no source: exit %d\n%s%s", code, out, errw)
	}
	gone("after the refusals")

	schedule := func(every string, extra ...string) {
		t.Helper()
		out, errw, code := s.cli(append([]string{"schedule", table, "--reconcile-every", every, "--reconcile-source", "recdb", "--reconcile-source-table", "public.orders"}, extra...)...)
		want := "schedule " + id + ": reconcile every " + every + " against source recdb, table public.orders\n"
		if len(extra) > 0 {
			want = strings.TrimSuffix(want, "\n") + ", repairing differences\n"
		}
		if code != exitOK || out != want {
			t.Fatalf("schedule --reconcile-every %s %v: exit %d, stdout %q, want %q\n%s", every, extra, code, out, want, errw)
		}
	}
	// the schedule: its interval, overlap policy, memo and action (the
	// ReconcileWorkflow of the table's spec with reconcile's defaults)
	spec := statusOf(t, s.r.Client, table).Spec
	describe := func(every time.Duration, repair bool) *client.ScheduleDescription {
		t.Helper()
		d, err := h.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		act, ok := d.Schedule.Action.(*client.ScheduleWorkflowAction)
		if !ok || act.ID != id+"-run" || act.Workflow != workflows.ReconcileWorkflowName || act.TaskQueue != activities.TaskQueue || len(act.Args) != 1 {
			t.Fatalf("action %+v", d.Schedule.Action)
		}
		var req activities.ReconcileRequest
		if p, ok := act.Args[0].(*commonpb.Payload); !ok || converter.GetDefaultDataConverter().FromPayload(p, &req) != nil {
			t.Fatalf("action args %v", act.Args)
		}
		want := activities.ReconcileRequest{Spec: spec, Source: "recdb", SourceTable: "public.orders", Chunk: 1000, Pause: 100 * time.Millisecond,
			SettleFloor: 30 * time.Second, SettleCeiling: time.Hour, CatchUpTimeout: time.Hour, Repair: repair}
		if got, want := mustJSON(t, req), mustJSON(t, want); got != want {
			t.Fatalf("scheduled request\n%s\nwant\n%s", got, want)
		}
		if iv := d.Schedule.Spec.Intervals; len(iv) != 1 || iv[0].Every != every || iv[0].Offset != 0 {
			t.Fatalf("intervals %+v, want every %s", iv, every)
		}
		if d.Schedule.Policy.Overlap != enumspb.SCHEDULE_OVERLAP_POLICY_SKIP {
			t.Fatalf("overlap %s, want skip", d.Schedule.Policy.Overlap)
		}
		memo := map[string]string{}
		for k, p := range d.Memo.GetFields() {
			var v string
			_ = converter.GetDefaultDataConverter().FromPayload(p, &v)
			memo[k] = v
		}
		if !maps.Equal(memo, map[string]string{"table": table, "job": "reconcile"}) {
			t.Fatalf("memo %v", memo)
		}
		return d
	}
	schedule("1h0m0s")
	describe(time.Hour, false)

	// two triggered runs (a second apart: the run id is the action id and
	// the start time to the second), each its own run id in the
	// validation table, every check passing
	var runIDs []string
	for n := 1; n <= 2; n++ {
		if err := h.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
			t.Fatal(err)
		}
		var d *client.ScheduleDescription
		waitFor(t, time.Minute, fmt.Sprintf("scheduled reconciliation run %d", n), func() bool {
			var err error
			d, err = h.Describe(ctx)
			return err == nil && d.Info.NumActions == n && len(d.Info.RunningWorkflows) == 0
		})
		wid := d.Info.RecentActions[len(d.Info.RecentActions)-1].StartWorkflowResult.WorkflowID
		var res activities.ReconcileResult
		if err := s.r.Client.GetWorkflow(ctx, wid, "").Get(ctx, &res); err != nil {
			t.Fatalf("run %s: %v", wid, err)
		}
		var checks []string
		for _, c := range res.Checks {
			checks = append(checks, c.Check+" "+c.Verdict)
		}
		if res.RunID != wid || res.Table != table || res.Failed != 0 || res.Scope.SourceTable != "public.orders" || res.Scope.SourceRows != 2 || res.Scope.MirrorLive != 2 ||
			strings.Join(checks, ", ") != "reconcile-ghost pass, reconcile-missing pass, reconcile-changed pass, op-balance pass" {
			t.Fatalf("scheduled run %s: %+v", wid, res)
		}
		runIDs = append(runIDs, wid)
		time.Sleep(time.Second)
	}
	runID := regexp.MustCompile(`^lakemirror-reconcile-rec\.orders-run-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)
	if !runID.MatchString(runIDs[0]) || !runID.MatchString(runIDs[1]) || runIDs[0] == runIDs[1] {
		t.Fatalf("scheduled run ids %q", runIDs)
	}
	name, _ := lake.ParseTableName(table)
	rows, _, err := lake.ReadRows(ctx, mustLoad(t, s, name), nil)
	if err != nil {
		t.Fatal(err)
	}
	byRun := map[string][]string{}
	for _, r := range rows {
		if rid, _ := r[validation.ValRunID].(string); strings.HasPrefix(rid, id+"-run-") {
			byRun[rid] = append(byRun[rid], fmt.Sprint(r[validation.ValCheck], " ", r[validation.ValVerdict]))
		}
	}
	for _, rid := range runIDs {
		slices.Sort(byRun[rid])
	}
	want := []string{"op-balance pass", "reconcile-changed pass", "reconcile-ghost pass", "reconcile-missing pass"}
	if len(byRun) != 2 || !slices.Equal(byRun[runIDs[0]], want) || !slices.Equal(byRun[runIDs[1]], want) {
		t.Fatalf("the scheduled runs' validation rows %v, want %v for each of %q", byRun, want, runIDs)
	}

	// --pause and --unpause cover it (the table's only schedule)
	out, errw, code = s.cli("schedule", table, "--pause")
	if d := describe(time.Hour, false); code != exitOK || out != "paused schedule "+id+"\n" || !d.Schedule.State.Paused {
		t.Fatalf("--pause: exit %d, paused %v\n%s%s", code, d.Schedule.State.Paused, out, errw)
	}
	out, errw, code = s.cli("schedule", table, "--unpause")
	if d := describe(time.Hour, false); code != exitOK || out != "unpaused schedule "+id+"\n" || d.Schedule.State.Paused {
		t.Fatalf("--unpause: exit %d, paused %v\n%s%s", code, d.Schedule.State.Paused, out, errw)
	}
	// given again: updated in place (its runs kept)
	schedule("2h0m0s", "--reconcile-repair")
	if d := describe(2*time.Hour, true); d.Info.NumActions != 2 {
		t.Fatalf("after the update: %d actions, want 2", d.Info.NumActions)
	}
	// --reconcile-every 0 and --delete delete it
	out, errw, code = s.cli("schedule", table, "--reconcile-every", "0")
	if code != exitOK || out != "deleted schedule "+id+"\n" {
		t.Fatalf("--reconcile-every 0: exit %d\n%s%s", code, out, errw)
	}
	gone("--reconcile-every 0")
	schedule("1h0m0s")
	out, errw, code = s.cli("schedule", table, "--delete")
	if code != exitOK || out != "deleted schedule "+id+"\n" {
		t.Fatalf("--delete: exit %d\n%s%s", code, out, errw)
	}
	gone("--delete")
	// drop deletes it with the pipeline
	schedule("1h0m0s")
	out, errw, code = s.cli("drop", table, "--yes")
	if want := "drop rec.orders:\n  stop the pipeline (workflow lakemirror-table-rec.orders, running) and wait for it to complete\n  delete schedule " + id + "\n" +
		"stopped rec.orders\ndeleted schedule " + id + "\n"; code != exitOK || out != want {
		t.Fatalf("drop: exit %d, stdout %q, want %q\n%s", code, out, want, errw)
	}
	gone("drop")
}

// mustJSON is v as JSON.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// gauge reads the worker's gauge name for check (table rec.orders).
func gauge(t *testing.T, s *e2eStack, name, check string) float64 {
	t.Helper()
	fams, err := s.r.Metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["check"] == check && labels["table"] == "rec.orders" {
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no %s{check=%q}", name, check)
	return 0
}
