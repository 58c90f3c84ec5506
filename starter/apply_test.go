package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/internal/pipelines"
	"github.com/lakemirror/lakemirror/workflows"
)

// applyCLI runs starter in-process with args (global flags first) and returns
// its stdout, stderr and exit code; stdin is not a terminal.
func applyCLI(args ...string) (string, string, int) {
	a := &app{}
	root := a.rootCmd()
	var out, errw bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errw)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil {
		errw.WriteString("starter: " + err.Error() + "\n")
	}
	return out.String(), errw.String(), exitCode(err)
}

// A pipelines file's defaults are start's flag defaults and the schedules
// start creates; its batch bounds are those the settings update accepts.
func TestPipelineDefaultsAreStartFlags(t *testing.T) {
	fl := (&app{}).startCmd().Flags()
	d := pipelines.Defaults
	for flag, want := range map[string]string{"batch-size": strconv.Itoa(d.Settings.MaxEvents), "max-batch-size": strconv.Itoa(d.Settings.MaxBatchEvents),
		"max-wait": d.Settings.MaxWait.String(), "max-quarantine": strconv.Itoa(d.Settings.MaxQuarantine), "start-from": d.Settings.StartFrom,
		"bronze": strconv.FormatBool(d.Bronze), "history": strconv.FormatBool(d.History), "history-collapse-tx": "false",
		"key": "", "history-columns": "", "source": "", "source-table": "", "signal-topic": "", "definition": "", "schedules": "true"} {
		if got := fl.Lookup(flag).DefValue; got != want {
			t.Errorf("start --%s defaults to %q, a pipelines file to %q", flag, got, want)
		}
	}
	m := pipelines.DefaultMaintenance
	if got := (maintFlags{retention: m.Retention, floor: m.RetentionFloor, olderThan: m.OlderThan, targetSize: m.TargetFileSize, retainLast: m.RetainLast}); got != defaultMaint {
		t.Errorf("maintenance parameters %+v, start's %+v", got, defaultMaint)
	}
	if m.CompactEvery != defaultEvery[activities.JobCompact] || m.ExpireEvery != defaultEvery[activities.JobExpire] || m.PurgeEvery != defaultEvery[activities.JobPurge] {
		t.Errorf("intervals %+v, start's %v", m, defaultEvery)
	}
	n, over, zero, neg := pipelines.MaxRecords, pipelines.MaxRecords+1, 0, -1
	w, wOver, wZero := pipelines.MaxWaitLimit, pipelines.MaxWaitLimit+time.Nanosecond, time.Duration(0)
	for _, c := range []struct {
		req workflows.SettingsRequest
		ok  bool
	}{
		{workflows.SettingsRequest{SettingsChange: payload.SettingsChange{MaxEvents: &n, MaxBatchEvents: &n, MaxQuarantine: &n, MaxWait: &w}}, true},
		{workflows.SettingsRequest{SettingsChange: payload.SettingsChange{MaxBatchEvents: &zero}}, true},
		{workflows.SettingsRequest{SettingsChange: payload.SettingsChange{MaxEvents: &over}}, false},
		{workflows.SettingsRequest{SettingsChange: payload.SettingsChange{MaxEvents: &zero}}, false},
		{workflows.SettingsRequest{SettingsChange: payload.SettingsChange{MaxBatchEvents: &over}}, false},
		{workflows.SettingsRequest{SettingsChange: payload.SettingsChange{MaxBatchEvents: &neg}}, false},
		{workflows.SettingsRequest{SettingsChange: payload.SettingsChange{MaxQuarantine: &over}}, false},
		{workflows.SettingsRequest{SettingsChange: payload.SettingsChange{MaxQuarantine: &zero}}, false},
		{workflows.SettingsRequest{SettingsChange: payload.SettingsChange{MaxWait: &wOver}}, false},
		{workflows.SettingsRequest{SettingsChange: payload.SettingsChange{MaxWait: &wZero}}, false},
	} {
		if err := c.req.Validate(); (err == nil) != c.ok {
			t.Errorf("settings %+v: %v, want ok=%v", c.req, err, c.ok)
		}
	}
}

