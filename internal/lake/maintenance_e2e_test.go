//go:build e2e

package lake

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/lake/compact"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// Compaction races with applies 100 times: whichever commits second fails
// its conflict check and retries; no row is lost or duplicated.
func TestCompactionUnderConcurrentApply(t *testing.T) {
	ctx := context.Background()
	s := sample.Generate(sample.Options{Seed: 5, Inserts: 40, Updates: 300, Deletes: 20, Duplicates: 20, Late: 10, Tombstones: true, Envelope: true})
	p := newLakePipeline(t, merge.HistoryOptions{})
	r := rand.New(rand.NewPCG(5, 5))
	msgs := s.Delivered
	conflicts := 0
	for round := 0; round < 100; round++ {
		n := 1 + r.IntN(6)
		chunk := msgs[:min(n, len(msgs))]
		msgs = msgs[len(chunk):]
		var wg sync.WaitGroup
		var cerr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			for attempt := 0; attempt < 20; attempt++ {
				if _, cerr = compact.Compact(ctx, p.cat, p.name.Mirror(), compact.Options{}); cerr == nil {
					return
				}
				conflicts++
				time.Sleep(time.Duration(r.IntN(5)) * time.Millisecond)
			}
		}()
		if len(chunk) > 0 {
			p.retryingBatch(chunk)
		}
		wg.Wait()
		if cerr != nil {
			t.Fatalf("round %d: compaction never committed: %v", round, cerr)
		}
	}
	for len(msgs) > 0 {
		n := min(10, len(msgs))
		p.retryingBatch(msgs[:n])
		msgs = msgs[n:]
	}
	want := expectedDump(s.Expected())
	if got := mirrorLive(t, p); got != want {
		t.Fatalf("mirror after 100 races (%d conflicts):\n%s\nwant\n%s", conflicts, got, want)
	}
	checkBronzeOnce(t, p, int64(len(s.Delivered)))
	t.Logf("%d commit conflicts resolved by retrying", conflicts)
}
