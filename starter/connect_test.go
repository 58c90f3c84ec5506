package main

import (
	"strings"
	"testing"
	"time"
)

// Without a reachable Temporal every command fails at once (exit code 1)
// naming the address and how to fix it.
func TestTemporalNotReachable(t *testing.T) {
	addr := closedAddr(t)
	prefix := "starter: cannot reach Temporal at " + addr + " (namespace default): "
	suffix := "\n  fix: start the worker with its embedded dev stack (`go run ./worker/dev`), or point the starter at your Temporal with --temporal-address host:port or TEMPORAL_ADDRESS (and --namespace or TEMPORAL_NAMESPACE)\n"
	for _, args := range [][]string{
		{"status", "shop.orders"},
		{"list"},
		{"wait", "shop.orders"},
		{"settings", "shop.orders", "--batch-size", "10"},
		{"pause", "shop.orders"},
		{"schedule", "shop.orders", "--pause"},
		{"start", "shop.public.orders", "--table", "shop.orders", "--schedules=false"},
	} {
		start := time.Now()
		code, _, stderr := cli(t, append(args, "--temporal-address", addr, "--kafka-brokers", closedAddr(t), "--data-dir", t.TempDir())...)
		if code != exitFailure || !strings.HasPrefix(stderr, prefix) || !strings.HasSuffix(stderr, suffix) || strings.Count(stderr, "\n") != 2 {
			t.Errorf("%v: exit %d, stderr %q; want 1, %q...%q", args, code, stderr, prefix, suffix)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%v took %s", args, d)
		}
	}
	// doctor reports it as its first check and the checks that need Temporal as not checked
	code, stdout, stderr := cli(t, "doctor", "--temporal-address", addr, "--kafka-brokers", closedAddr(t), "--data-dir", t.TempDir())
	lines := strings.Split(stdout, "\n")
	if code != exitFailure || !strings.HasPrefix(lines[0], "FAIL  temporal: cannot reach Temporal at "+addr+": ") || lines[2] != "WARN  namespace: not checked: Temporal is not reachable" ||
		stderr != "starter: doctor: 2 of 13 checks failed\n" {
		t.Errorf("doctor: exit %d, stdout:\n%s\nstderr %q", code, stdout, stderr)
	}
}
