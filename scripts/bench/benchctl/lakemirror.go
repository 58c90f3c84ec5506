package main

// The lakemirror runner: the dev worker (./worker/dev, or `worker -dev` of
// older commits: embedded Temporal and SQLite Iceberg
// catalog; kfake, or an external Kafka) driven by the starter CLI, with the
// input produced by franz-go.

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/valyala/fastjson"
	_ "modernc.org/sqlite"
)

type lmOpts struct {
	data, work, out, bin string
	batch, portBase      int
	kafkaBrokers         string // external Kafka; empty = the worker's embedded kfake
	brokerPid            int
	startArgs            []string
	produceWith          string
	compression          string
	topic, table         string
	timeout              time.Duration
	maxWait              string
	cpuProfile           string // directory for the worker's CPU profile pieces; "" = none
	workerArgs           []string
	restart              bool // stop the worker after the initial load, start another on the same state
	stream               bool // generate the workload into the producer (gen's options in gen); --data gets only its checker files
	gen                  genOpts
}

func lakemirrorCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("lakemirror", flag.ExitOnError)
	var o lmOpts
	var startArgs, system string
	fs.StringVar(&system, "system", "lakemirror", "the system's name in the RESULT JSON (run.sh: lakemirror, or lakemirror-mirror with --start-args \"--history=false --bronze=false\")")
	fs.StringVar(&o.data, "data", "", "workload directory (benchctl gen)")
	fs.IntVar(&o.batch, "batch", 50_000, "--batch-size of the table")
	fs.StringVar(&o.work, "work", "", "scratch directory (wiped first)")
	fs.StringVar(&o.out, "out", "", "RESULT JSON to write")
	fs.StringVar(&o.bin, "bin", "/tmp/lm", "directory with the starter and worker binaries")
	fs.IntVar(&o.portBase, "port-base", 37000, "ports: Temporal base+233 (UI base+1233), kfake base+92, metrics base+464")
	fs.StringVar(&o.kafkaBrokers, "kafka-brokers", "", "an external Kafka (host:port) instead of the worker's embedded kfake")
	fs.IntVar(&o.brokerPid, "broker-pid", 0, "pid of the external Kafka broker, to report its CPU and RSS separately")
	fs.StringVar(&startArgs, "start-args", "", "extra arguments for `starter start`, space-separated (e.g. \"--history=false\")")
	fs.StringVar(&o.produceWith, "produce", "benchctl", "who produces the input: benchctl (franz-go, streaming) or starter (starter produce)")
	fs.StringVar(&o.compression, "compression", "snappy", "producer batch compression: snappy (franz-go's and starter produce's default), none, lz4, zstd")
	fs.StringVar(&o.topic, "topic", "bench.public.orders", "Kafka topic")
	fs.StringVar(&o.table, "table", "bench.orders", "Iceberg table")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Hour, "give up on a phase after this long")
	fs.StringVar(&o.maxWait, "max-wait", "1s", "--max-wait of the table")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "record the worker's CPU profile (-pprof) during the initial load and phase 2 into this directory, as initial-NN.pprof and phase2-NN.pprof pieces (merge: go tool pprof -proto DIR/*.pprof)")
	var workerArgs string
	fs.StringVar(&workerArgs, "worker-args", "", "extra flags for the dev worker, space-separated (e.g. \"--index-memory 1GiB\")")
	fs.BoolVar(&o.restart, "restart-before-changes", false, "after the initial load and the produce of the changes (the table paused), stop the worker gracefully (SIGINT) and start a new one on the same state and data directory; phase 2 then runs on it (needs --kafka-brokers: kfake's log would go with the worker)")
	fs.BoolVar(&o.stream, "stream", false, "generate the workload straight into Kafka (benchctl gen's generator and values, --rows, --changes, --seed; the late and redelivery settings of gen's defaults, lateness in batches of --batch) instead of reading --data's files; --data receives expected.parquet, orders.table.json and meta.json")
	fs.IntVar(&o.gen.rows, "rows", 1_000_000, "with --stream: N0, rows of the initial state")
	fs.IntVar(&o.gen.changes, "changes", 1_000_000, "with --stream: S, change events before redeliveries")
	var seed int64
	fs.Int64Var(&seed, "seed", 42, "with --stream: random seed")
	_ = fs.Parse(args)
	if o.data == "" || o.work == "" || o.out == "" {
		return errors.New("lakemirror: --data, --work and --out are required")
	}
	// gen's defaults (genCmd), lateness in batches of the table's --batch
	o.gen.batches, o.gen.lateLo, o.gen.lateHi, o.gen.dupFrac, o.gen.lateFrac = []int{o.batch}, 2, 4, 0.05, 0.05
	o.gen.seed, o.gen.parquetRowGroupMax = uint64(seed), 1<<20
	o.startArgs, o.workerArgs = strings.Fields(startArgs), strings.Fields(workerArgs)
	if o.restart && o.kafkaBrokers == "" {
		return errors.New("lakemirror: --restart-before-changes needs an external Kafka (--kafka-brokers)")
	}
	var err error
	for _, p := range []*string{&o.data, &o.work, &o.out, &o.bin} {
		if *p, err = filepath.Abs(*p); err != nil {
			return err
		}
	}
	o.gen.out = o.data
	if o.cpuProfile != "" {
		if o.cpuProfile, err = filepath.Abs(o.cpuProfile); err != nil {
			return err
		}
	}
	res := map[string]any{"system": system, "batch": o.batch, "data": o.data, "loadavg_start": loadavg(), "streamed": o.stream,
		"start_args": o.startArgs, "kafka": map[bool]string{true: "kfake (in the worker)", false: "apache (" + o.kafkaBrokers + ")"}[o.kafkaBrokers == ""]}
	if o.cpuProfile != "" {
		res["cpuprofile"] = o.cpuProfile // profiled: a few percent of CPU went to the profiler
	}
	runErr := runLakemirror(ctx, o, res)
	if runErr != nil {
		res["error"] = runErr.Error()
	}
	res["loadavg_end"] = loadavg()
	if err := writeJSON(o.out, res); err != nil {
		return err
	}
	b, _ := json.Marshal(res)
	fmt.Println("RESULT " + string(b))
	return runErr
}

