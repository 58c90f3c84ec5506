//go:build e2e

package main

import (
	"context"
	"io"
	"log/slog"
	"regexp"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/worker/runner"
)

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
	// a loaded machine (CI runs other e2e packages beside this one) can
	// take most of a minute over the graceful path: the old worker's
	// shared-queue worker stops first (up to stopWait for what it runs)
	// and the workflow's task waits out its sticky queue; the counts
	// below tell it from the timeout path. Until the new worker has the
	// workflow's task, a status query may get no answer (it waits on the
	// stopped worker's sticky queue, as `starter status` then says): the
	// loop asks again
	for deadline := time.Now().Add(3 * time.Minute); ; {
		st, err := queryStatus(context.Background(), second.Client, "ho.orders")
		if err == nil && st.Owner == runner.WorkerQueue("newworker2") {
			break
		}
		if time.Now().After(deadline) {
			_, out, _ := cli(t, append([]string{"status", "ho.orders"}, args...)...)
			t.Fatalf("timed out waiting for the new worker taking the table (last query error: %v); status:\n%s", err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, out, _ = cli(t, append([]string{"status", "ho.orders"}, args...)...)
	if !regexp.MustCompile(`(?m)^phase +stream$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^worker +newworker2 \(claims 2; hand-overs: 1 on a worker's stop, 0 by timeout; releases 0; heartbeats lost 0\)$`).MatchString(out) {
		t.Fatalf("after the hand-over:\n%s", out)
	}
}
