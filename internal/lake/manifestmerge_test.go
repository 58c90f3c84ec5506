//go:build e2e

package lake

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/maintain"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// mergeManifestsEvery makes a manifest merge due every n commits (by
// Iceberg sequence number) until test t ends.
func mergeManifestsEvery(t *testing.T, n int64) {
	every := maintain.ManifestMergeEvery
	maintain.ManifestMergeEvery = n
	t.Cleanup(func() { maintain.ManifestMergeEvery = every })
}

// With a manifest merge due every 4 commits at 6 small data manifests,
// the three tables keep exactly the rows of a pipeline that never merges
// (position deletes still apply to the rows they remove), their current
// Iceberg snapshots list at most 9 data manifests where the other lists
// one per batch, and no batch rebuilds the local state.
func TestManifestMergeKeepsRowsAndState(t *testing.T) {
	mergeManifestsEvery(t, 4)
	ctx := context.Background()
	s := sample.Generate(sample.Options{Seed: 14, Inserts: 40, Updates: 150, Deletes: 20, Tombstones: true})
	merged, plain := newLakePipeline(t, merge.HistoryOptions{}), newLakePipeline(t, merge.HistoryOptions{})
	msgs := s.Delivered
	merged.batch(msgs[:5])
	plain.batch(msgs[:5])
	msgs = msgs[5:]
	setTableProps(t, merged, iceberg.Properties{table.ManifestMinMergeCountKey: "6"})
	setTableProps(t, plain, iceberg.Properties{table.ManifestMergeEnabledKey: "false"})
	builds := map[string]int{}
	merged.mirror.state.OnBuild = func(r string) { builds["mirror "+r]++ }
	merged.history.State().OnBuild = func(r string) { builds["history "+r]++ }
	batches := 1
	for len(msgs) > 0 {
		n := min(len(msgs), 6)
		merged.batch(msgs[:n])
		plain.batch(msgs[:n])
		msgs = msgs[n:]
		batches++
	}
	if batches < 30 {
		t.Fatalf("only %d batches: the test needs more than the merge interval many times over", batches)
	}
	if got, want := mirrorLines(t, merged.cat), mirrorLines(t, plain.cat); got != want || got == "" {
		t.Fatalf("mirror with manifest merges:\n%s\nwithout:\n%s", got, want)
	}
	if got, want := merged.historyLines(), plain.historyLines(); got != want || got == "" {
		t.Fatalf("history with manifest merges:\n%s\nwithout:\n%s", got, want)
	}
	if len(builds) != 0 {
		t.Fatalf("the local state was rebuilt: %v", builds)
	}
	for _, ident := range []table.Identifier{merged.name.Mirror(), merged.name.History(), merged.name.Bronze()} {
		m, replaces := dataManifests(t, merged, ident)
		p, _ := dataManifests(t, plain, ident)
		if m > 9 || replaces == 0 || p < batches-1 {
			t.Errorf("%v: %d data manifests after %d merges, %d without merging; want at most 9, some merges, one per batch", ident, m, replaces, p)
		}
		tbl, err := merged.cat.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		if cp, err := ReadCheckpoint(tbl); err != nil || cp.BatchSeq != int64(batches) {
			t.Errorf("%v: checkpoint %+v, %v; want batch %d", ident, cp, err, batches)
		}
	}
}

// dataManifests counts the data manifests ident's current Iceberg
// snapshot lists, and the manifest merges (replace snapshots) among its
// snapshots.
func dataManifests(t *testing.T, p *lakePipeline, ident table.Identifier) (manifests, replaces int) {
	t.Helper()
	tbl, fs := loadWithFS(t, p, ident)
	mans, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mans {
		if m.ManifestContent() == iceberg.ManifestContentData {
			manifests++
		}
	}
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary != nil && s.Summary.Operation == table.OpReplace {
			replaces++
		}
	}
	return manifests, replaces
}
