package main

import (
	"encoding/json"
	"flag"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/config"
)

// A command run with --output json that fails before printing its result
// writes the failure to stdout as one JSON object, with the same exit
// code and the same stderr line as without it; in text mode stdout stays
// empty.
func TestFailureAsJSON(t *testing.T) {
	addr := closedAddr(t)
	for _, c := range []struct {
		args []string
		code int
		kind string
		msg  string // the message's start
	}{
		{[]string{"status", "-o", "json"}, exitUsage, "usage", "accepts 1 arg(s), received 0"},
		{[]string{"list", "--output", "json", "--temporal-address", addr}, exitFailure, "failure", "cannot reach Temporal at " + addr + " (namespace default): "},
		{[]string{"status", "shop.orders", "-o", "json", "--temporal-address", addr}, exitFailure, "failure", "cannot reach Temporal at " + addr},
		{[]string{"pause", "shop.orders", "-o", "json", "--temporal-address", addr}, exitFailure, "failure", "cannot reach Temporal at " + addr},
	} {
		code, stdout, stderr := cli(t, append(c.args, "--kafka-brokers", closedAddr(t), "--data-dir", t.TempDir())...)
		var got jsonError
		dec := json.NewDecoder(strings.NewReader(stdout))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&got); err != nil {
			t.Fatalf("%v: stdout %q is not one error object: %v", c.args, stdout, err)
		}
		if code != c.code || got.Error.ExitCode != c.code || got.Error.Kind != c.kind || !strings.HasPrefix(got.Error.Message, c.msg) {
			t.Errorf("%v: exit %d, stdout %+v; want %d %s %q...", c.args, code, got, c.code, c.kind, c.msg)
		}
		if stdout != jsonFailure(t, stderr, code) {
			t.Errorf("%v: stdout %q, want %q", c.args, stdout, jsonFailure(t, stderr, code))
		}
		if stderr != "starter: "+got.Error.Message+"\n" {
			t.Errorf("%v: stderr %q, want the message once: %q", c.args, stderr, got.Error.Message)
		}
		var raw map[string]map[string]any
		if err := json.Unmarshal([]byte(stdout), &raw); err != nil || len(raw) != 1 || len(raw["error"]) != 3 {
			t.Errorf("%v: stdout %s: want exactly {\"error\": {message, exit_code, kind}}", c.args, stdout)
		}
	}
	// text output: the failure on stderr only
	code, stdout, stderr := cli(t, "status", "shop.orders", "--temporal-address", addr, "--kafka-brokers", closedAddr(t), "--data-dir", t.TempDir())
	if code != exitFailure || stdout != "" || !strings.HasPrefix(stderr, "starter: cannot reach Temporal at "+addr) {
		t.Errorf("text: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestExitKind(t *testing.T) {
	for code, want := range map[int]string{exitFailure: "failure", exitUsage: "usage", exitNotFound: "not_found", exitInterrupted: "interrupted", exitTerminated: "terminated"} {
		if got := exitKind(code); got != want {
			t.Errorf("exitKind(%d) = %q, want %q", code, got, want)
		}
	}
}

// The worker-only global flags (internal/config: "worker only: ..." in
// their usage) are left out of every command's help but demo's, whose
// embedded worker reads them; they still parse everywhere (one
// environment serves the worker and the starter).
func TestHelpLeavesOutWorkerFlags(t *testing.T) {
	var s config.Settings
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	s.Bind(fs)
	var worker []string
	fs.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Usage, workerOnly) {
			worker = append(worker, "--"+f.Name+" ")
		}
	})
	if len(worker) < 10 {
		t.Fatalf("only %d worker-only flags found: %v", len(worker), worker)
	}
	for _, args := range [][]string{{"--help"}, {"status", "--help"}, {"start", "--help"}, {"list", "--help"}} {
		code, stdout, _ := cli(t, args...)
		if code != exitOK || !strings.Contains(stdout, "--temporal-address") {
			t.Fatalf("%v: exit %d, stdout:\n%s", args, code, stdout)
		}
		listed := listedFlags(stdout)
		for _, f := range worker {
			if listed[f] {
				t.Errorf("%v lists the worker-only flag %s", args, f)
			}
		}
		if strings.Contains(stdout, workerOnly) {
			t.Errorf("%v: help shows a %q flag", args, workerOnly)
		}
	}
	code, stdout, _ := cli(t, "demo", "--help")
	if code != exitOK {
		t.Fatalf("demo --help: exit %d", code)
	}
	listed := listedFlags(stdout)
	for _, f := range worker {
		if !listed[f] {
			t.Errorf("demo --help leaves out the worker flag %s its embedded worker reads", f)
		}
	}
	// shown for demo only: the next help hides them again
	if _, stdout, _ := cli(t, "status", "--help"); strings.Contains(stdout, workerOnly) {
		t.Errorf("status --help after demo --help shows worker-only flags")
	}
	// and they still parse
	if code, _, stderr := cli(t, "status", "--index-memory", "1GiB"); code != exitUsage || !strings.Contains(stderr, "accepts 1 arg(s)") {
		t.Errorf("status --index-memory: exit %d, stderr %q", code, stderr)
	}
}

// listedFlags returns the flags a help text lists, one per line of its
// flag sections ("      --name string   usage"), as "--name ".
func listedFlags(help string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(help, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if strings.HasPrefix(f[0], "-") && !strings.HasPrefix(f[0], "--") && len(f) > 1 { // "-o, --output"
			f = f[1:]
		}
		if strings.HasPrefix(f[0], "--") {
			out[f[0]+" "] = true
		}
	}
	return out
}

// jsonFailure is what a command run with --output json prints to stdout
// when it fails with stderr's line "starter: MESSAGE\n" and exit code
// code (runContext).
func jsonFailure(t *testing.T, stderr string, code int) string {
	t.Helper()
	var b strings.Builder
	msg := strings.TrimSuffix(strings.TrimPrefix(stderr, "starter: "), "\n")
	if err := writeJSON(&b, jsonError{Error: jsonErrorBody{Message: msg, ExitCode: code, Kind: exitKind(code)}}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
