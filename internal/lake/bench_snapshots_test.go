package lake

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// BenchmarkBatchAfterCommits measures one small batch (5 records through
// bronze, mirror and history) on tables that already hold many Iceberg
// snapshots: every commit rewrites the table's metadata.json, which lists
// every retained snapshot, and every load parses it, so a batch's fixed
// cost grows with the snapshots a table keeps. It reports the mirror's
// metadata.json size. LAKEMIRROR_BENCH_COMMITS sets the commits made
// first (default 500).
func BenchmarkBatchAfterCommits(b *testing.B) {
	commits := 500
	if v, err := strconv.Atoi(os.Getenv("LAKEMIRROR_BENCH_COMMITS")); err == nil {
		commits = v
	}
	p := newLakePipeline(b, merge.HistoryOptions{})
	s := sample.Generate(sample.Options{Seed: 9, Inserts: 200, Updates: 40000, Deletes: 100, Envelope: true})
	msgs := s.Clean
	next := func() {
		n := min(5, len(msgs))
		if n == 0 {
			b.Fatal("benchmark ran out of sample events")
		}
		p.batch(msgs[:n])
		msgs = msgs[n:]
	}
	for range commits {
		next()
	}
	b.ResetTimer()
	for b.Loop() {
		next()
	}
	b.StopTimer()
	tbl, err := p.cat.LoadTable(context.Background(), p.name.Mirror())
	if err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(strings.TrimPrefix(tbl.MetadataLocation(), "file://"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(tbl.Metadata().Snapshots())), "snapshots")
	b.ReportMetric(float64(st.Size()), "metadata-bytes")
}
