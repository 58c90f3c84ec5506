package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/activities"
)

// TestPrintReconcileSettling: the settling line gives periods in people
// units past a day, keeps sub-second settings as given, and says when the
// measured p99 was capped or raised (issue 35: "settling period 1h0m0s
// (p99 ... 8108h12m7s)" from a replayed old capture).
func TestPrintReconcileSettling(t *testing.T) {
	for _, c := range []struct {
		settle, p99 time.Duration
		want        string
	}{
		{time.Hour, 8108*time.Hour + 12*time.Minute + 7*time.Second, "settling period 1h0m0s (p99 of recent source-commit-to-apply delays 337d20h12m; capped by --settle-max)\n"},
		{30 * time.Second, 1200 * time.Millisecond, "settling period 30s (p99 of recent source-commit-to-apply delays 1.2s; raised to --settle-floor)\n"},
		{2500 * time.Millisecond, 2500 * time.Millisecond, "settling period 2.5s (p99 of recent source-commit-to-apply delays 2.5s)\n"},
		{30 * time.Second, 0, "settling period 30s (--settle-floor: no recent source-commit-to-apply delays measured)\n"},
	} {
		var b bytes.Buffer
		printReconcile(&b, activities.ReconcileResult{Table: "shop.orders", Settling: c.settle, MeasuredP99: c.p99})
		lines := strings.SplitAfter(b.String(), "\n")
		if got := lines[len(lines)-2]; got != c.want {
			t.Errorf("settle %v, p99 %v: got %q, want %q", c.settle, c.p99, got, c.want)
		}
	}
}