type lmRun struct {
	o       lmOpts
	env     []string
	maddr   string
	brokers []string
	log     *os.File
}

// starter runs a starter command; its stderr (progress bars) goes to the log.
func (r *lmRun) starter(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(r.o.bin, "starter"), args...)
	cmd.Env = r.env
	var out, errOut bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = io.MultiWriter(r.log, &errOut)
	fmt.Fprintf(r.log, "%s $ starter %s\n", time.Now().Format("15:04:05.000"), strings.Join(args, " "))
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("starter %s: %w: %s %s", strings.Join(args, " "), err, lastLine(out.String()), lastLine(errOut.String()))
	}
	return out.String(), nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexAny(s, "\r\n"); i >= 0 { // progress bars redraw with \r
		s = s[i+1:]
	}
	return s
}

type lmStatus struct {
	Phase       string          `json:"phase"`
	Paused      bool            `json:"paused"`
	LastError   string          `json:"last_error"`
	LastBatchAt time.Time       `json:"last_batch_at"`
	BatchSeq    int64           `json:"batch_seq"`
	Totals      json.RawMessage `json:"totals"`
	LastBatch   json.RawMessage `json:"last_batch"`
	TotalLag    int64           `json:"total_lag"`
}

func (r *lmRun) status(ctx context.Context) (lmStatus, error) {
	var st lmStatus
	out, err := r.starter(ctx, "status", r.o.table, "--json")
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal([]byte(out), &st)
}

// phaseEnd is when a phase that began at t0 and whose `starter wait`
// returned at tWait ended: the workflow's record of its last batch
// (last_batch_at) when that lies in between, else tWait.
func phaseEnd(st lmStatus, t0, tWait time.Time) (time.Time, string) {
	if !st.LastBatchAt.IsZero() && st.LastBatchAt.After(t0) && !st.LastBatchAt.After(tWait.Add(time.Second)) {
		return st.LastBatchAt, "last_batch_at"
	}
	return tWait, "starter wait"
}

