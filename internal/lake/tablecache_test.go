package lake

import (
	"context"
	"maps"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// countingCatalog counts the LoadTable calls made through it, by table.
type countingCatalog struct {
	catalog.Catalog
	mu    sync.Mutex
	loads map[string]int
}

func (c *countingCatalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	c.mu.Lock()
	c.loads[IdentString(ident)]++
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

// Within a batch (WithTableCache) each table is loaded from the catalog
// once: bronze, mirror and history, whatever number of steps read them
// (without the cache the mirror is loaded three times and history twice).
// The next batch
// loads each again (nothing is kept between batches), and the tables end
// exactly as the same stream gives without the cache.
func TestBatchLoadsEachTableOnce(t *testing.T) {
	cc := &countingCatalog{Catalog: newCatalog(t), loads: map[string]int{}}
	p := newLakePipeline(t, merge.HistoryOptions{})
	p.cat, p.mirror, p.history = cc, NewMirrorWriter(cc, testTable, orderKey), NewHistoryWriter(cc, testTable, orderKey, merge.HistoryOptions{})
	s := sample.Generate(sample.Options{Seed: 5, Inserts: 30, Updates: 60, Deletes: 10, Envelope: true})
	msgs := s.Clean
	p.batch(msgs[:20]) // creates the tables
	cc.take()
	want := map[string]int{IdentString(testTable.Bronze()): 1, IdentString(testTable.Mirror()): 1, IdentString(testTable.History()): 1}
	for _, part := range [][]sample.Message{msgs[20:50], msgs[50:80], msgs[80:]} {
		p.batch(part)
		if got := cc.take(); !maps.Equal(got, want) {
			t.Fatalf("catalog loads in one batch: %v, want %v", got, want)
		}
	}

	rc := &countingCatalog{Catalog: newCatalog(t), loads: map[string]int{}}
	ref := newLakePipeline(t, merge.HistoryOptions{})
	ref.cat, ref.mirror, ref.history = rc, NewMirrorWriter(rc, testTable, orderKey), NewHistoryWriter(rc, testTable, orderKey, merge.HistoryOptions{})
	ref.uncached = true
	ref.batch(msgs[:20])
	rc.take()
	uncached := map[string]int{IdentString(testTable.Bronze()): 1, IdentString(testTable.Mirror()): 3, IdentString(testTable.History()): 2}
	for _, part := range [][]sample.Message{msgs[20:50], msgs[50:80], msgs[80:]} {
		ref.batch(part)
		if got := rc.take(); !maps.Equal(got, uncached) {
			t.Fatalf("catalog loads in one uncached batch: %v, want %v", got, uncached)
		}
	}
	if got, want := mirrorLines(t, cc), mirrorLines(t, ref.cat); got != want || got == "" {
		t.Fatalf("mirror with the cache:\n%s\nwithout:\n%s", got, want)
	}
	if got, want := p.historyLines(), ref.historyLines(); got != want || got == "" {
		t.Fatalf("history with the cache:\n%s\nwithout:\n%s", got, want)
	}
}
