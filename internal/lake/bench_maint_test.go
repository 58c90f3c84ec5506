package lake

import (
	"context"
	"testing"

	"github.com/lakemirror/lakemirror/internal/lake/compact"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// tableStats counts a table's live data files and delete files.
func tableStats(b *testing.B, p *lakePipeline) (dataFiles, deleteFiles int) {
	tbl, err := p.cat.LoadTable(context.Background(), p.name.Mirror())
	if err != nil {
		b.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	dels := map[string]bool{}
	for _, t := range tasks {
		for _, d := range t.DeleteFiles {
			dels[d.FilePath()] = true
		}
	}
	return len(tasks), len(dels)
}

func fullScan(b *testing.B, p *lakePipeline) int {
	tbl, err := p.cat.LoadTable(context.Background(), p.name.Mirror())
	if err != nil {
		b.Fatal(err)
	}
	at, err := tbl.Scan().ToArrowTable(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer at.Release()
	return int(at.NumRows())
}

// benchBatches is the number of small batches before the scan benchmark.
var benchBatches = 1000

// BenchmarkScanAfterSmallBatches measures a full scan of the mirror after
// 1,000 small batches (5 records each: mostly updates, so most batches
// add a data file and a position-delete file), before and after one
// compaction, and reports the file counts.
func BenchmarkScanAfterSmallBatches(b *testing.B) {
	p := newLakePipeline(b, merge.HistoryOptions{})
	s := sample.Generate(sample.Options{Seed: 9, Inserts: 200, Updates: 4700, Deletes: 100, Tombstones: false, Envelope: true})
	msgs := s.Clean
	for i := 0; i < benchBatches && len(msgs) > 0; i++ {
		n := min(5, len(msgs))
		p.batch(msgs[:n])
		msgs = msgs[n:]
	}
	rows := 0
	b.Run("before", func(b *testing.B) {
		d, del := tableStats(b, p)
		b.ReportMetric(float64(d), "data-files")
		b.ReportMetric(float64(del), "delete-files")
		for i := 0; i < b.N; i++ {
			rows = fullScan(b, p)
		}
		b.ReportMetric(float64(rows), "rows")
	})
	if _, err := compact.Compact(context.Background(), p.cat, p.name.Mirror(), compact.Options{}); err != nil {
		b.Fatal(err)
	}
	b.Run("after", func(b *testing.B) {
		d, del := tableStats(b, p)
		b.ReportMetric(float64(d), "data-files")
		b.ReportMetric(float64(del), "delete-files")
		for i := 0; i < b.N; i++ {
			if got := fullScan(b, p); got != rows {
				b.Fatalf("compaction changed the row count: %d → %d", rows, got)
			}
		}
		b.ReportMetric(float64(rows), "rows")
	})
}

// benchHistory applies one generated stream in batches of 100 through
// bronze, mirror and history (and the late-key rebuild when late events
// arrive), on a fresh catalog per iteration, and reports events/s.
func benchHistory(b *testing.B, late int) {
	s := sample.Generate(sample.Options{Seed: 11, Inserts: 300, Updates: 1500, Deletes: 100, Late: late, Tombstones: true, Envelope: true})
	events := 0
	rebuilt := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		p := newLakePipeline(b, merge.HistoryOptions{})
		b.StartTimer()
		msgs := s.Delivered
		for len(msgs) > 0 {
			n := min(100, len(msgs))
			p.batch(msgs[:n])
			msgs = msgs[n:]
		}
		events += len(s.Delivered)
		rebuilt += p.rebuilt
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(rebuilt)/float64(b.N), "rebuilt-keys/op")
}

func BenchmarkHistoryInOrder(b *testing.B)   { benchHistory(b, 0) }
func BenchmarkHistoryLateHeavy(b *testing.B) { benchHistory(b, 400) }
