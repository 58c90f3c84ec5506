package keyindex

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// BenchmarkSpilledIndex measures the index under a budget, for a table
// keyed by one bigint with PostgreSQL positions: LAKEMIRROR_INDEX_KEYS
// keys (default 1,000,000) are added in batches of 50,000 in key order
// (as a snapshot load delivers them: Release, Resolve, SetAt and
// SetHeadAt per key, Flush), under a budget of LAKEMIRROR_INDEX_BUDGET
// bytes for the worker (default 1 GiB) and a quarter of it for the
// table. It reports the build time, the RAM per key (Go heap in use
// after a GC plus pebble's block cache and memtables; and the process's
// resident set), the disk per key, and, per b.N, one batch of 50,000
// random existing keys: looked up (Resolve, in key order), each given a
// new position and head, flushed as one pebble batch (lookups/s counts
// the lookup alone). LAKEMIRROR_INDEX_PROGRESS=1 prints the build's
// progress.
func BenchmarkSpilledIndex(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("LAKEMIRROR_INDEX_KEYS")); err == nil && v > 0 {
		n = v
	}
	worker := int64(1 << 30)
	if v, err := strconv.ParseInt(os.Getenv("LAKEMIRROR_INDEX_BUDGET"), 10, 64); err == nil && v > 0 {
		worker = v
	}
	// LAKEMIRROR_INDEX_PROGRESS=1 prints the build's progress every 10 M
	// keys to stderr (a 1 B-key build takes most of an hour)
	progress := os.Getenv("LAKEMIRROR_INDEX_PROGRESS") != ""
	const batch = 50_000
	key := func(i int) cdc.Key {
		var k [9]byte
		k[0] = 0x10
		binary.BigEndian.PutUint64(k[1:], uint64(i)^(1<<63))
		return cdc.Key(k[:])
	}
	budget := NewBudget(worker, worker/4)
	defer budget.Close()
	var meter Meter
	ix := New(0, 0)
	ix.SetBudget(budget, b.TempDir(), &meter)
	defer ix.Close()
	keys := make([]cdc.Key, 0, batch)
	entries := make([]uint32, batch)
	start := time.Now()
	for from := 0; from < n; from += batch {
		keys = keys[:0]
		for i := from; i < min(from+batch, n); i++ {
			keys = append(keys, key(i))
		}
		if err := ix.Release(); err != nil {
			b.Fatal(err)
		}
		if err := ix.Resolve(keys, entries[:len(keys)]); err != nil {
			b.Fatal(err)
		}
		for j, e := range entries[:len(keys)] {
			i := from + j
			ix.SetAt(e, cdc.SeqOf(uint64(i), uint64(i)), false, 0, int64(i))
			ix.SetHeadAt(e, uint64(i)*100+8)
		}
		if err := ix.Flush(); err != nil {
			b.Fatal(err)
		}
		if progress && (from+batch)%10_000_000 == 0 {
			fmt.Fprintf(os.Stderr, "%s %d keys added in %v, disk %d B\n", time.Now().Format(time.TimeOnly), from+batch,
				time.Since(start).Round(time.Second), meter.Usage().DiskBytes)
		}
	}
	if err := ix.Release(); err != nil {
		b.Fatal(err)
	}
	build := time.Since(start)
	ramPerKey := func() (heap, pebble, rss float64) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		var p int64
		if ix.spill != nil {
			m := ix.spill.db.Metrics()
			p = m.BlockCache.Size + int64(m.MemTable.Size)
		}
		return float64(ms.HeapInuse) / float64(n), float64(p) / float64(n), float64(vmRSS()) / float64(n)
	}
	heap, peb, rss := ramPerKey()
	b.Logf("%d keys built in %v (%.0f keys/s), spilled %v; RAM per key: Go heap %.2f B + pebble cache and memtables %.2f B (%s); process RSS %.2f B; disk %.2f B/key",
		n, build.Round(time.Millisecond), float64(n)/build.Seconds(), ix.Spilled(), heap, peb, cgoNote(), rss, float64(meter.Usage().DiskBytes)/float64(n))

	r := rand.New(rand.NewPCG(1, 2))
	var lookup, lookupCPU, batchCPU time.Duration
	// LAKEMIRROR_INDEX_ROUNDS=k measures k batches per b.N (a 1 B-key
	// build is too long to repeat: run it with -benchtime 1x)
	rounds := b.N
	if v, err := strconv.Atoi(os.Getenv("LAKEMIRROR_INDEX_ROUNDS")); err == nil && v > 0 {
		rounds = v * b.N
	}
	b.ResetTimer()
	for it := 0; it < rounds; it++ {
		keys = keys[:0]
		for range batch {
			keys = append(keys, key(r.IntN(n)))
		}
		if err := ix.Release(); err != nil {
			b.Fatal(err)
		}
		t0, c0 := time.Now(), cpuTime()
		if err := ix.Resolve(keys, entries); err != nil {
			b.Fatal(err)
		}
		lookup += time.Since(t0)
		lookupCPU += cpuTime() - c0
		for j, e := range entries {
			if !ix.StoredAt(e).Found {
				b.Fatalf("key %x missing", string(keys[j]))
			}
			ix.SetAt(e, cdc.SeqOf(uint64(n+it), uint64(j)), false, 1, int64(j))
			ix.SetHeadAt(e, uint64(n+it)*100+uint64(j))
		}
		if err := ix.Flush(); err != nil {
			b.Fatal(err)
		}
		batchCPU += cpuTime() - c0
	}
	b.StopTimer()
	heap2, peb2, rss2 := ramPerKey()
	b.ReportMetric(float64(batch*rounds)/lookup.Seconds(), "lookups/s")
	b.ReportMetric(float64(batch*rounds)/lookupCPU.Seconds(), "lookups/cpu-s")
	b.ReportMetric(batchCPU.Seconds()/float64(rounds), "batch-cpu-s")
	b.ReportMetric(heap2+peb2, "ram-bytes/key")
	b.ReportMetric(rss2, "rss-bytes/key")
	b.ReportMetric(float64(meter.Usage().DiskBytes)/float64(n), "disk-bytes/key")
	b.ReportMetric(build.Seconds(), "build-s")
	b.Logf("after %d batches: RAM per key Go heap %.2f B + pebble %.2f B, RSS %.2f B; lookup of a 50,000-key batch %v",
		rounds, heap2, peb2, rss2, (lookup / time.Duration(rounds)).Round(time.Microsecond))
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// vmRSS is the process's resident set size in bytes (0 when unknown).
func vmRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v << 10
		}
	}
	return 0
}

// cgoNote says where pebble's cache lives: outside the Go heap with cgo.
func cgoNote() string {
	if slices.Contains(os.Environ(), "CGO_ENABLED=0") {
		return "in the Go heap too"
	}
	return "outside the Go heap with cgo"
}
