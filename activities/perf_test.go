package activities

// The benchmark workload (scripts/bench) through the apply path in
// process: the same code ApplyBatch and RebuildKeys run (decode, prepare,
// bronze, mirror, history, late-key rebuild), without Temporal and Kafka,
// with per-stage times and a CPU profile. It runs only when asked:
//
//	LAKEMIRROR_PERF_DATA=DIR [LAKEMIRROR_PERF_BATCH=50000] [LAKEMIRROR_PERF_CPUPROFILE=FILE] \
//	  go test -run TestPerfWorkload -v -timeout 0 ./activities/
//
// DIR is a workload made by `go run ./scripts/bench/benchctl gen` (or
// ../shared/bench-peers/gen.py): snapshot.jsonl, changes.jsonl,
// orders.table.json. It prints one PERF JSON line per phase.
// LAKEMIRROR_PERF_CPUPROFILE profiles the changes phase,
// LAKEMIRROR_PERF_INITIAL_CPUPROFILE the initial load;
// LAKEMIRROR_PERF_SKIP_CHANGES=1 runs the initial load only.
// LAKEMIRROR_PERF_INDEX_MEMORY and LAKEMIRROR_PERF_INDEX_TABLE_MEMORY
// (sizes, e.g. 256MiB and 0) put the key index under that budget
// (keyindex.Budget; a table budget of 0 spills it at once); unset, it
// stays in RAM. LAKEMIRROR_PERF_MIRROR_ONLY=1 writes the mirror alone
// (no history, no bronze: the worker's --history=false --bronze=false).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/config"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/schemas"
)

func heapMiB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

func TestPerfWorkload(t *testing.T) {
	dir := os.Getenv("LAKEMIRROR_PERF_DATA")
	if dir == "" {
		t.Skip("LAKEMIRROR_PERF_DATA not set")
	}
	batch, _ := strconv.Atoi(os.Getenv("LAKEMIRROR_PERF_BATCH"))
	if batch == 0 {
		batch = 50000
	}
	def, err := schemas.LoadTableDefinition(filepath.Join(dir, "orders.table.json"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cat, err := lake.OpenCatalog(ctx, lake.CatalogConfig{LocalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	a := New(cat, nil)
	a.StateDir = t.TempDir()
	if v := os.Getenv("LAKEMIRROR_PERF_INDEX_MEMORY"); v != "" {
		worker, err := config.ParseBytes(v)
		if err != nil {
			t.Fatal(err)
		}
		table, err := config.ParseBytes(os.Getenv("LAKEMIRROR_PERF_INDEX_TABLE_MEMORY"))
		if err != nil {
			t.Fatal(err)
		}
		a.IndexBudget = keyindex.NewBudget(worker, table)
		defer a.IndexBudget.Close()
	}
	spec := TableSpec{Table: "bench.orders", Topic: "bench.public.orders", KeyColumns: []string{"order_id"}, Columns: def.Columns, MaxEvents: batch}.Defaults()
	spec.MaxQuarantine = batch
	if os.Getenv("LAKEMIRROR_PERF_MIRROR_ONLY") != "" {
		spec.WithoutHistory, spec.WithoutBronze = true, true
	}
	st, name, err := a.state(spec)
	if err != nil {
		t.Fatal(err)
	}
	var seq, offset int64
	before := heapMiB()
	run := func(phase, file string, profile string) {
		f, err := os.Open(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		if profile != "" {
			pf, err := os.Create(profile)
			if err != nil {
				t.Fatal(err)
			}
			if err := pprof.StartCPUProfile(pf); err != nil {
				t.Fatal(err)
			}
			defer func() { pprof.StopCPUProfile(); pf.Close() }()
		}
		var per []float64
		stages := map[string]float64{}
		records, rebuilt := 0, 0
		var cpu0 = cpuSeconds()
		start := time.Now()
		for {
			var recs []schemas.Record
			for len(recs) < batch && sc.Scan() {
				recs = append(recs, schemas.Record{Topic: spec.Topic, Offset: offset, Value: append([]byte(nil), sc.Bytes()...),
					Key: fmt.Appendf(nil, `{"order_id":%d}`, offset)})
				offset++
			}
			if len(recs) == 0 {
				break
			}
			records += len(recs)
			seq++
			b := lake.Batch{ID: fmt.Sprintf("%s#%d", spec.Table, seq), Seq: seq, Topic: spec.Topic,
				Ranges: []lake.Range{{From: recs[0].Offset, To: offset}}, EndOffsets: lake.Offsets{0: offset}}
			tb := time.Now()
			stage := ""
			st.mu.Lock()
			res, _, err := a.applyRecords(ctx, st, name, spec, b, recs, nil, "", &stage)
			if err == nil && res.History.Pending+res.Mirror.Pending > 0 {
				tr := time.Now()
				var rr RebuildResult
				rr, err = a.rebuildPending(ctx, st, name)
				rebuilt += rr.Keys
				stages["rebuild"] += time.Since(tr).Seconds()
			}
			st.mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range res.StageSeconds {
				stages[k] += v
			}
			per = append(per, time.Since(tb).Seconds())
		}
		secs := time.Since(start).Seconds()
		out := map[string]any{"phase": phase, "records": records, "batches": len(per), "seconds": secs,
			"records_per_s": float64(records) / secs, "cpu_s": cpuSeconds() - cpu0, "per_batch_s": per,
			"rebuilt_keys": rebuilt, "stages_s": stages, "heap_mib_after": heapMiB()}
		if ix := st.mirror.Index(); ix != nil {
			out["index_keys"] = ix.Keys()
			out["index_bytes_per_key"] = float64(ix.Bytes()) / float64(max(ix.Keys(), 1))
		}
		out["state_log_mib"] = float64(st.mirror.State().LogBytes()) / (1 << 20)
		if u, _ := st.mirror.State().Memory(); u.Spilled {
			out["index_spilled"], out["index_ram_mib"], out["index_disk_mib"] = true, float64(u.RAMBytes)/(1<<20), float64(u.DiskBytes)/(1<<20)
		}
		out["max_rss_mib"] = maxRSSMiB()
		js, _ := json.Marshal(out)
		fmt.Println("PERF " + string(js))
	}
	fmt.Printf("PERF {\"heap_mib_before\": %.1f}\n", before)
	run("initial", "snapshot.jsonl", os.Getenv("LAKEMIRROR_PERF_INITIAL_CPUPROFILE"))
	if os.Getenv("LAKEMIRROR_PERF_SKIP_CHANGES") == "" {
		run("changes", "changes.jsonl", os.Getenv("LAKEMIRROR_PERF_CPUPROFILE"))
	}
}

// cpuSeconds is the process's user+system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// maxRSSMiB is the process's peak resident set so far, in MiB.
func maxRSSMiB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024 // KiB on Linux
}
