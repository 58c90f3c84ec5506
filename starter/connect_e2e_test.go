//go:build e2e

package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/devstack"
	"github.com/lakemirror/lakemirror/worker/runner"
	"github.com/lakemirror/lakemirror/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"
)

// namespace creates a namespace of the shared stack for one test (workers
// and pollers are per namespace, so the test sees no other test's worker)
// and returns its connection flags.
func namespace(t *testing.T, st *devstack.Stack, name string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := st.Temporal.CreateNamespace(ctx, name, workflows.SearchAttributeTypes); err != nil {
		t.Fatal(err)
	}
	return append(stackArgs(st), "--namespace", name)
}

// With Temporal but no worker, the commands that need one fail at once
// (exit code 1) saying so instead of timing out; a table that does not
// exist is still "no such table" (exit code 3), for schedule too;
// start and signals succeed with a warning.
func TestNoWorkerPolling(t *testing.T) {
	st := testStack(t)
	args := namespace(t, st, "cli-noworker")
	code, stdout, stderr := cli(t, append([]string{"start", "shop.public.orders", "--table", "cli.noworker", "--key", "id", "--schedules=false"}, args...)...)
	warning := fmt.Sprintf("starter: warning: no worker is polling task queue \"lakemirror\" on Temporal at %s (namespace cli-noworker); the table starts when one runs: start the worker (`worker`, or `go run ./worker/dev` for the dev stack)\n", st.Settings.TemporalAddress)
	if code != exitOK || !regexp.MustCompile(`^started cli\.noworker \(workflow lakemirror-table-cli\.noworker, run [0-9a-f-]+\) reading shop\.public\.orders\n$`).MatchString(stdout) || stderr != warning {
		t.Fatalf("start: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	noWorker := fmt.Sprintf("starter: no worker is polling task queue \"lakemirror\" on Temporal at %s (namespace cli-noworker): the tables' workflows wait for one\n  fix: start the worker with the same TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE (`worker`), or `go run ./worker/dev` for the embedded dev stack\n", st.Settings.TemporalAddress)
	noTable := "starter: no such table cli.typo: no pipeline runs it (workflow lakemirror-table-cli.typo does not exist); `starter list` shows the running tables\n"
	for _, c := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"status", "cli.noworker"}, exitFailure, "", noWorker},
		{[]string{"status", "cli.noworker", "--output", "json"}, exitFailure, jsonFailure(t, noWorker, exitFailure), noWorker}, // the failure as JSON too
		{[]string{"list"}, exitFailure, "", noWorker},
		{[]string{"wait", "cli.noworker"}, exitFailure, "", noWorker},
		{[]string{"settings", "cli.noworker", "--batch-size", "10"}, exitFailure, "", noWorker},
		{[]string{"backfill", "cli.noworker", "--from", "2d"}, exitFailure, "", noWorker},
		{[]string{"retry", "cli.noworker"}, exitFailure, "", noWorker},
		{[]string{"schedule", "cli.noworker"}, exitFailure, "", noWorker},
		{[]string{"status", "cli.typo"}, exitNotFound, "", noTable},
		{[]string{"schedule", "cli.typo"}, exitNotFound, "", noTable},
		{[]string{"schedule", "cli.typo", "--purge-every", "0"}, exitNotFound, "", noTable},
		{[]string{"schedule", "cli.typo", "--pause"}, exitNotFound, "",
			"starter: no such table cli.typo: no pipeline (workflow lakemirror-table-cli.typo) and no schedules (lakemirror-<job>-cli.typo); `starter list` shows the running tables\n"},
		{[]string{"schedule", "cli.typo", "--delete"}, exitNotFound, "",
			"starter: no such table cli.typo: no pipeline (workflow lakemirror-table-cli.typo) and no schedules (lakemirror-<job>-cli.typo); `starter list` shows the running tables\n"},
		{[]string{"schedule", "cli.noworker", "--unpause"}, exitNotFound, "",
			"starter: cli.noworker has no schedules (lakemirror-<job>-cli.noworker); create them with `starter schedule cli.noworker`\n"},
		{[]string{"pause", "cli.noworker"}, exitOK, "sent pause to cli.noworker\n", strings.Replace(warning, "the table starts when one runs", "the signal takes effect when one runs", 1)},
		{[]string{"resume", "cli.noworker"}, exitOK, "sent resume to cli.noworker\n", strings.Replace(warning, "the table starts when one runs", "the signal takes effect when one runs", 1)},
	} {
		start := time.Now()
		code, stdout, stderr := cli(t, append(c.args, args...)...)
		if code != c.code || stdout != c.stdout || stderr != c.stderr {
			t.Errorf("%v: exit %d, stdout %q, stderr %q\nwant exit %d, stdout %q, stderr %q", c.args, code, stdout, stderr, c.code, c.stdout, c.stderr)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%v took %s: it must not wait for a worker", c.args, d)
		}
	}
	// pause and resume went as control signals, which keep their order
	// when they reach the workflow together (workflows/signals.go)
	s := st.Settings
	s.Namespace = "cli-noworker"
	c, err := runner.Dial(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var sent []string
	it := c.GetWorkflowHistory(context.Background(), workflows.WorkflowID("cli.noworker"), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := e.GetWorkflowExecutionSignaledEventAttributes(); a != nil {
			var op string
			if err := converter.GetDefaultDataConverter().FromPayloads(a.GetInput(), &op); err != nil {
				t.Fatal(err)
			}
			sent = append(sent, a.GetSignalName()+" "+op)
		}
	}
	if want := []string{"control pause", "control resume"}; fmt.Sprint(sent) != fmt.Sprint(want) {
		t.Errorf("signals sent %q, want %q", sent, want)
	}
	code, stdout, stderr = cli(t, append([]string{"status", "cli.x"}, append(stackArgs(st), "--namespace", "cli-nonesuch")...)...)
	if want := fmt.Sprintf("starter: namespace \"cli-nonesuch\" does not exist on Temporal at %s\n  fix: create it (temporal operator namespace create --namespace cli-nonesuch) or name yours with --namespace or TEMPORAL_NAMESPACE\n", st.Settings.TemporalAddress); code != exitFailure || stdout != "" || stderr != want {
		t.Errorf("no such namespace: exit %d, stdout %q, stderr %q; want 1, %q", code, stdout, stderr, want)
	}
}
