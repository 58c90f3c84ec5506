//go:build e2e

package lake

import (
	"context"
	"testing"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/scd2"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// A table keeps a bounded number of metadata.json files however many
// batches it commits, and a batch's snapshot summary carries only the
// batch's bookkeeping: the pending-rebuild set and bronze's covered
// offsets are table properties only, so metadata does not grow with them
// per snapshot.
func TestMetadataStaysBounded(t *testing.T) {
	s := sample.Generate(sample.Options{Seed: 4, Inserts: 40, Updates: 120, Deletes: 10, Duplicates: 10, Late: 20, OutOfOrder: 10})
	p := newLakePipeline(t, merge.HistoryOptions{})
	d := s.Delivered
	batches := 0
	for len(d) > 0 {
		n := min(len(d), 4)
		p.batch(d[:n])
		d = d[n:]
		batches++
	}
	if batches < 40 {
		t.Fatalf("only %d batches (test setup)", batches)
	}
	ctx := context.Background()
	for _, ident := range [][]string{p.name.Mirror(), p.name.History(), p.name.Bronze()} {
		tbl, err := p.cat.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		files := metadataFiles(t, tbl, "*.metadata.json")
		if len(files) > 21 {
			t.Errorf("%v keeps %d metadata.json files after %d batches, want at most 21", ident, len(files), batches)
		}
		for _, snap := range tbl.Metadata().Snapshots() {
			if snap.Summary == nil {
				continue
			}
			for _, k := range []string{scd2.PropPendingRebuild, lakecat.PropCovered, PropTruncates} {
				if _, ok := snap.Summary.Properties[k]; ok {
					t.Fatalf("%v snapshot %d summary carries %s", ident, snap.SnapshotID, k)
				}
			}
		}
	}
	hist, err := p.cat.LoadTable(ctx, p.name.History())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := hist.Properties()[scd2.PropPendingRebuild]; !ok {
		t.Fatalf("the history table lost its %s property", scd2.PropPendingRebuild)
	}
}