func runLakemirror(ctx context.Context, o lmOpts, res map[string]any) (err error) {
	var meta struct {
		Rows, Delivered int
	}
	var gs *genStream
	if o.stream {
		if o.produceWith != "benchctl" {
			return errors.New("--stream needs --produce benchctl")
		}
		meta.Rows, meta.Delivered = o.gen.rows, o.gen.changes+int(float64(o.gen.changes)*o.gen.dupFrac)
		gctx, cancel := context.WithCancel(ctx)
		defer cancel()
		gs = startGenStream(gctx, o.gen)
		defer func() {
			cancel()
			<-gs.fin
		}()
	} else if err := readJSON(filepath.Join(o.data, "meta.json"), &meta); err != nil {
		return err
	}
	if err := os.RemoveAll(o.work); err != nil {
		return err
	}
	lmDir := filepath.Join(o.work, "lm")
	if err := os.MkdirAll(lmDir, 0o755); err != nil {
		return err
	}
	tp, kp, mp := o.portBase+233, o.portBase+92, o.portBase+464
	r := &lmRun{o: o, maddr: fmt.Sprintf("127.0.0.1:%d", mp)}
	r.brokers = []string{fmt.Sprintf("127.0.0.1:%d", kp)}
	if o.kafkaBrokers != "" {
		r.brokers = strings.Split(o.kafkaBrokers, ",")
	}
	if r.log, err = os.Create(filepath.Join(o.work, "starter.log")); err != nil {
		return err
	}
	defer r.log.Close()
	var wenv []string // the worker gets its settings from flags only
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "KAFKA_BROKERS", "TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "METRICS_ADDR", "LAKEMIRROR_DATA_DIR",
			"CATALOG_TYPE", "CATALOG_URI", "CATALOG_PROPS", "WAREHOUSE", "SCHEMA_REGISTRY_URL", "LAKEMIRROR_SOURCES":
			continue
		}
		wenv = append(wenv, kv)
	}
	r.env = append(append([]string(nil), wenv...), "TEMPORAL_ADDRESS="+fmt.Sprintf("127.0.0.1:%d", tp),
		"KAFKA_BROKERS="+strings.Join(r.brokers, ","), "LAKEMIRROR_DATA_DIR="+lmDir)

	// the dev worker: ./worker/dev (worker-dev), or `worker -dev` of
	// commits before the production worker lost -dev
	wbin, wargs := filepath.Join(o.bin, "worker-dev"), []string{"-data-dir", lmDir}
	if _, err := os.Stat(wbin); err != nil {
		wbin, wargs = filepath.Join(o.bin, "worker"), []string{"-dev", "-data-dir", lmDir}
	}
	wargs = append(wargs, "-dev-kafka-port", strconv.Itoa(kp), "-dev-temporal-port", strconv.Itoa(tp),
		"-metrics-addr", r.maddr, "-log-level", "warn")
	if o.cpuProfile != "" {
		if err := os.MkdirAll(o.cpuProfile, 0o755); err != nil {
			return err
		}
		wargs = append(wargs, "-pprof")
	}
	if o.kafkaBrokers != "" {
		wargs = append(wargs, "-kafka-brokers", o.kafkaBrokers)
	}
	wargs = append(wargs, o.workerArgs...)
	wlog, err := os.Create(filepath.Join(o.work, "worker.log"))
	if err != nil {
		return err
	}
	defer wlog.Close()
	tStart := time.Now()
	w, err := startWorker(wbin, wargs, wenv, wlog)
	if err != nil {
		return err
	}
	bsamp := newSampler(o.brokerPid)
	defer bsamp.close()
	heap := newHeapPoller(r.maddr)
	defer heap.close()
	defer func() {
		// VmHWM of the worker (one process: Temporal, kfake, apply), then SIGINT
		if kib := statusKiB(w.pid, "VmHWM"); kib > 0 {
			res["worker_vmhwm_mib"] = mib(kib * 1024)
		}
		res["worker_cpu_total_s"] = round(cpuSeconds(w.pid), 1)
		w.stop(60 * time.Second)
		if o.brokerPid > 0 {
			res["broker_vmhwm_mib"] = mib(statusKiB(o.brokerPid, "VmHWM") * 1024)
		}
		if err == nil {
			err = r.collectTables(ctx, lmDir, res)
		}
		res["lm_dir_mib"] = dirSizes(lmDir)
	}()

	// ---- worker up
	if err := r.waitUp(ctx, w, tp, wlog.Name()); err != nil {
		return err
	}
	res["worker_startup_s"] = round(time.Since(tStart).Seconds(), 1)
	res["rss_idle_mib"] = w.samp.nowMiB()

	// ---- phase 1: initial load (snapshot reads through Kafka)
	n, secs, err := r.produce(ctx, filepath.Join(o.data, "snapshot.jsonl"), gs, false)
	if err != nil {
		return err
	}
	res["produce_snapshot_s"], res["produce_snapshot_records"] = round(secs, 2), n
	res["produce_snapshot_records_per_s"] = round(float64(n)/max(secs, 1e-9), 0)
	res["rss_after_produce_snapshot_mib"] = w.samp.nowMiB()
	m0, _ := scrape(r.maddr)
	w.samp.reset()
	bsamp.reset()
	heap.reset()
	c0, b0 := cpuSeconds(w.pid), cpuSeconds(o.brokerPid)
	t0 := time.Now()
	startArgs := append([]string{"start", o.topic, "--table", o.table, "--key", "order_id", "--batch-size", strconv.Itoa(o.batch),
		"--definition", filepath.Join(o.data, "orders.table.json"), "--max-wait", o.maxWait}, o.startArgs...)
	if help, err := r.starter(ctx, "start", "--help"); err == nil && strings.Contains(help, "--schedules") {
		// no maintenance while measuring (a compaction on the hour would land in a phase)
		startArgs = append(startArgs, "--schedules=false")
	}
	prof := startCPUProfile(ctx, o.cpuProfile, r.maddr, "initial")
	if _, err := r.starter(ctx, startArgs...); err != nil {
		return err
	}
	if _, err := r.starter(ctx, "wait", o.table, "--timeout", o.timeout.String()); err != nil {
		return err
	}
	tWait := time.Now()
	if err := prof.finish(); err != nil {
		return err
	}
	c1, b1 := cpuSeconds(w.pid), cpuSeconds(o.brokerPid)
	st1, err := r.status(ctx)
	if err != nil {
		return err
	}
	t1, how := phaseEnd(st1, t0, tWait)
	m1, _ := scrape(r.maddr)
	res["initial_load_s"] = round(t1.Sub(t0).Seconds(), 2)
	res["initial_load_wait_s"] = round(tWait.Sub(t0).Seconds(), 2)
	res["initial_end_from"] = how
	res["initial_cpu_s"] = round(c1-c0, 1)
	res["initial_rows"] = meta.Rows
	res["initial_rows_per_s"] = round(float64(meta.Rows)/max(t1.Sub(t0).Seconds(), 1e-9), 0)
	res["rss_peak_initial_mib"] = w.samp.peakMiB()
	res["go_heap_inuse_peak_initial_mib"] = heap.peakMiB()
	ib := msum(m1, "lakemirror_batch_duration_seconds_count") - msum(m0, "lakemirror_batch_duration_seconds_count")
	res["initial_batches"] = ib
	res["index_after_initial"] = indexState(m1)
	res["initial_batch_apply_s_mean"] = round((msum(m1, "lakemirror_batch_duration_seconds_sum")-msum(m0, "lakemirror_batch_duration_seconds_sum"))/max(ib, 1), 3)
	if o.brokerPid > 0 {
		res["broker_initial_cpu_s"] = round(b1-b0, 1)
	}

	// ---- pause, produce the change stream (not timed), resume: phase 2
	if _, err := r.starter(ctx, "pause", o.table); err != nil {
		return err
	}
	for i := 0; ; i++ {
		st, err := r.status(ctx)
		if err != nil {
			return err
		}
		if st.Phase == "paused" {
			break
		}
		if i > 240 {
			return fmt.Errorf("the table did not pause within 120 s (phase %s)", st.Phase)
		}
		time.Sleep(500 * time.Millisecond)
	}
	n, secs, err = r.produce(ctx, filepath.Join(o.data, "changes.jsonl"), gs, true)
	if err != nil {
		return err
	}
	if gs != nil {
		if err := gs.wait(ctx); err != nil { // expected.parquet and meta.json written
			return err
		}
		if int(n) != meta.Delivered {
			return fmt.Errorf("the streamed generator delivered %d changes, expected %d", n, meta.Delivered)
		}
	}
	res["produce_changes_s"], res["produce_changes_records"] = round(secs, 2), n
	res["produce_changes_records_per_s"] = round(float64(n)/max(secs, 1e-9), 0)
	time.Sleep(2 * time.Second)
	var restartUp time.Time // when the restarted worker answered
	if o.restart {
		// a graceful stop after the initial load (the table paused, the
		// changes in Kafka), then a new worker on the same directories
		if kib := statusKiB(w.pid, "VmHWM"); kib > 0 {
			res["worker1_vmhwm_mib"] = mib(kib * 1024)
		}
		res["worker1_cpu_total_s"] = round(cpuSeconds(w.pid), 1)
		res["loadavg_restart"] = loadavg()
		tStop := time.Now()
		if !w.stop(10 * time.Minute) {
			return errors.New("the worker did not stop within 10 minutes of SIGINT")
		}
		res["restart_stop_s"] = round(time.Since(tStop).Seconds(), 2)
		res["worker1_exit"] = fmt.Sprint(w.waitErr)
		w2, err := startWorker(wbin, wargs, wenv, wlog)
		if err != nil {
			return err
		}
		w = w2
		if err := r.waitUp(ctx, w, tp, wlog.Name()); err != nil {
			return err
		}
		restartUp = time.Now()
		res["restart_worker_up_s"] = round(restartUp.Sub(w.started).Seconds(), 2)
	}
	res["rss_before_phase2_mib"] = w.samp.nowMiB()
	if o.brokerPid > 0 {
		res["broker_rss_before_phase2_mib"] = bsamp.nowMiB()
	}
	m2, _ := scrape(r.maddr)
	if text, err := scrapeText(r.maddr); err == nil {
		_ = os.WriteFile(filepath.Join(o.work, "metrics-phase2-start.txt"), []byte(text), 0o644)
	}
	w.samp.reset()
	bsamp.reset()
	heap.reset()
	res["loadavg_phase2_start"] = loadavg()
	c2, b2 := cpuSeconds(w.pid), cpuSeconds(o.brokerPid)
	t2 := time.Now()
	if o.restart {
		res["restart_worker_cpu_before_resume_s"] = round(c2, 1)
	}
	prof = startCPUProfile(ctx, o.cpuProfile, r.maddr, "phase2")
	fb := watchFirstBatch(r.maddr, m2, w.pid, t2)
	if _, err := r.starter(ctx, "resume", o.table); err != nil {
		fb.close()
		return err
	}
	tResumed := time.Now()
	if _, err := r.starter(ctx, "wait", o.table, "--timeout", o.timeout.String()); err != nil {
		fb.close()
		return err
	}
	tWait = time.Now()
	c3, b3 := cpuSeconds(w.pid), cpuSeconds(o.brokerPid)
	fb.close()
	if err := prof.finish(); err != nil {
		return err
	}
	res["rss_peak_phase2_mib"] = w.samp.peakMiB()
	res["go_heap_inuse_peak_phase2_mib"] = heap.peakMiB()
	if o.brokerPid > 0 {
		res["broker_phase2_cpu_s"] = round(b3-b2, 1)
		res["broker_rss_peak_phase2_mib"] = bsamp.peakMiB()
	}
	st3, err := r.status(ctx)
	if err != nil {
		return err
	}
	t3, how := phaseEnd(st3, t2, tWait)
	res["loadavg_phase2_end"] = loadavg()
	res["rss_after_phase2_mib"] = w.samp.nowMiB()
	m3, _ := scrape(r.maddr)
	if text, err := scrapeText(r.maddr); err == nil {
		_ = os.WriteFile(filepath.Join(o.work, "metrics-phase2-end.txt"), []byte(text), 0o644)
	}
	// where phase 2's wall time went, per Temporal activity type (sum of execution latencies)
	acts := map[string]any{}
	for _, suffix := range []string{"_sum", "_count"} {
		for _, base := range []string{"temporal_activity_execution_latency_seconds", "temporal_activity_schedule_to_start_latency_seconds"} {
			a, b := byLabel(m2, base+suffix, "activity_type"), byLabel(m3, base+suffix, "activity_type")
			for t, v := range b {
				if d := v - a[t]; d != 0 {
					acts[strings.TrimPrefix(base, "temporal_activity_")+suffix+"."+t] = round(d, 3)
				}
			}
		}
	}
	res["phase2_activities"] = acts
	p2 := t3.Sub(t2).Seconds()
	res["phase2_s"] = round(p2, 2)
	res["phase2_wait_s"] = round(tWait.Sub(t2).Seconds(), 2)
	res["phase2_end_from"] = how
	res["phase2_cpu_s"] = round(c3-c2, 2)
	res["events_delivered"] = meta.Delivered
	res["phase2_events_per_s"] = round(float64(meta.Delivered)/max(p2, 1e-9), 0)
	nb := msum(m3, "lakemirror_batch_duration_seconds_count") - msum(m2, "lakemirror_batch_duration_seconds_count")
	res["phase2_batches"] = nb
	res["index_after_phase2"] = indexState(m3)
	if first := fb.result(m3, tResumed); first != nil {
		res["phase2_first_batch"] = first
		if fb.batchAt > 0 && nb > 1 {
			// the batches after the first: no state load, no hand-over
			res["phase2_cpu_after_first_batch_s"] = round(c3-fb.cpuAtBatch, 1)
			res["phase2_cpu_per_batch_after_first"] = round((c3-fb.cpuAtBatch)/(nb-1), 3)
		}
		if o.restart && fb.batchAt > 0 {
			up := restartUp.Sub(w.started).Seconds()
			res["restart_to_first_batch_s"] = round(t2.Add(fb.batchAt).Sub(w.started).Seconds(), 2)
			res["restart_breakdown_s"] = map[string]float64{
				"worker_start":          round(up, 2),                          // exec until Temporal, Kafka and `starter list` answer
				"benchctl_until_resume": round(t2.Sub(restartUp).Seconds(), 2), // the runner's readings before `starter resume`
				"resume_call":           round(tResumed.Sub(t2).Seconds(), 2),  // the `starter resume` command
				"resume_to_first_batch": round(fb.batchAt.Seconds(), 2),        // hand-over wait, state load, the first batch
				"first_activity_start":  seenAt(fb.activityAt),                 // -1: not seen
				"state_ready":           seenAt(fb.stateAt),                    // -1: not seen (in memory, or no load)
			}
		}
	}
	res["phase2_batch_apply_s_mean"] = round((msum(m3, "lakemirror_batch_duration_seconds_sum")-msum(m2, "lakemirror_batch_duration_seconds_sum"))/max(nb, 1), 3)
	res["phase2_metrics"] = mdelta(m2, m3, "lakemirror_events", "lakemirror_rows_written", "lakemirror_commits", "lakemirror_rebuilt",
		"lakemirror_records", "lakemirror_duplicates", "lakemirror_stale", "lakemirror_quarantined", "go_gc_duration_seconds_count")
	goNow := map[string]float64{}
	for _, k := range []string{"go_memstats_heap_inuse_bytes", "go_memstats_heap_alloc_bytes", "go_memstats_sys_bytes",
		"go_memstats_next_gc_bytes", "go_goroutines", "process_resident_memory_bytes"} {
		if v, ok := m3[k]; ok {
			goNow[k] = v
		}
	}
	res["go_after_phase2"] = goNow
	var totals, lastBatch any
	_ = json.Unmarshal(st3.Totals, &totals)
	_ = json.Unmarshal(st3.LastBatch, &lastBatch)
	res["status_totals"], res["last_batch"], res["batch_seq"] = totals, lastBatch, st3.BatchSeq
	return nil
}

