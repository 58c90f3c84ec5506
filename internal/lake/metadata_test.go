package lake

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/maintain"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
)

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
	sz, err := maintain.SizeOf(ctx, tbl)
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
	want := maintain.TableSize{Snapshots: len(tbl.Metadata().Snapshots()), MetadataFiles: sz.MetadataFiles, MetadataBytes: info.Size(),
		DataFiles: int64(len(tasks)), DeleteFiles: int64(len(deletes)), Records: records, FilesBytes: sz.FilesBytes}
	if sz != want {
		t.Fatalf("SizeOf = %+v, want %+v", sz, want)
	}
	if sz.Snapshots != 3 || sz.MetadataFiles < 2 || sz.FilesBytes <= 0 {
		t.Fatalf("SizeOf = %+v after 3 batches", sz)
	}
}
