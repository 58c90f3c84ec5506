//go:build e2e

package lake

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/compact"
	"github.com/lakemirror/lakemirror/internal/lake/maintain"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// After a compaction of the mirror and enough batches to expire the
// Iceberg snapshots before it, each table's directory holds exactly the
// files its kept snapshots need: the data and delete files their
// manifests name live, those manifests and the kept manifest lists. The
// compaction's inputs and the position deletes it applied are gone; the
// expiries between compactions deleted manifest lists only.
// With manifest merges every 3 commits, the same.
func TestAutoExpireDeletesExactlyTheUnreferencedFiles(t *testing.T) {
	t.Run("batches only", func(t *testing.T) { testExpiryDeletesExactly(t, false) })
	t.Run("with manifest merges", func(t *testing.T) { testExpiryDeletesExactly(t, true) })
}

func testExpiryDeletesExactly(t *testing.T, merges bool) {
	ctx := context.Background()
	s := sample.Generate(sample.Options{Seed: 13, Inserts: 40, Updates: 150, Deletes: 10})
	p := newLakePipeline(t, merge.HistoryOptions{})
	msgs := s.Clean
	p.batch(msgs[:5])
	setTableProps(t, p, iceberg.Properties{maintain.PropSnapshotsRetain: "4"})
	if merges {
		mergeManifestsEvery(t, 3)
		setTableProps(t, p, iceberg.Properties{table.ManifestMinMergeCountKey: "3"})
	}
	msgs = msgs[5:]
	for range 8 {
		p.batch(msgs[:5])
		msgs = msgs[5:]
	}
	before := mirrorDump(t, p)
	mirrorFiles := onDisk(t, p, p.name.Mirror(), "data", ".parquet")
	res, err := compact.Compact(ctx, p.cat, p.name.Mirror(), compact.Options{})
	if err != nil || res.Rewritten < 2 || res.RemovedDeleteFiles == 0 {
		t.Fatalf("compaction %+v, %v", res, err)
	}
	for range 8 { // the snapshots before the compaction expire
		p.batch(msgs[:5])
		msgs = msgs[5:]
	}
	checkFilesExact(t, p)
	// the compaction's inputs went with the snapshots before it
	after := onDisk(t, p, p.name.Mirror(), "data", ".parquet")
	for _, f := range mirrorFiles {
		if slices.Contains(after, f) {
			t.Errorf("%s, compacted away, is still on disk", f)
		}
	}
	if got := mirrorDump(t, p); got == before {
		t.Fatal("the batches after the compaction changed nothing: the test needs them to")
	}
}

// checkFilesExact checks that each of p's tables holds on disk exactly
// the files its kept Iceberg snapshots name: the data and delete files
// their manifests name live, those manifests and the manifest lists.
func checkFilesExact(t *testing.T, p *lakePipeline) {
	t.Helper()
	for _, ident := range []table.Identifier{p.name.Mirror(), p.name.History(), p.name.Bronze()} {
		tbl, fs := loadWithFS(t, p, ident)
		live, manifests, lists := map[string]bool{}, map[string]bool{}, map[string]bool{}
		for _, snap := range tbl.Metadata().Snapshots() {
			lists[localPath(snap.ManifestList)] = true
			mans, err := snap.Manifests(fs)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range mans {
				manifests[localPath(m.FilePath())] = true
				for e, err := range m.Entries(fs, true) {
					if err != nil {
						t.Fatal(err)
					}
					live[localPath(e.DataFile().FilePath())] = true
				}
			}
		}
		if got := onDisk(t, p, ident, "data", ".parquet"); fmt.Sprint(got) != fmt.Sprint(sortedKeys(live)) {
			t.Errorf("%v: data and delete files on disk\n%v\nwant the %d the kept snapshots name\n%v", ident, got, len(live), sortedKeys(live))
		}
		var gotManifests, gotLists []string
		for _, f := range onDisk(t, p, ident, "metadata", ".avro") {
			if strings.HasPrefix(filepath.Base(f), "snap-") {
				gotLists = append(gotLists, f)
			} else {
				gotManifests = append(gotManifests, f)
			}
		}
		if fmt.Sprint(gotManifests) != fmt.Sprint(sortedKeys(manifests)) || fmt.Sprint(gotLists) != fmt.Sprint(sortedKeys(lists)) {
			t.Errorf("%v: manifests on disk %d, manifest lists %d; want the %d and %d the kept snapshots use", ident, len(gotManifests), len(gotLists), len(manifests), len(lists))
		}
	}
}

// onDisk lists the files under ident's location/sub whose names end in
// suffix, sorted.
func onDisk(t *testing.T, p *lakePipeline, ident table.Identifier, sub, suffix string) []string {
	t.Helper()
	tbl, _ := loadWithFS(t, p, ident)
	var out []string
	root := filepath.Join(localPath(tbl.Location()), sub)
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, suffix) {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// loadWithFS loads ident of p's catalog and its file IO.
func loadWithFS(t *testing.T, p *lakePipeline, ident table.Identifier) (*table.Table, iceio.IO) {
	t.Helper()
	ctx := context.Background()
	tbl, err := p.cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return tbl, fs
}

func localPath(p string) string { return filepath.Clean(strings.TrimPrefix(p, "file://")) }

func sortedKeys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }
