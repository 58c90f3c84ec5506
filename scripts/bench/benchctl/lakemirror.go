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
}

func lakemirrorCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("lakemirror", flag.ExitOnError)
	var o lmOpts
	var startArgs string
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
	_ = fs.Parse(args)
	if o.data == "" || o.work == "" || o.out == "" {
		return errors.New("lakemirror: --data, --work and --out are required")
	}
	o.startArgs = strings.Fields(startArgs)
	var err error
	for _, p := range []*string{&o.data, &o.work, &o.out, &o.bin} {
		if *p, err = filepath.Abs(*p); err != nil {
			return err
		}
	}
	if o.cpuProfile != "" {
		if o.cpuProfile, err = filepath.Abs(o.cpuProfile); err != nil {
			return err
		}
	}
	res := map[string]any{"system": "lakemirror", "batch": o.batch, "data": o.data, "loadavg_start": loadavg(),
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
	if err := readJSON(filepath.Join(o.data, "meta.json"), &meta); err != nil {
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
	wlog, err := os.Create(filepath.Join(o.work, "worker.log"))
	if err != nil {
		return err
	}
	defer wlog.Close()
	worker := exec.Command(wbin, wargs...)
	worker.Env, worker.Stdout, worker.Stderr = wenv, wlog, wlog
	tStart := time.Now()
	if err := worker.Start(); err != nil {
		return err
	}
	wpid := worker.Process.Pid
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = worker.Wait(); close(exited) }()
	wsamp := newSampler(wpid)
	defer wsamp.close()
	bsamp := newSampler(o.brokerPid)
	defer bsamp.close()
	heap := newHeapPoller(r.maddr)
	defer heap.close()
	defer func() {
		// VmHWM of the worker (one process: Temporal, kfake, apply), then SIGINT
		if kib := statusKiB(wpid, "VmHWM"); kib > 0 {
			res["worker_vmhwm_mib"] = mib(kib * 1024)
		}
		res["worker_cpu_total_s"] = round(cpuSeconds(wpid), 1)
		_ = worker.Process.Signal(syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(60 * time.Second):
			_ = worker.Process.Kill()
			<-exited
		}
		if o.brokerPid > 0 {
			res["broker_vmhwm_mib"] = mib(statusKiB(o.brokerPid, "VmHWM") * 1024)
		}
		if err == nil {
			err = r.collectTables(ctx, lmDir, res)
		}
	}()

	// ---- worker up
	for {
		select {
		case <-exited:
			return fmt.Errorf("worker exited early (%v); see %s", waitErr, wlog.Name())
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if time.Since(tStart) > 5*time.Minute {
			return errors.New("the dev worker did not come up within 5 minutes")
		}
		if portOpen(r.brokers[0]) && portOpen(fmt.Sprintf("127.0.0.1:%d", tp)) {
			if _, err := r.starter(ctx, "list"); err == nil {
				break
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	res["worker_startup_s"] = round(time.Since(tStart).Seconds(), 1)
	res["rss_idle_mib"] = wsamp.nowMiB()

	// ---- phase 1: initial load (snapshot reads through Kafka)
	n, secs, err := r.produce(ctx, filepath.Join(o.data, "snapshot.jsonl"))
	if err != nil {
		return err
	}
	res["produce_snapshot_s"], res["produce_snapshot_records"] = round(secs, 2), n
	res["produce_snapshot_records_per_s"] = round(float64(n)/max(secs, 1e-9), 0)
	res["rss_after_produce_snapshot_mib"] = wsamp.nowMiB()
	m0, _ := scrape(r.maddr)
	wsamp.reset()
	bsamp.reset()
	heap.reset()
	c0, b0 := cpuSeconds(wpid), cpuSeconds(o.brokerPid)
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
	c1, b1 := cpuSeconds(wpid), cpuSeconds(o.brokerPid)
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
	res["rss_peak_initial_mib"] = wsamp.peakMiB()
	res["go_heap_inuse_peak_initial_mib"] = heap.peakMiB()
	ib := msum(m1, "lakemirror_batch_duration_seconds_count") - msum(m0, "lakemirror_batch_duration_seconds_count")
	res["initial_batches"] = ib
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
	n, secs, err = r.produce(ctx, filepath.Join(o.data, "changes.jsonl"))
	if err != nil {
		return err
	}
	res["produce_changes_s"], res["produce_changes_records"] = round(secs, 2), n
	res["produce_changes_records_per_s"] = round(float64(n)/max(secs, 1e-9), 0)
	time.Sleep(2 * time.Second)
	res["rss_before_phase2_mib"] = wsamp.nowMiB()
	if o.brokerPid > 0 {
		res["broker_rss_before_phase2_mib"] = bsamp.nowMiB()
	}
	m2, _ := scrape(r.maddr)
	if text, err := scrapeText(r.maddr); err == nil {
		_ = os.WriteFile(filepath.Join(o.work, "metrics-phase2-start.txt"), []byte(text), 0o644)
	}
	wsamp.reset()
	bsamp.reset()
	heap.reset()
	res["loadavg_phase2_start"] = loadavg()
	c2, b2 := cpuSeconds(wpid), cpuSeconds(o.brokerPid)
	t2 := time.Now()
	prof = startCPUProfile(ctx, o.cpuProfile, r.maddr, "phase2")
	if _, err := r.starter(ctx, "resume", o.table); err != nil {
		return err
	}
	if _, err := r.starter(ctx, "wait", o.table, "--timeout", o.timeout.String()); err != nil {
		return err
	}
	tWait = time.Now()
	c3, b3 := cpuSeconds(wpid), cpuSeconds(o.brokerPid)
	if err := prof.finish(); err != nil {
		return err
	}
	res["rss_peak_phase2_mib"] = wsamp.peakMiB()
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
	res["rss_after_phase2_mib"] = wsamp.nowMiB()
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
	res["phase2_cpu_s"] = round(c3-c2, 1)
	res["events_delivered"] = meta.Delivered
	res["phase2_events_per_s"] = round(float64(meta.Delivered)/max(p2, 1e-9), 0)
	nb := msum(m3, "lakemirror_batch_duration_seconds_count") - msum(m2, "lakemirror_batch_duration_seconds_count")
	res["phase2_batches"] = nb
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

func (r *lmRun) produce(ctx context.Context, path string) (int64, float64, error) {
	t0 := time.Now()
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
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
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
	br := bufio.NewReaderSize(f, 4<<20)
	for {
		line, rerr := br.ReadBytes('\n')
		line = bytes.TrimSpace(line)
		if len(line) > 0 {
			rec := &kgo.Record{Topic: topic}
			if !bytes.Equal(line, []byte("null")) {
				rec.Value = line // ReadBytes returns a fresh slice
				k, err := keyOf(&p, line, keyCols)
				if err != nil {
					return n, fmt.Errorf("%s: record %d: %w", path, n+1, err)
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
