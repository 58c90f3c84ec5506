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

	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// setTableProps sets props on the pipeline's mirror, history and bronze
// tables (created by a first batch).
func setTableProps(t *testing.T, p *lakePipeline, props iceberg.Properties) {
	t.Helper()
	ctx := context.Background()
	for _, ident := range []table.Identifier{p.name.Mirror(), p.name.History(), p.name.Bronze()} {
		tbl, err := p.cat.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		tx := tbl.NewTransaction()
		if err := tx.SetProperties(props); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshotsOf returns the number of snapshots ident keeps and the number
// of manifest lists (snap-*.avro) in its metadata directory.
func snapshotsOf(t *testing.T, p *lakePipeline, ident table.Identifier) (snapshots, manifestLists int) {
	t.Helper()
	tbl, err := p.cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	return len(tbl.Metadata().Snapshots()), len(metadataFiles(t, tbl, "snap-*.avro"))
}

// With lakemirror.snapshots.retain = 4, a commit that leaves a table with
// more than 6 snapshots expires all but the newest 4 and deletes their
// manifest lists; the mirror, the history and the checkpoint are exactly
// those of a pipeline that keeps every snapshot.
func TestAutoExpireKeepsSnapshotsBounded(t *testing.T) {
	s := sample.Generate(sample.Options{Seed: 11, Inserts: 30, Updates: 60, Deletes: 10})
	kept := newLakePipeline(t, merge.HistoryOptions{})
	setRetain := func(p *lakePipeline, v string) {
		setTableProps(t, p, iceberg.Properties{PropSnapshotsRetain: v})
	}
	expired := newLakePipeline(t, merge.HistoryOptions{})
	msgs := s.Clean
	expired.batch(msgs[:5])
	kept.batch(msgs[:5])
	setRetain(expired, "4")
	setRetain(kept, "0")
	msgs = msgs[5:]
	// counts after each further batch: 2..6 grow, the 7th expires to 4
	want := []int{2, 3, 4, 5, 6, 4, 5, 6, 4, 5, 6, 4}
	for i, w := range want {
		expired.batch(msgs[:5])
		kept.batch(msgs[:5])
		msgs = msgs[5:]
		for _, ident := range []table.Identifier{expired.name.Mirror(), expired.name.History(), expired.name.Bronze()} {
			n, lists := snapshotsOf(t, expired, ident)
			if n != w || lists != w {
				t.Fatalf("after batch %d: %v keeps %d snapshots and %d manifest lists, want %d", i+2, ident, n, lists, w)
			}
		}
	}
	if n, _ := snapshotsOf(t, kept, kept.name.Mirror()); n != len(want)+1 {
		t.Fatalf("retain 0: the mirror keeps %d snapshots, want all %d", n, len(want)+1)
	}
	if got, want := mirrorLines(t, expired.cat), mirrorLines(t, kept.cat); got != want || got == "" {
		t.Fatalf("mirror with expiry:\n%s\nwithout:\n%s", got, want)
	}
	if got, want := expired.historyLines(), kept.historyLines(); got != want || got == "" {
		t.Fatalf("history with expiry:\n%s\nwithout:\n%s", got, want)
	}
	for _, p := range []*lakePipeline{expired, kept} {
		tbl, err := p.cat.LoadTable(context.Background(), p.name.Mirror())
		if err != nil {
			t.Fatal(err)
		}
		cp, err := ReadCheckpoint(tbl)
		if err != nil || cp.BatchSeq != int64(len(want)+1) {
			t.Fatalf("checkpoint %+v, %v; want batch %d", cp, err, len(want)+1)
		}
	}
}

// A table that sets history.expire.max-snapshot-age-ms keeps every
// snapshot younger than that, whatever lakemirror.snapshots.retain says.
func TestAutoExpireHonoursMaxSnapshotAge(t *testing.T) {
	s := sample.Generate(sample.Options{Seed: 12, Inserts: 30, Updates: 30})
	p := newLakePipeline(t, merge.HistoryOptions{})
	msgs := s.Clean
	p.batch(msgs[:5])
	setTableProps(t, p, iceberg.Properties{PropSnapshotsRetain: "2", table.MaxSnapshotAgeMsKey: "86400000"})
	for range 8 {
		msgs = msgs[5:]
		p.batch(msgs[:5])
	}
	if n, lists := snapshotsOf(t, p, p.name.Mirror()); n != 9 || lists != 9 {
		t.Fatalf("the mirror keeps %d snapshots and %d manifest lists, want all 9", n, lists)
	}
}

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
	setTableProps(t, p, iceberg.Properties{PropSnapshotsRetain: "4"})
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
	res, err := Compact(ctx, p.cat, p.name.Mirror(), CompactOptions{})
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
