//go:build e2e

package main

import (
	"context"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/worker/runner"
)

// TestStatusWaitingForHandOver: a table whose worker stopped (a worker
// restarted under another worker id) shows in status as "stream: waiting
// for hand-over from worker <old id> (N s left)" until the new worker
// takes it over; then plain "stream" again, owned by the new worker.
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
	first.Stop()
	s.WorkerID = "newworker2"
	second, err := runner.Start(context.Background(), s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Stop()
	defer func() {
		_ = second.Client.TerminateWorkflow(context.Background(), "lakemirror-table-ho.orders", "", "test ends")
	}()
	waiting := regexp.MustCompile(`(?m)^phase +stream: waiting for hand-over from worker oldworker1 \((\d+) s left\)$`)
	var seen []string
	// the old worker's idle plan is noticed gone when its heartbeat times
	// out: up to 60 s for an idle wait (fast-recovery, docs/design.md
	// "Recovery after a worker dies"), then the 3 s probe on its queue
	waitFor(t, 2*time.Minute, "status saying the table waits for the hand-over", func() bool {
		_, out, _ := cli(t, append([]string{"status", "ho.orders"}, args...)...)
		m := waiting.FindStringSubmatch(out)
		if m == nil {
			return false
		}
		seen = append(seen, m[0])
		n, _ := strconv.Atoi(m[1])
		if n > 20 {
			t.Fatalf("%q: more seconds left than the 20 s schedule-to-start timeout", m[0])
		}
		return true
	})
	waitUntil(t, "the new worker taking the table", func() bool {
		stat := statusOf(t, second.Client, "ho.orders")
		return stat.Owner == runner.WorkerQueue("newworker2")
	})
	_, out, _ := cli(t, append([]string{"status", "ho.orders"}, args...)...)
	if !regexp.MustCompile(`(?m)^phase +stream$`).MatchString(out) {
		t.Fatalf("after the hand-over (seen: %q):\n%s", seen, out)
	}
}
