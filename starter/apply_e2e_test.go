//go:build e2e

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/internal/devstack"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/worker/runner"
	"github.com/lakemirror/lakemirror/workflows"
)

// e2eStack is the embedded stack (Temporal, kfake, SQLite catalog) with a
// worker, started once per test.
type e2eStack struct {
	dev *devstack.Stack
	r   *runner.Runner
}

func startStack(t *testing.T) *e2eStack {
	t.Helper()
	return startStackSources(t, nil)
}

// startStackSources is startStack with a worker that maps the source
// names of sources to their DSNs (-sources).
func startStackSources(t *testing.T, sources map[string]string) *e2eStack {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := devstack.StartStack(ctx, devstack.StackOptions{UIPort: -1, SearchAttributes: workflows.SearchAttributeTypes})
	if err != nil {
		t.Fatal(err)
	}
	settings := d.Settings
	settings.Sources = sources
	r, err := runner.Start(ctx, settings, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		d.Stop()
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Stop(); d.Stop() })
	return &e2eStack{dev: d, r: r}
}

// cli runs starter against the stack.
func (s *e2eStack) cli(args ...string) (string, string, int) {
	st := s.dev.Settings
	return applyCLI(append([]string{"--temporal-address", st.TemporalAddress, "--namespace", st.Namespace,
		"--kafka-brokers", strings.Join(st.KafkaBrokers, ","), "--data-dir", st.DataDir}, args...)...)
}

// interventions counts the signals and accepted updates in a table
// workflow's history: what an operator (or apply) sent it.
func interventions(t *testing.T, c client.Client, table string) int {
	t.Helper()
	n := 0
	// every run of the table's workflow: a settings update ends its run,
	// which continues as new (the update is counted in the run it ended)
	for runID := ""; ; {
		it := c.GetWorkflowHistory(context.Background(), workflows.WorkflowID(table), runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		runID = ""
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
				runID = e.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
				n++
			}
		}
		if runID == "" {
			return n
		}
	}
}

// waitFor polls cond every 200 ms until it holds, failing after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

const manyTables = `defaults:
  namespace: app
  key: id
  batch_size: 100
  max_wait: 1s
  maintenance: {compact_every: "off", expire_every: "off", purge_every: "off"}
pipelines:
  - topic: srv.app.t00
    batch_size: 500
    max_batch_size: 5000
    maintenance:
      compact_every: 2h
  - topic: srv.legacy.orders
    table: legacy.orders
    key: order_id
    history: false
  - topic_glob: "srv.app.*"
    bronze: false
`