// Every pipeline of the example file, started from its spec and read back
// from that spec, is unchanged: a rerun of apply right after it plans
// nothing.
func TestExamplePipelinesRoundTrip(t *testing.T) {
	const name = "../examples/pipelines.yaml"
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := pipelines.Parse(name, data)
	if err != nil {
		t.Fatal(err)
	}
	resolved, _, err := f.Resolve([]string{"dbserver1.inventory.orders", "dbserver1.inventory.customers", "dbserver1.inventory.products", "dbserver1.audit.access_events"}, true)
	if err != nil {
		t.Fatal(err)
	}
	var errw bytes.Buffer
	desired, err := withSpecs(&errw, name, resolved)
	if err != nil {
		t.Fatalf("%v\n%s", err, errw.String())
	}
	if len(desired) != 4 {
		t.Fatalf("%d pipelines", len(desired))
	}
	for _, d := range desired {
		if ch := pipelines.Diff(d.Pipeline, pipelineOf(d.spec, d.Maintenance)); len(ch) != 0 {
			t.Errorf("%s: %+v", d.Table, ch)
		}
	}
	orders := desired[0].spec
	if orders.Table != "sales.orders" || len(orders.Columns) != 16 || orders.KeyColumns[0] != "order_id" || orders.MaxEvents != 20000 ||
		orders.MaxBatchEvents != 100000 || orders.MaxWait != 5*time.Second || orders.Source != "inventorydb" || orders.SignalTopic != "dbserver1.signals" {
		t.Fatalf("orders spec %+v", orders)
	}
	if p := desired[3].spec; p.Table != "audit.access_events" || !p.WithoutBronze || !p.WithoutHistory {
		t.Fatalf("audit spec %+v", p)
	}
}

// apply checks the whole file before it contacts anything: every problem
// on stderr with its line, exit 2; an unreadable definition too.
func TestApplyRejectsBadFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("defaults:\n  batch_sise: 10\npipelines:\n  - topic: a.b.c\n    max_wait: soon\n  - topic: a.x.c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errw, code := applyCLI("--temporal-address", "127.0.0.1:1", "--kafka-brokers", "127.0.0.1:1", "apply", "-f", bad, "--yes")
	want := bad + ":2: defaults.batch_sise: unknown field batch_sise (did you mean batch_size?)\n" +
		bad + `:5: pipelines[0].max_wait: "soon" is not a duration (e.g. 500ms, 2s, 1h, 30d)` + "\n" +
		"starter: " + bad + ": 2 problems; nothing was applied\n"
	if code != exitUsage || out != "" || errw != want {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant:\n%s", code, out, errw, want)
	}
	// duplicate tables after resolution; a definition that does not exist
	if err := os.WriteFile(bad, []byte("pipelines:\n  - topic: a.b.c\n  - topic: a.x.c\n    table: b.c\n  - topic: a.b.d\n    definition: nope.json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errw, code = applyCLI("--temporal-address", "127.0.0.1:1", "--kafka-brokers", "127.0.0.1:1", "apply", "-f", bad, "--dry-run")
	want = bad + ":4: pipelines[1].table: table b.c is also the table of pipelines[0] (line 2, topic a.b.c): one table has one pipeline\n" +
		"starter: " + bad + ": 1 problem; nothing was applied\n"
	if code != exitUsage || errw != want {
		t.Fatalf("exit %d, stderr:\n%s\nwant:\n%s", code, errw, want)
	}
	if err := os.WriteFile(bad, []byte("pipelines:\n  - topic: a.b.d\n    definition: nope.json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errw, code = applyCLI("--temporal-address", "127.0.0.1:1", "--kafka-brokers", "127.0.0.1:1", "apply", "-f", bad, "--dry-run")
	want = bad + ":2: pipelines[0].definition: schemas: table definition: open " + filepath.Join(dir, "nope.json") + ": no such file or directory\n" +
		"starter: " + bad + ": 1 problem; nothing was applied\n"
	if code != exitUsage || errw != want {
		t.Fatalf("exit %d, stderr:\n%s\nwant:\n%s", code, errw, want)
	}
	if _, errw, code = applyCLI("apply"); code != exitUsage || errw != "starter: give the pipelines file: apply -f FILE\n" {
		t.Fatalf("no file: exit %d, %s", code, errw)
	}
}