// lmWorker is a running dev worker.
type lmWorker struct {
	cmd     *exec.Cmd
	pid     int
	started time.Time
	exited  chan struct{}
	waitErr error
	samp    *sampler // its RSS
}

func startWorker(bin string, args, env []string, log *os.File) (*lmWorker, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, log, log
	w := &lmWorker{cmd: cmd, started: time.Now(), exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	w.pid = cmd.Process.Pid
	go func() { w.waitErr = cmd.Wait(); close(w.exited) }()
	w.samp = newSampler(w.pid)
	return w, nil
}

// stop stops the worker gracefully (SIGINT), or kills it after timeout; it
// reports whether the worker exited by itself. Its sampler stops too.
func (w *lmWorker) stop(timeout time.Duration) bool {
	defer w.samp.close()
	_ = w.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-w.exited:
		return true
	case <-time.After(timeout):
		_ = w.cmd.Process.Kill()
		<-w.exited
		return false
	}
}

// waitUp waits until the worker's Kafka (or the external one) and
// Temporal ports answer and `starter list` works.
func (r *lmRun) waitUp(ctx context.Context, w *lmWorker, temporalPort int, logName string) error {
	for {
		select {
		case <-w.exited:
			return fmt.Errorf("worker exited early (%v); see %s", w.waitErr, logName)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if time.Since(w.started) > 5*time.Minute {
			return errors.New("the dev worker did not come up within 5 minutes")
		}
		if portOpen(r.brokers[0]) && portOpen(fmt.Sprintf("127.0.0.1:%d", temporalPort)) {
			if _, err := r.starter(ctx, "list"); err == nil {
				return nil
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// dirSizes is the MiB under each entry of dir.
func dirSizes(dir string) map[string]float64 {
	out := map[string]float64{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			out[e.Name()] = mib(dirBytes(filepath.Join(dir, e.Name())))
		} else if fi, err := e.Info(); err == nil {
			out[e.Name()] = mib(fi.Size())
		}
	}
	return out
}

func portOpen(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// collectTables records where the tables' current metadata is (the
// catalog's SQLite iceberg_tables), their files and bytes (from the
// manifests, iceberg-go) and their disk use, and the checker's pointer.
func (r *lmRun) collectTables(ctx context.Context, lmDir string, res map[string]any) error {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(lmDir, "catalog.db")+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT table_name, metadata_location FROM iceberg_tables WHERE table_namespace = ?",
		strings.SplitN(r.o.table, ".", 2)[0])
	if err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	defer rows.Close()
	locs := map[string]string{}
	for rows.Next() {
		var name, loc string
		if err := rows.Scan(&name, &loc); err != nil {
			return err
		}
		locs[name] = loc
	}
	if err := rows.Err(); err != nil {
		return err
	}
	res["tables"] = locs
	mirror := strings.SplitN(r.o.table, ".", 2)[1]
	loc, ok := locs[mirror]
	if !ok {
		return fmt.Errorf("catalog has no table %s", r.o.table)
	}
	files := map[string]any{}
	for name, l := range locs {
		if fc, err := tableFiles(ctx, l); err == nil {
			files[name] = fc
		} else {
			files[name] = map[string]string{"error": err.Error()}
		}
	}
	res["table_files"] = files
	res["table"] = map[string]any{"kind": "iceberg", "metadata": strings.TrimPrefix(loc, "file://"),
		"deleted": "_is_deleted", "seq": "_seq", "seq_hex": true}
	if h, ok := locs[mirror+"_history"]; ok { // the checker's pointer to the SCD2 history (absent with --history=false)
		res["history_table"] = map[string]any{"kind": "iceberg", "metadata": strings.TrimPrefix(h, "file://"),
			"seq": "_seq", "valid_to_seq": "_valid_to_seq", "is_current": "_is_current", "seq_hex": true}
	}
	disk := map[string]float64{}
	wh := filepath.Join(lmDir, "warehouse")
	ents, _ := os.ReadDir(wh)
	for _, ns := range ents {
		if !ns.IsDir() {
			continue
		}
		tabs, _ := os.ReadDir(filepath.Join(wh, ns.Name()))
		for _, t := range tabs {
			if t.IsDir() {
				disk[t.Name()] = mib(dirBytes(filepath.Join(wh, ns.Name(), t.Name())))
			}
		}
	}
	res["disk_mib"] = disk
	return nil
}

// tableFiles counts the live data and delete files of a table's current
// snapshot, with their bytes and rows.
func tableFiles(_ context.Context, metadataLocation string) (map[string]int64, error) {
	fio := iceio.LocalFS{}
	f, err := fio.Open(metadataLocation)
	if err != nil {
		return nil, err
	}
	meta, err := table.ParseMetadata(f)
	f.Close()
	if err != nil {
		return nil, err
	}
	out := map[string]int64{"data_files": 0, "data_bytes": 0, "data_rows": 0, "delete_files": 0, "delete_bytes": 0, "delete_rows": 0}
	snap := meta.CurrentSnapshot()
	if snap == nil {
		return out, nil
	}
	out["snapshot_id"] = snap.SnapshotID
	out["snapshots"] = int64(len(meta.Snapshots()))
	mans, err := snap.Manifests(fio)
	if err != nil {
		return nil, err
	}
	out["manifests"] = int64(len(mans))
	for _, m := range mans {
		for e, err := range m.Entries(fio, true) {
			if err != nil {
				return nil, err
			}
			df := e.DataFile()
			if df.ContentType() == iceberg.EntryContentData {
				out["data_files"]++
				out["data_bytes"] += df.FileSizeBytes()
				out["data_rows"] += df.Count()
			} else {
				out["delete_files"]++
				out["delete_bytes"] += df.FileSizeBytes()
				out["delete_rows"] += df.Count()
			}
		}
	}
	return out, nil
}

// ---- Go heap, polled from the worker's /metrics every 2 s

type heapPoller struct {
	addr string
	mu   sync.Mutex
	peak float64
	stop chan struct{}
	done chan struct{}
}

func newHeapPoller(addr string) *heapPoller {
	h := &heapPoller{addr: addr, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-t.C:
				h.poll()
			}
		}
	}()
	return h
}

func (h *heapPoller) poll() {
	m, err := scrape(h.addr)
	if err != nil {
		return
	}
	if v, ok := m["go_memstats_heap_inuse_bytes"]; ok {
		h.mu.Lock()
		h.peak = max(h.peak, v)
		h.mu.Unlock()
	}
}

func (h *heapPoller) reset() {
	h.mu.Lock()
	h.peak = 0
	h.mu.Unlock()
}

func (h *heapPoller) peakMiB() float64 {
	h.poll()
	h.mu.Lock()
	defer h.mu.Unlock()
	return round(h.peak/(1<<20), 1)
}

func (h *heapPoller) close() {
	close(h.stop)
	<-h.done
}

// ---- producing the input

// produce produces the file at path, or with gs the streamed generator's
// snapshot values, or its changes.
func (r *lmRun) produce(ctx context.Context, path string, gs *genStream, changes bool) (int64, float64, error) {
	t0 := time.Now()
	if gs != nil {
		next, what := gs.snapshot(), "the streamed snapshot"
		if changes {
			next, what = gs.changes(), "the streamed changes"
		}
		n, err := produceFrom(ctx, r.brokers, r.o.topic, what, next, []string{"order_id"}, r.o.compression)
		return n, time.Since(t0).Seconds(), err
	}
	if r.o.produceWith == "starter" {
		out, err := r.starter(ctx, "produce", r.o.topic, "--events", path, "--key", "order_id")
		if err != nil {
			return 0, 0, err
		}
		var n int64
		fmt.Sscanf(out, "produced %d records", &n)
		return n, time.Since(t0).Seconds(), nil
	}
	n, err := produceFile(ctx, r.brokers, r.o.topic, path, []string{"order_id"}, r.o.compression)
	return n, time.Since(t0).Seconds(), err
}

func produceCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("produce", flag.ExitOnError)
	brokers := fs.String("brokers", "127.0.0.1:19092", "Kafka seed brokers, comma-separated")
	topic := fs.String("topic", "", "topic (created with 1 partition when missing)")
	events := fs.String("events", "", "file of Debezium values, one JSON value per line")
	key := fs.String("key", "order_id", "key columns, comma-separated")
	compression := fs.String("compression", "snappy", "snappy, none, lz4 or zstd")
	_ = fs.Parse(args)
	if *topic == "" || *events == "" {
		return errors.New("produce: --topic and --events are required")
	}
	t0 := time.Now()
	n, err := produceFile(ctx, strings.Split(*brokers, ","), *topic, *events, strings.Split(*key, ","), *compression)
	if err != nil {
		return err
	}
	s := time.Since(t0).Seconds()
	fmt.Printf("produced %d records to %s in %.1f s (%.0f records/s)\n", n, *topic, s, float64(n)/s)
	return nil
}

// produceFile produces every line of path (a Debezium value; a line `null`
// is a tombstone with the key of the record before it) to topic, keyed like
// `starter produce --key`: {"col":value,...} with each key column's JSON
// text from the value's after image, else its before image. It streams:
// at most franz-go's buffer of records is held in memory.
func produceFile(ctx context.Context, brokers []string, topic, path string, keyCols []string, compression string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 4<<20)
	next := func() ([]byte, error) {
		for {
			line, err := br.ReadBytes('\n') // a fresh slice
			if line = bytes.TrimSpace(line); len(line) > 0 {
				return line, nil
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return produceFrom(ctx, brokers, topic, path, next, keyCols, compression)
}

// produceFrom produces the values next returns until io.EOF (nil values
// skipped; each slice is kept until produced) like produceFile; what names
// the input in errors.
func produceFrom(ctx context.Context, brokers []string, topic, what string, next func() ([]byte, error), keyCols []string, compression string) (int64, error) {
	var codec kgo.CompressionCodec
	switch compression {
	case "snappy":
		codec = kgo.SnappyCompression()
	case "none":
		codec = kgo.NoCompression()
	case "lz4":
		codec = kgo.Lz4Compression()
	case "zstd":
		codec = kgo.ZstdCompression()
	default:
		return 0, fmt.Errorf("unknown compression %q", compression)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ProducerBatchCompression(codec),
		kgo.MaxBufferedRecords(100_000), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	resp, err := adm.CreateTopic(cctx, 1, -1, nil, topic)
	cancel()
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return 0, fmt.Errorf("create topic %s: %w", topic, err)
	}
	var (
		mu       sync.Mutex
		firstErr error
		n        int64
		p        fastjson.Parser
		lastKey  []byte
	)
	done := func(_ *kgo.Record, err error) {
		if err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		}
	}
	for {
		line, rerr := next()
		if len(line) > 0 {
			rec := &kgo.Record{Topic: topic}
			if !bytes.Equal(line, []byte("null")) {
				rec.Value = line
				k, err := keyOf(&p, line, keyCols)
				if err != nil {
					return n, fmt.Errorf("%s: record %d: %w", what, n+1, err)
				}
				lastKey = k
			}
			rec.Key = lastKey
			cl.Produce(ctx, rec, done)
			n++
			if n%100_000 == 0 {
				mu.Lock()
				e := firstErr
				mu.Unlock()
				if e != nil {
					return n, e
				}
			}
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) {
				return n, rerr
			}
			break
		}
	}
	if err := cl.Flush(ctx); err != nil {
		return n, err
	}
	mu.Lock()
	defer mu.Unlock()
	return n, firstErr
}

// keyOf builds {"k1":v1,...} from the value's row image (after, else
// before; the top level for flattened records), keeping the JSON text of
// each value, like the starter's keyFromValue.
func keyOf(p *fastjson.Parser, value []byte, keyCols []string) ([]byte, error) {
	v, err := p.ParseBytes(value)
	if err != nil {
		return nil, fmt.Errorf("value is not JSON: %w", err)
	}
	if pl := v.Get("payload"); pl != nil && v.Get("schema") != nil {
		v = pl
	}
	img := v
	for _, side := range []string{"after", "before"} {
		if s := v.Get(side); s != nil && s.Type() == fastjson.TypeObject {
			img = s
			break
		}
	}
	b := []byte{'{'}
	for i, k := range keyCols {
		kv := img.Get(k)
		if kv == nil {
			return nil, fmt.Errorf("key column %q is not in the record", k)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, k)
		b = append(b, ':')
		b = kv.MarshalTo(b)
	}
	return append(b, '}'), nil
}

// indexState is the worker's key index and chain log from its metrics:
// lakemirror_state_index_bytes by medium, lakemirror_state_log_bytes and
// the budget, in MiB.
func indexState(m map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for medium, v := range byLabel(m, "lakemirror_state_index_bytes", "medium") {
		out["index_"+medium+"_mib"] = mib(int64(v))
	}
	out["log_mib"] = mib(int64(msum(m, "lakemirror_state_log_bytes")))
	for scope, v := range byLabel(m, "lakemirror_state_index_budget_bytes", "scope") {
		out["budget_"+scope+"_mib"] = mib(int64(v))
	}
	return out
}

// firstBatch watches the worker's metrics every 200 ms from the resume of
// phase 2 until its first batch is recorded: when the first activity
// started (temporal_activity_schedule_to_start_latency_seconds_count),
// when the table's local state was loaded or built
// (lakemirror_state_loads_total, lakemirror_state_rebuilds_total) and when
// the first batch was (lakemirror_batch_duration_seconds_count), and the
// worker's CPU then. Times are since t0; -1 when not seen.
type firstBatch struct {
	addr                         string
	base                         map[string]float64
	pid                          int
	t0                           time.Time
	activityAt, stateAt, batchAt time.Duration
	cpuAtBatch                   float64
	atBatch                      map[string]float64 // the metrics when the first batch was seen
	stop, done                   chan struct{}
}

func watchFirstBatch(addr string, base map[string]float64, pid int, t0 time.Time) *firstBatch {
	f := &firstBatch{addr: addr, base: base, pid: pid, t0: t0, activityAt: -1, stateAt: -1, batchAt: -1,
		stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-f.stop:
				return
			case <-t.C:
			}
			m, err := scrape(addr)
			if err != nil {
				continue
			}
			if f.see(m, time.Since(t0), func() float64 { return cpuSeconds(pid) }) {
				return
			}
		}
	}()
	return f
}

