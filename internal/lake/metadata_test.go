package lake

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

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
			for _, k := range []string{PropPendingRebuild, PropCovered, PropTruncates} {
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
	if _, ok := hist.Properties()[PropPendingRebuild]; !ok {
		t.Fatalf("the history table lost its %s property", PropPendingRebuild)
	}
}

// metadataFiles returns the files in tbl's metadata directory (on the
// local file system) whose names match pattern.
func metadataFiles(t *testing.T, tbl *table.Table, pattern string) []string {
	t.Helper()
	dir := filepath.Dir(strings.TrimPrefix(tbl.MetadataLocation(), "file://"))
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// SizeOf reports the table's snapshots, files and rows from its current
// metadata and the size of its current metadata.json.
func TestSizeOf(t *testing.T) {
	ctx := context.Background()
	s := sample.Generate(sample.Options{Seed: 5, Inserts: 30, Updates: 30})
	p := newLakePipeline(t, merge.HistoryOptions{})
	for d := s.Delivered; len(d) > 0; {
		n := min(len(d), 20)
		p.batch(d[:n])
		d = d[n:]
	}
	tbl, err := p.cat.LoadTable(ctx, p.name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	sz, err := SizeOf(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(strings.TrimPrefix(tbl.MetadataLocation(), "file://"))
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	deletes := map[string]bool{}
	var records int64
	for _, task := range tasks {
		records += task.File.Count()
		for _, d := range task.DeleteFiles {
			deletes[d.FilePath()] = true
		}
	}
	want := TableSize{Snapshots: len(tbl.Metadata().Snapshots()), MetadataFiles: sz.MetadataFiles, MetadataBytes: info.Size(),
		DataFiles: int64(len(tasks)), DeleteFiles: int64(len(deletes)), Records: records, FilesBytes: sz.FilesBytes}
	if sz != want {
		t.Fatalf("SizeOf = %+v, want %+v", sz, want)
	}
	if sz.Snapshots != 3 || sz.MetadataFiles < 2 || sz.FilesBytes <= 0 {
		t.Fatalf("SizeOf = %+v after 3 batches", sz)
	}
}
