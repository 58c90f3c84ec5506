//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/worker/runner"
)

// Every command that prints a result prints it as one JSON value with
// --output json (docs/operating.md), and nothing else on stdout: produce,
// start, pause and resume (with --wait), backfill (with --wait), schedule
// (set, pause, delete) and drop, each with its exact result; a command
// that fails before doing anything prints no JSON.
func TestCommandsJSON(t *testing.T) {
	st := testStack(t)
	args := namespace(t, st, "cli-cmdjson")
	s := st.Settings
	s.Namespace = "cli-cmdjson"
	r, err := runner.Start(context.Background(), s, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	const table, topic, id = "cli.cmdjson", "cli.public.cmdjson", "lakemirror-table-cli.cmdjson"
	defer func() {
		_ = r.Client.TerminateWorkflow(context.Background(), id, "", "test ends")
	}()
	// run runs a command with --output json, wants exit 0, and decodes
	// its stdout, which must be exactly one JSON value, into out.
	run := func(out any, cmd ...string) string {
		t.Helper()
		code, stdout, stderr := cli(t, append(append(cmd, "--output", "json"), args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", cmd, code, stderr)
		}
		dec := json.NewDecoder(strings.NewReader(stdout))
		dec.DisallowUnknownFields()
		if err := dec.Decode(out); err != nil {
			t.Fatalf("%v: %v\n%s", cmd, err, stdout)
		}
		if dec.More() {
			t.Fatalf("%v: more than one JSON value on stdout:\n%s", cmd, stdout)
		}
		return stderr
	}

	var produced producedJSON
	run(&produced, "produce", topic)
	if want := (producedJSON{Topic: topic, Records: 134, EndOffsets: map[int32]int64{0: 134}}); !reflect.DeepEqual(produced, want) {
		t.Errorf("produce: %+v, want %+v", produced, want)
	}

	var started startedJSON
	run(&started, "start", topic, "--table", table, "--key", "order_id", "--batch-size", "100", "--max-wait", "200ms", "--schedules=false")
	if started.RunID == "" {
		t.Errorf("start: no run id: %+v", started)
	}
	started.RunID = ""
	if want := (startedJSON{Table: table, Topic: topic, WorkflowID: id, Schedules: []string{}}); !reflect.DeepEqual(started, want) {
		t.Errorf("start: %+v, want %+v", started, want)
	}
	if code, _, stderr := cli(t, append([]string{"wait", table, "--timeout", "1m"}, args...)...); code != exitOK {
		t.Fatalf("wait: exit %d: %s", code, stderr)
	}

	var sent sentJSON
	run(&sent, "pause", table, "--wait", "1m")
	if want := (sentJSON{Table: table, WorkflowID: id, Signal: "pause", Phase: "paused"}); sent != want {
		t.Errorf("pause: %+v, want %+v", sent, want)
	}
	sent = sentJSON{}
	run(&sent, "resume", table, "--wait", "1m")
	if want := (sentJSON{Table: table, WorkflowID: id, Signal: "resume", Phase: "stream"}); sent != want {
		t.Errorf("resume: %+v, want %+v", sent, want)
	}

	var bf backfillJSON
	run(&bf, "backfill", table, "--range", "0:0-10", "--wait")
	if want := (backfillJSON{Table: table, Records: 10, Ranges: []lake.Range{{Partition: 0, From: 0, To: 10}}, Done: true}); !reflect.DeepEqual(bf, want) {
		t.Errorf("backfill: %+v, want %+v", bf, want)
	}

	var sched []scheduleJSON
	run(&sched, "schedule", table, "--compact-every", "1h")
	compactID := "lakemirror-compact-" + table
	if want := []scheduleJSON{{ID: compactID, Job: "compact", Action: "set", EverySeconds: 3600}}; !reflect.DeepEqual(sched, want) {
		t.Errorf("schedule --compact-every: %+v, want %+v", sched, want)
	}
	sched = nil
	run(&sched, "schedule", table, "--pause")
	if want := []scheduleJSON{{ID: compactID, Job: "compact", Action: "paused"}}; !reflect.DeepEqual(sched, want) {
		t.Errorf("schedule --pause: %+v, want %+v", sched, want)
	}

	// a decision for a table that is not schema-blocked: nothing sent, the failure as JSON
	notWaiting := "starter: " + table + " is not waiting for a schema decision (phase stream); nothing was sent\n"
	if code, stdout, stderr := cli(t, append([]string{"schema", table, "--evolve", "--output", "json"}, args...)...); code != exitFailure || stdout != jsonFailure(t, notWaiting, exitFailure) ||
		stderr != notWaiting {
		t.Errorf("schema --evolve: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	var dropped droppedJSON
	stderr := run(&dropped, "drop", table, "--yes")
	want := droppedJSON{Table: table, WorkflowID: id, Stopped: true, SchedulesDeleted: []string{compactID}, TablesDropped: []string{}, Warnings: []string{}}
	if !reflect.DeepEqual(dropped, want) {
		t.Errorf("drop: %+v, want %+v", dropped, want)
	}
	// the plan and the progress went to stderr
	if !strings.HasPrefix(stderr, "drop "+table+":\n") || !strings.Contains(stderr, "stopped "+table+"\n") {
		t.Errorf("drop: stderr %q", stderr)
	}
}