// see takes one reading of the metrics m at since t0; it reports whether
// the first batch has been seen.
func (f *firstBatch) see(m map[string]float64, at time.Duration, cpu func() float64) bool {
	grew := func(names ...string) bool {
		var a, b float64
		for _, n := range names {
			a, b = a+msum(f.base, n), b+msum(m, n)
		}
		return b > a
	}
	if f.activityAt < 0 && grew("temporal_activity_schedule_to_start_latency_seconds_count") {
		f.activityAt = at
	}
	if f.stateAt < 0 && grew("lakemirror_state_loads_total", "lakemirror_state_rebuilds_total") {
		f.stateAt = at
	}
	if grew("lakemirror_batch_duration_seconds_count") {
		f.batchAt, f.cpuAtBatch, f.atBatch = at, cpu(), m
		return true
	}
	return false
}

func (f *firstBatch) close() {
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	<-f.done
}

// result is what was seen, with end, the metrics at the end of the phase:
// where the state came from (sidecar loads, builds by reason: the whole
// phase) and the activities' waits in the queue before the first batch
// (schedule-to-start by type).
func (f *firstBatch) result(end map[string]float64, resumed time.Time) map[string]any {
	if f.batchAt < 0 {
		return map[string]any{"seen": false}
	}
	out := map[string]any{
		"resume_to_first_batch_s":    round(f.batchAt.Seconds(), 2),
		"resume_call_s":              round(resumed.Sub(f.t0).Seconds(), 2),
		"resume_to_first_activity_s": seenAt(f.activityAt),
		"resume_to_state_ready_s":    seenAt(f.stateAt),
		"first_batch_apply_s": round(msum(f.atBatch, "lakemirror_batch_duration_seconds_sum")-
			msum(f.base, "lakemirror_batch_duration_seconds_sum"), 3),
		"state_loads_from_sidecar": msum(end, "lakemirror_state_loads_total") - msum(f.base, "lakemirror_state_loads_total"),
	}
	builds := map[string]float64{}
	a, b := byLabel(f.base, "lakemirror_state_rebuilds_total", "reason"), byLabel(end, "lakemirror_state_rebuilds_total", "reason")
	for reason, v := range b {
		if d := v - a[reason]; d != 0 {
			builds[reason] = d
		}
	}
	out["state_builds_by_reason"] = builds
	waits := map[string]float64{}
	for _, suffix := range []string{"_sum", "_count"} {
		a, b := byLabel(f.base, "temporal_activity_schedule_to_start_latency_seconds"+suffix, "activity_type"),
			byLabel(f.atBatch, "temporal_activity_schedule_to_start_latency_seconds"+suffix, "activity_type")
		for t, v := range b {
			if d := v - a[t]; d != 0 {
				waits[t+suffix] = round(d, 3)
			}
		}
	}
	out["schedule_to_start_before_first_batch"] = waits
	return out
}

// seenAt is d in seconds (two decimals), or -1 for a reading not seen.
func seenAt(d time.Duration) float64 {
	if d < 0 {
		return -1
	}
	return round(d.Seconds(), 2)
}