// apply on the embedded stack: a 50-table file in one command (49 topics
// by a glob, one overridden, one more explicit), a rerun that plans and
// sends nothing, one table's batch bounds changed, then --prune after one
// table left the file; list --all and drop on what remains.
func TestApplyFiftyTables(t *testing.T) {
	s := startStack(t)
	ctx := context.Background()
	c := s.r.Client
	var tables []string
	for i := range 49 {
		topic := fmt.Sprintf("srv.app.t%02d", i)
		if err := s.r.Kafka.CreateTopic(ctx, topic, 1); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, fmt.Sprintf("app.t%02d", i))
	}
	tables = append(tables, "legacy.orders")
	stream := sample.Generate(sample.Options{Seed: 3, Inserts: 30, Updates: 20, Deletes: 5, Envelope: true})
	if err := s.r.Kafka.CreateTopic(ctx, "srv.legacy.orders", 1); err != nil {
		t.Fatal(err)
	}
	for _, m := range stream.Delivered {
		if err := s.r.Kafka.Produce(ctx, &kgo.Record{Topic: "srv.legacy.orders", Key: m.Key, Value: m.Value}); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(t.TempDir(), "pipelines.yaml")
	write := func(src string) {
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(manyTables)

	// --dry-run plans 50 creates and starts nothing; without --yes and
	// without a terminal, apply refuses
	out, errw, code := s.cli("apply", "-f", file, "--dry-run")
	if code != exitOK || countPrefix(out, "+ create ") != 50 ||
		!strings.HasPrefix(out, "+ create app.t00 ← srv.app.t00\n+ create legacy.orders ← srv.legacy.orders\n+ create app.t01 ← srv.app.t01\n") ||
		!strings.HasSuffix(out, "Plan: 50 to create, 0 to update, 0 to stop, 0 unchanged.\ndry run: nothing was applied\n") {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, out, errw)
	}
	_, errw, code = s.cli("apply", "-f", file)
	if code != exitUsage || !strings.HasSuffix(errw, "starter: not confirmed: stdin is not a terminal; give --yes to go ahead without a confirmation (nothing was changed)\n") {
		t.Fatalf("without --yes: exit %d, %s", code, errw)
	}
	if list, _, _ := s.cli("list", "--all", "--json"); list != "[]\n" {
		t.Fatalf("workflows after a dry run and a refusal: %s", list)
	}

	// apply: 50 pipelines with the file's settings
	out, errw, code = s.cli("apply", "-f", file, "--yes")
	if code != exitOK || !strings.HasSuffix(out, "applied: 50 created, 0 updated, 0 stopped\n") ||
		!strings.Contains(out, "+ created app.t00 ← srv.app.t00 (workflow lakemirror-table-app.t00)\n  schedule lakemirror-compact-app.t00: compact every 2h\n") {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errw)
	}
	for _, table := range tables {
		st := statusOf(t, c, table)
		sp := st.Spec
		want := fmt.Sprintf("topic srv.%s key [id] batch 100/0 wait 1s bronze false history true", table)
		switch table {
		case "app.t00":
			want = "topic srv.app.t00 key [id] batch 500/5000 wait 1s bronze true history true"
		case "legacy.orders":
			want = "topic srv.legacy.orders key [order_id] batch 100/0 wait 1s bronze true history false"
		}
		got := fmt.Sprintf("topic %s key %v batch %d/%d wait %s bronze %v history %v", sp.Topic, sp.KeyColumns, sp.MaxEvents, sp.MaxBatchEvents, sp.MaxWait, !sp.WithoutBronze, !sp.WithoutHistory)
		if got != want {
			t.Errorf("%s: %s, want %s", table, got, want)
		}
	}
	desc, err := c.ScheduleClient().GetHandle(ctx, workflows.ScheduleID("app.t00", "compact")).Describe(ctx)
	if err != nil || desc.Schedule.Spec.Intervals[0].Every != 2*time.Hour {
		t.Fatalf("app.t00's compaction schedule: %v", err)
	}
	for _, id := range []string{workflows.ScheduleID("app.t00", "purge"), workflows.ScheduleID("app.t01", "compact")} {
		if _, err := c.ScheduleClient().GetHandle(ctx, id).Describe(ctx); err == nil {
			t.Fatalf("schedule %s exists; the file has none", id)
		}
	}
	// legacy.orders applies its records (its Iceberg tables exist)
	waitFor(t, 90*time.Second, "legacy.orders caught up", func() bool {
		st := statusOf(t, c, "legacy.orders")
		return st.Offsets[0] >= int64(len(stream.Delivered))
	})

	// a rerun: no changes, nothing sent
	before := map[string]int{}
	for _, table := range tables {
		before[table] = interventions(t, c, table)
	}
	out, errw, code = s.cli("apply", "-f", file, "--yes")
	if code != exitOK || out != "no changes: 50 pipelines unchanged\n" {
		t.Fatalf("rerun: exit %d\n%s\n%s", code, out, errw)
	}
	for _, table := range tables {
		if n := interventions(t, c, table); n != before[table] {
			t.Errorf("%s: %d signals and updates after a rerun without changes, %d before", table, n, before[table])
		}
	}

	// one table's batch bounds change: only it is updated
	changed := strings.Replace(manyTables, "    batch_size: 500\n    max_batch_size: 5000\n    maintenance:\n      compact_every: 2h\n",
		"    batch_size: 800\n    max_batch_size: 8000\n    maintenance:\n      compact_every: 3h\n", 1)
	write(changed)
	out, errw, code = s.cli("apply", "-f", file, "--yes")
	wantOut := "~ update app.t00\n    batch_size: 500 → 800\n    max_batch_size: 5000 → 8000\n    maintenance.compact_every: 2h → 3h\n= 49 unchanged\n" +
		"Plan: 0 to create, 1 to update, 0 to stop, 49 unchanged.\n" +
		"~ updated app.t00: batches of at most 800 records (up to 8000 while more than two batches behind), waiting at most 1s; at most 100 quarantined records per batch\n" +
		"  schedule lakemirror-compact-app.t00: compact every 3h\n" +
		"applied: 0 created, 1 updated, 0 stopped\n"
	if code != exitOK || out != wantOut {
		t.Fatalf("update: exit %d\n%s\n%s\nwant:\n%s", code, out, errw, wantOut)
	}
	if sp := statusOf(t, c, "app.t00").Spec; sp.MaxEvents != 800 || sp.MaxBatchEvents != 8000 || sp.MaxWait != time.Second {
		t.Fatalf("app.t00 after the update: %+v", sp)
	}
	if desc, err := c.ScheduleClient().GetHandle(ctx, workflows.ScheduleID("app.t00", "compact")).Describe(ctx); err != nil || desc.Schedule.Spec.Intervals[0].Every != 3*time.Hour {
		t.Fatalf("app.t00's compaction schedule after the update: %v", err)
	}
	for _, table := range tables {
		want := before[table]
		if table == "app.t00" {
			want++
		}
		if n := interventions(t, c, table); n != want {
			t.Errorf("%s: %d signals and updates after updating app.t00, want %d", table, n, want)
		}
	}

	// a key cannot change while the pipeline runs: refused, nothing sent
	write(strings.Replace(changed, "    max_batch_size: 8000\n", "    max_batch_size: 8000\n    key: [uuid]\n    max_wait: 3s\n", 1))
	out, errw, code = s.cli("apply", "-f", file, "--yes")
	wantOut = "! refuse app.t00: cannot change while its pipeline runs\n    key: id → uuid (cannot change while it runs)\n    max_wait: 1s → 3s\n" +
		"= 49 unchanged\nPlan: 0 to create, 0 to update, 0 to stop, 49 unchanged, 1 refused.\n"
	wantErr := "starter: refused: app.t00 (the plan's \"!\" lines): nothing was applied; give those settings as the pipelines have them, or drop the pipelines first (starter drop TABLE, with --drop-tables to start the tables over)\n"
	if code != exitUsage || out != wantOut || errw != wantErr {
		t.Fatalf("refusal: exit %d\n%s\n%s\nwant:\n%s\n%s", code, out, errw, wantOut, wantErr)
	}
	if sp := statusOf(t, c, "app.t00").Spec; sp.MaxWait != time.Second {
		t.Fatalf("app.t00 after a refused plan: max wait %s", sp.MaxWait)
	}

	// legacy.orders leaves the file: without --prune it is named and left
	// running; with --prune exactly it is stopped
	write(strings.Replace(changed, "  - topic: srv.legacy.orders\n    table: legacy.orders\n    key: order_id\n    history: false\n", "", 1))
	out, _, code = s.cli("apply", "-f", file, "--yes")
	if code != exitOK || out != "no changes: 49 pipelines unchanged\n  1 running pipelines are not in the file (left running; --prune stops them): legacy.orders\n" {
		t.Fatalf("without --prune: exit %d\n%s", code, out)
	}
	out, errw, code = s.cli("apply", "-f", file, "--prune", "--yes")
	wantOut = "- stop legacy.orders ← srv.legacy.orders (not in the file)\n= 49 unchanged\n" +
		"Plan: 0 to create, 0 to update, 1 to stop, 49 unchanged.\n" +
		"- stopping legacy.orders (stop sent: it completes after its in-flight batch; its tables stay)\n" +
		"applied: 0 created, 0 updated, 1 stopped\n"
	if code != exitOK || out != wantOut {
		t.Fatalf("prune: exit %d\n%s\n%s\nwant:\n%s", code, out, errw, wantOut)
	}
	if err := c.GetWorkflow(ctx, workflows.WorkflowID("legacy.orders"), "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, table := range tables[:49] {
		d, err := c.DescribeWorkflowExecution(ctx, workflows.WorkflowID(table), "")
		if err != nil || d.WorkflowExecutionInfo.Status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			t.Fatalf("%s after the prune: %v %v", table, err, d.GetWorkflowExecutionInfo().GetStatus())
		}
		want := before[table]
		if table == "app.t00" {
			want++
		}
		if n := interventions(t, c, table); n != want {
			t.Errorf("%s: %d signals and updates after the prune, want %d", table, n, want)
		}
	}

	// list --all: the stopped pipeline with its close status, the others running
	waitFor(t, 30*time.Second, "visibility shows legacy.orders completed", func() bool {
		out, _, _ := s.cli("list", "--all")
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 2 && f[0] == "legacy.orders" {
				return f[2] == "completed"
			}
		}
		return false
	})
	out, _, code = s.cli("list", "--all")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != exitOK || len(lines) != 51 || !strings.HasPrefix(lines[0], "TABLE ") || !strings.Contains(lines[0], "STATUS") {
		t.Fatalf("list --all: exit %d\n%s", code, out)
	}
	var legacy []string
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if f[0] == "legacy.orders" {
			legacy = f
			continue
		}
		if f[2] != "running" || f[len(f)-1] != "-" {
			t.Errorf("list --all: %q", l)
		}
	}
	if len(legacy) != 8 || legacy[1] != "srv.legacy.orders" || legacy[2] != "completed" || legacy[3] != "stopped" || legacy[4] != "-" {
		t.Fatalf("list --all, legacy.orders: %q", legacy)
	}

	// drop: refused without --yes and without a terminal; exit 3 for no
	// such table; a stopped pipeline's Iceberg tables; a running pipeline
	if _, errw, code = s.cli("drop", "app.t01"); code != exitUsage || !strings.Contains(errw, "give --yes") {
		t.Fatalf("drop without --yes: exit %d %s", code, errw)
	}
	if _, _, code = s.cli("drop", "no.such", "--drop-tables", "--yes"); code != exitNotFound {
		t.Fatalf("drop of no such table: exit %d", code)
	}
	name, _ := lake.ParseTableName("legacy.orders")
	var had []string
	for _, ident := range tableIdents(name) {
		if tbl, err := lake.LoadTable(ctx, s.r.Catalog, ident); err == nil && tbl != nil {
			had = append(had, lake.IdentString(ident))
		}
	}
	if strings.Join(had, ",") != "legacy.orders,legacy.orders_bronze" {
		t.Fatalf("legacy.orders' tables: %v", had)
	}
	out, errw, code = s.cli("drop", "legacy.orders", "--drop-tables", "--yes")
	wantOut = "drop legacy.orders:\n  the pipeline is not running (workflow lakemirror-table-legacy.orders: completed)\n" +
		"  drop Iceberg tables legacy.orders, legacy.orders_bronze and their files\ndropped legacy.orders\ndropped legacy.orders_bronze\n"
	if code != exitOK || out != wantOut {
		t.Fatalf("drop --drop-tables: exit %d\n%s\n%s\nwant:\n%s", code, out, errw, wantOut)
	}
	for _, ident := range tableIdents(name) {
		if tbl, err := lake.LoadTable(ctx, s.r.Catalog, ident); err != nil || tbl != nil {
			t.Fatalf("%s after drop: %v %v", lake.IdentString(ident), tbl != nil, err)
		}
	}
	out, errw, code = s.cli("drop", "app.t00", "--yes")
	wantOut = "drop app.t00:\n  stop the pipeline (workflow lakemirror-table-app.t00, running) and wait for it to complete\n" +
		"  delete schedule lakemirror-compact-app.t00\nstopped app.t00\ndeleted schedule lakemirror-compact-app.t00\n"
	if code != exitOK || out != wantOut {
		t.Fatalf("drop: exit %d\n%s\n%s\nwant:\n%s", code, out, errw, wantOut)
	}
	if d, err := c.DescribeWorkflowExecution(ctx, workflows.WorkflowID("app.t00"), ""); err != nil || d.WorkflowExecutionInfo.Status != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Fatalf("app.t00 after drop: %v", err)
	}
	// the file still lists app.t00: apply starts it again
	out, _, code = s.cli("apply", "-f", file, "--dry-run")
	if code != exitOK || !strings.HasPrefix(out, "+ create app.t00 ← srv.app.t00 (its last run completed)\n= 48 unchanged\n") {
		t.Fatalf("after drop: exit %d\n%s", code, out)
	}
}

func statusOf(t *testing.T, c client.Client, table string) workflows.Status {
	t.Helper()
	st, err := queryStatus(context.Background(), c, table)
	if err != nil {
		t.Fatalf("status of %s: %v", table, err)
	}
	return st
}

// countPrefix counts the lines of out that start with prefix.
func countPrefix(out, prefix string) int {
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}
