package lake

import (
	"context"
	"maps"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/scd2"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// countingCatalog counts the lakecat.LoadTable calls made through it, by table.
type countingCatalog struct {
	catalog.Catalog
	mu    sync.Mutex
	loads map[string]int
}

func (c *countingCatalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	c.mu.Lock()
	c.loads[lakecat.IdentString(ident)]++
	c.mu.Unlock()
	return c.Catalog.LoadTable(ctx, ident)
}

func (c *countingCatalog) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := maps.Clone(c.loads)
	clear(c.loads)
	return out
}

// Within a batch (lakecat.WithTableCache) each table is loaded from the catalog
// once: bronze, mirror and history, whatever number of steps read them
// (without the cache the mirror is loaded three times and history twice).
// The next batch loads each again (nothing is kept between batches), and
// the tables end exactly as the same stream gives without the cache.
func TestBatchLoadsEachTableOnce(t *testing.T) {
	s := sample.Generate(sample.Options{Seed: 5, Inserts: 30, Updates: 60, Deletes: 10, Envelope: true})
	msgs := s.Clean
	// run applies msgs in four batches and checks the catalog loads of the
	// last three (the first creates the tables) against want (bronze,
	// mirror, history)
	run := func(uncached bool, want [3]int) *lakePipeline {
		cc := &countingCatalog{Catalog: newCatalog(t), loads: map[string]int{}}
		p := newLakePipeline(t, merge.HistoryOptions{})
		p.cat, p.mirror, p.history = cc, NewMirrorWriter(cc, testTable, orderKey), scd2.NewHistoryWriter(cc, testTable, orderKey, merge.HistoryOptions{})
		p.uncached = uncached
		p.batch(msgs[:20])
		cc.take()
		loads := map[string]int{lakecat.IdentString(testTable.Bronze()): want[0], lakecat.IdentString(testTable.Mirror()): want[1], lakecat.IdentString(testTable.History()): want[2]}
		for _, part := range [][]sample.Message{msgs[20:50], msgs[50:80], msgs[80:]} {
			p.batch(part)
			if got := cc.take(); !maps.Equal(got, loads) {
				t.Fatalf("catalog loads in one batch (uncached %v): %v, want %v", uncached, got, loads)
			}
		}
		return p
	}
	p, ref := run(false, [3]int{1, 1, 1}), run(true, [3]int{1, 3, 2})
	if got, want := mirrorLines(t, p.cat), mirrorLines(t, ref.cat); got != want || got == "" {
		t.Fatalf("mirror with the cache:\n%s\nwithout:\n%s", got, want)
	}
	if got, want := p.historyLines(), ref.historyLines(); got != want || got == "" {
		t.Fatalf("history with the cache:\n%s\nwithout:\n%s", got, want)
	}
}
