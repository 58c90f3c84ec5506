//go:build e2e

package lake

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
)

// Losing the local disk mid-stream (the state directory, with the chain
// log and the spilled index's store, removed between two batches) is
// survived: the next batch finds the state lost, builds it again from the
// tables (reason invalidated), and the tables come out exactly as without
// the loss. The rebuild's time is logged.
func TestStateDirWipedMidStream(t *testing.T) {
	for _, spill := range []bool{true, false} {
		t.Run(fmt.Sprintf("spilled=%v", spill), func(t *testing.T) {
			var budget *keyindex.Budget
			if spill {
				budget = keyindex.NewBudget(64<<20, 0)
				defer budget.Close()
			}
			dir := t.TempDir() + "/state"
			wiped, kept := newSpillPair(t, budget, dir), newSpillPair(t, nil, t.TempDir())
			stream := spillStream()
			for i, evs := range stream {
				if i == 7 {
					if u, _ := wiped.m.State().Memory(); u.Spilled != spill {
						t.Fatalf("before the wipe: usage %+v, want spilled %v", u, spill)
					}
					if err := os.RemoveAll(dir); err != nil {
						t.Fatal(err)
					}
				}
				start := time.Now()
				wiped.apply(t, batch(int64(i+1)), evs)
				if i == 7 {
					t.Logf("batch after the wipe (rebuild from the tables included): %v", time.Since(start))
				}
				kept.apply(t, batch(int64(i+1)), evs)
			}
			if got := fmt.Sprint(wiped.builds); got != "map[invalidated:1 new:1]" {
				t.Fatalf("builds %s, want map[invalidated:1 new:1] (one rebuild after the wipe)", got)
			}
			if got, want := mirrorLines(t, wiped.cat), mirrorLines(t, kept.cat); got != want {
				t.Fatalf("mirror after the wipe:\n%s\nwithout:\n%s", got, want)
			}
			if got, want := wiped.historyText(t), kept.historyText(t); got != want {
				t.Fatalf("history after the wipe:\n%s\nwithout:\n%s", got, want)
			}
			if u, _ := wiped.m.State().Memory(); u.Spilled != spill {
				t.Fatalf("after the rebuild: usage %+v, want spilled %v", u, spill)
			}
		})
	}
}
