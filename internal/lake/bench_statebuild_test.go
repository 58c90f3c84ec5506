package lake

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
)

// BenchmarkStateBuild builds a worker's local state from a mirror and
// history of LAKEMIRROR_BENCH_KEYS keys (default 1,000,000; every key one
// live mirror row and one open history version, as after an initial
// load), written by the lake writers, under an index budget of
// LAKEMIRROR_BENCH_TABLE_MIB MiB per table (default 32; the worker's is
// four times that, so its block cache is half the table budget): past it
// the key index spills to disk during the build, as at 30 M rows with
// the worker's 256 MiB. The tables are kept in LAKEMIRROR_BENCH_DIR when
// set (written once per key count, reused by later runs), else in a
// temporary directory. Keys arrive in a scrambled order, so a file holds
// keys from the whole key range.
//
// Reported: µs/key (build time per key), log-B/key (chain log bytes per
// key), index-disk-B/key (the spilled index's disk bytes per key) and
// peak-heap-MiB (the Go heap's highest in-use bytes during the build,
// sampled every 20 ms) and run-B/key (the sorted runs the build wrote to
// local disk, removed after it).
func BenchmarkStateBuild(b *testing.B) {
	ctx := context.Background()
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("LAKEMIRROR_BENCH_KEYS")); err == nil && v > 0 {
		n = v
	}
	tableMiB := int64(32)
	if v, err := strconv.Atoi(os.Getenv("LAKEMIRROR_BENCH_TABLE_MIB")); err == nil && v > 0 {
		tableMiB = int64(v)
	}
	dir := b.TempDir()
	if base := os.Getenv("LAKEMIRROR_BENCH_DIR"); base != "" {
		dir = filepath.Join(base, fmt.Sprintf("tables-%d", n))
	}
	if _, err := os.Stat(filepath.Join(dir, "done")); err != nil {
		os.RemoveAll(dir)
		writeBuildBenchTables(b, dir, n)
		if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		budget := keyindex.NewBudget(4*tableMiB<<20, tableMiB<<20)
		cat, err := OpenCatalog(ctx, CatalogConfig{LocalDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		builds := map[string]int{}
		stateDir := b.TempDir()
		m, _ := NewWriters(cat, testTable, orderKey, WriterOptions{StateDir: stateDir, History: true, IndexBudget: budget,
			OnBuild: func(r string) { builds[r]++ }})
		runtime.GC()
		var peak atomic.Uint64
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
			t := time.NewTicker(20 * time.Millisecond)
			defer t.Stop()
			for {
				metrics.Read(s)
				if v := s[0].Value.Uint64() + s[1].Value.Uint64(); v > peak.Load() {
					peak.Store(v)
				}
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		}()
		start := time.Now()
		if err := m.EnsureState(ctx); err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		close(stop)
		<-sampled
		u, logBytes := m.State().Memory()
		if fmt.Sprint(builds) != "map[new:1]" || m.Index().Len() != n {
			b.Fatalf("builds %v, %d keys; want map[new:1], %d keys", builds, m.Index().Len(), n)
		}
		b.ReportMetric(float64(took.Microseconds())/float64(n), "µs/key")
		b.ReportMetric(float64(logBytes)/float64(n), "log-B/key")
		b.ReportMetric(float64(u.DiskBytes)/float64(n), "index-disk-B/key")
		b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
		runs, runBytes := m.State().BuildRuns()
		b.ReportMetric(float64(runBytes)/float64(n), "run-B/key")
		b.Logf("%d keys, table budget %d MiB: build %v, spilled %v, index %d B in RAM, %d B on disk, log %d B, %d sorted runs of %d B in all",
			n, tableMiB, took.Round(time.Millisecond), u.Spilled, u.RAMBytes, u.DiskBytes, logBytes, runs, runBytes)
		m.State().Close()
		budget.Close()
	}
}

// writeBuildBenchTables writes n keys (creates in batches of 250,000,
// scrambled order) to the mirror and history of a catalog under dir.
func writeBuildBenchTables(b *testing.B, dir string, n int) {
	b.Helper()
	cat, err := OpenCatalog(context.Background(), CatalogConfig{LocalDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	m, h := NewWriters(cat, testTable, orderKey, WriterOptions{StateDir: b.TempDir(), History: true})
	const per = 250_000
	statuses := []string{"placed", "paid", "shipped", "returned"}
	for seq, from := int64(1), 0; from < n; seq, from = seq+1, from+per {
		var evs []*cdc.Event
		for i := from; i < min(from+per, n); i++ {
			// a bijection of [0, n) (the multiplier is a prime above
			// n): scrambled, every key once
			id := int64((uint64(i)*2654435761 + 12345) % uint64(n))
			evs = append(evs, ev(cdc.OpCreate, uint64(i+1), id, statuses[i%4], int64(i%100000)))
		}
		ctx := WithTableCache(context.Background())
		prep, err := m.Prepare(ctx, evs)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := h.Ensure(ctx, prep.Table); err != nil {
			b.Fatal(err)
		}
		if _, _, err := m.Apply(ctx, batch(seq), prep.Events); err != nil {
			b.Fatal(err)
		}
		pre, known := m.PreBatchSeqs()
		if _, err := h.Apply(ctx, batch(seq), prep.Events, pre, known); err != nil {
			b.Fatal(err)
		}
	}
	m.State().Close()
}
