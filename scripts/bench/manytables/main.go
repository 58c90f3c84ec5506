// Command manytables measures one worker holding many tables: N table
// workflows (default 500) of which B (default 50) receive changes, the
// rest idle, as a real source schema looks. It starts the embedded dev
// stack (Temporal dev server and kfake broker, SQLite catalog) in this
// process, runs the production worker binary (-worker) as a child process
// and reports, as one JSON object on stdout (progress on stderr):
//
//   - start_all_s: from the first workflow start until every table applied
//     its first record;
//   - idle phase (no changes anywhere, -idle long): the worker's RSS (MiB),
//     CPU (% of one core), Temporal requests by operation (from the
//     worker's SDK metrics) and, from them, heartbeats and activity
//     completions per table per day;
//   - busy phase (B tables receive -rate changes/s each, -busy-for long):
//     RSS, CPU, and the busy tables' lag in records and seconds (the
//     worker's lakemirror_kafka_lag_records, sampled every 2 s);
//   - both: the worker's TCP connections to the Kafka broker;
//   - restart: the worker is stopped (SIGINT) and a new one started; one
//     record is produced to every table; resume_all_s is the time until
//     every table has applied it on the new worker.
//
// Usage (from the module root):
//
//	go build -o /tmp/worker ./worker && go run ./scripts/bench/manytables -worker /tmp/worker
//	go run ./scripts/bench/manytables -worker /tmp/worker -tables 50 -busy 50   # the busy tables alone
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/devstack"
	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/workflows"
)

type opts struct {
	worker      string
	tables      int
	busy        int
	rate        float64
	idleFor     time.Duration
	busyFor     time.Duration
	maxWait     time.Duration
	dir         string
	metricsPort int
	timeout     time.Duration
}

func main() {
	var o opts
	flag.StringVar(&o.worker, "worker", "", "path of the worker binary (go build -o PATH ./worker); required")
	flag.IntVar(&o.tables, "tables", 500, "tables (one workflow and one 1-partition topic each)")
	flag.IntVar(&o.busy, "busy", 50, "tables receiving changes in the busy phase")
	flag.Float64Var(&o.rate, "rate", 5, "changes per second per busy table")
	flag.DurationVar(&o.idleFor, "idle", 3*time.Minute, "length of the idle phase")
	flag.DurationVar(&o.busyFor, "busy-for", 3*time.Minute, "length of the busy phase")
	flag.DurationVar(&o.maxWait, "max-wait", 2*time.Second, "the tables' MaxWait (batch fill time)")
	flag.StringVar(&o.dir, "dir", "", "work directory (default: a new temp dir, removed at the end)")
	flag.IntVar(&o.metricsPort, "metrics-port", 0, "worker metrics port (default: a free one)")
	flag.DurationVar(&o.timeout, "timeout", 40*time.Minute, "give up after this long")
	flag.Parse()
	if o.worker == "" || o.busy > o.tables {
		flag.Usage()
		os.Exit(2)
	}
	res, err := run(o)
	out, _ := json.MarshalIndent(res, "", "  ")
	fmt.Println(string(out))
	if err != nil {
		fmt.Fprintln(os.Stderr, "manytables:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().UTC().Format("15:04:05")}, args...)...)
}

func table(i int) string { return fmt.Sprintf("mt.t%03d", i) }
func topic(i int) string { return fmt.Sprintf("mt.public.t%03d", i) }

type bench struct {
	o       opts
	stack   *devstack.Stack
	kc      *kafka.Client
	tc      client.Client
	dir     string
	maddr   string
	worker  *exec.Cmd
	exited  chan struct{}
	streams [][]sample.Message // per table: its change records
	next    []int              // per table: next message to produce
	ends    []int64            // per table: records produced (the high watermark)
	mu      sync.Mutex
}

func run(o opts) (map[string]any, error) {
	res := map[string]any{"tables": o.tables, "busy": o.busy, "rate_per_busy_table": o.rate,
		"go": runtime.Version(), "cpus": runtime.NumCPU(), "date": time.Now().UTC().Format(time.RFC3339)}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	b := &bench{o: o}
	b.dir = o.dir
	if b.dir == "" {
		d, err := os.MkdirTemp("", "manytables-")
		if err != nil {
			return res, err
		}
		b.dir = d
		defer os.RemoveAll(d)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var err error
	b.stack, err = devstack.StartStack(ctx, devstack.StackOptions{DataDir: filepath.Join(b.dir, "stack"), UIPort: -1,
		SearchAttributes: workflows.SearchAttributeTypes, Logger: quiet})
	if err != nil {
		return res, err
	}
	defer b.stack.Stop()
	if b.kc, err = kafka.NewClient(b.stack.Settings.KafkaBrokers); err != nil {
		return res, err
	}
	defer b.kc.Close()
	if b.tc, err = client.Dial(client.Options{HostPort: b.stack.Settings.TemporalAddress, Namespace: b.stack.Settings.Namespace,
		Logger: nullLogger{}}); err != nil {
		return res, err
	}
	defer b.tc.Close()
	port := o.metricsPort
	if port == 0 {
		if port, err = devstack.FreePort(); err != nil {
			return res, err
		}
	}
	b.maddr = fmt.Sprintf("127.0.0.1:%d", port)

	// topics and one first record per table
	b.streams, b.next, b.ends = make([][]sample.Message, o.tables), make([]int, o.tables), make([]int64, o.tables)
	changes := int(o.rate*(o.busyFor.Seconds()+30)) + 10
	for i := range o.tables {
		n := 2 // a first record, and one at the restart
		if i < o.busy {
			n += changes
		}
		s := sample.Generate(sample.Options{Seed: int64(i + 1), Inserts: max(n/4, 2), Updates: n})
		b.streams[i] = s.Delivered
		if err := b.kc.CreateTopic(ctx, topic(i), 1); err != nil {
			return res, err
		}
		if err := b.produce(ctx, i, 1); err != nil {
			return res, err
		}
	}
	logf("%d topics with one record each", o.tables)

	if err := b.startWorker(ctx); err != nil {
		return res, err
	}
	defer b.stopWorker()
	t0 := time.Now()
	for i := range o.tables {
		spec := activities.TableSpec{Table: table(i), Topic: topic(i), KeyColumns: []string{"order_id"}, MaxEvents: 1000, MaxWait: o.maxWait}
		_, err := b.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.WorkflowID(spec.Table), TaskQueue: activities.TaskQueue,
			WorkflowExecutionErrorWhenAlreadyStarted: true}, workflows.TableWorkflowName, workflows.TableInput{Spec: spec})
		if err != nil {
			return res, fmt.Errorf("start %s: %w", spec.Table, err)
		}
	}
	logf("%d workflows started in %.1fs", o.tables, time.Since(t0).Seconds())
	if err := b.waitApplied(ctx, "first records"); err != nil {
		return res, err
	}
	res["start_all_s"] = round(time.Since(t0).Seconds(), 1)
	res["rss_after_start_mib"] = round(float64(statusKiB(b.worker.Process.Pid, "VmRSS"))/1024, 0)
	logf("all %d tables applied their first record after %.1fs", o.tables, time.Since(t0).Seconds())

	// idle phase
	time.Sleep(20 * time.Second) // the first plans after the batches settle into their idle waits
	idle, err := b.phase(ctx, o.idleFor, nil)
	if err != nil {
		return res, err
	}
	day := 86400 / o.idleFor.Seconds() / float64(o.tables)
	idle["heartbeats_per_table_per_day"] = round(idle["req_RecordActivityTaskHeartbeat"].(float64)*day, 0)
	idle["activities_completed_per_table_per_day"] = round(idle["req_RespondActivityTaskCompleted"].(float64)*day, 0)
	idle["workflow_tasks_per_table_per_day"] = round(idle["req_RespondWorkflowTaskCompleted"].(float64)*day, 0)
	res["idle"] = idle
	logf("idle: %v", idle)

	// busy phase
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); b.drive(ctx, stop) }()
	busy, err := b.phase(ctx, o.busyFor, func() (float64, float64, error) { return b.busyLag() })
	close(stop)
	wg.Wait()
	if err != nil {
		return res, err
	}
	res["busy_phase"] = busy
	logf("busy: %v", busy)
	if err := b.waitApplied(ctx, "the busy phase's records"); err != nil {
		return res, err
	}

	// restart
	b.stopWorker()
	if err := b.startWorker(ctx); err != nil {
		return res, err
	}
	t1 := time.Now()
	for i := range o.tables {
		if err := b.produce(ctx, i, 1); err != nil {
			return res, err
		}
	}
	if err := b.waitApplied(ctx, "one record per table after the restart"); err != nil {
		return res, err
	}
	res["resume_all_s"] = round(time.Since(t1).Seconds(), 1)
	res["rss_after_resume_mib"] = round(float64(statusKiB(b.worker.Process.Pid, "VmRSS"))/1024, 0)
	logf("restarted worker applied a record of every table after %.1fs", time.Since(t1).Seconds())
	return res, nil
}

// produce sends table i's next n change records.
func (b *bench) produce(ctx context.Context, i, n int) error {
	b.mu.Lock()
	from := b.next[i]
	if from+n > len(b.streams[i]) {
		b.mu.Unlock()
		return fmt.Errorf("table %d: stream of %d records exhausted", i, len(b.streams[i]))
	}
	b.next[i] += n
	b.mu.Unlock()
	recs := make([]*kgo.Record, n)
	for j, m := range b.streams[i][from : from+n] {
		recs[j] = &kgo.Record{Topic: topic(i), Key: m.Key, Value: m.Value}
	}
	if err := b.kc.Produce(ctx, recs...); err != nil {
		return err
	}
	b.mu.Lock()
	b.ends[i] += int64(n)
	b.mu.Unlock()
	return nil
}

// drive produces rate records per second to each busy table until stop.
func (b *bench) drive(ctx context.Context, stop chan struct{}) {
	every := time.Duration(float64(time.Second) / b.o.rate)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var wg sync.WaitGroup
		for i := range b.o.busy {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := b.produce(ctx, i, 1); err != nil {
					logf("produce: %v", err)
				}
			}()
		}
		wg.Wait()
	}
}

func (b *bench) startWorker(ctx context.Context) error {
	s := b.stack.Settings
	args := []string{"-temporal-address", s.TemporalAddress, "-namespace", s.Namespace, "-kafka-brokers", strings.Join(s.KafkaBrokers, ","),
		"-data-dir", filepath.Join(b.dir, "stack"), "-state-dir", filepath.Join(b.dir, "state"), "-metrics-addr", b.maddr, "-log-level", "warn"}
	w := exec.Command(b.o.worker, args...)
	var env []string
	for _, kv := range os.Environ() {
		if k := strings.SplitN(kv, "=", 2)[0]; !strings.HasPrefix(k, "KAFKA_") && !strings.HasPrefix(k, "TEMPORAL_") &&
			!strings.HasPrefix(k, "LAKEMIRROR_") && !strings.HasPrefix(k, "CATALOG_") && k != "WAREHOUSE" && k != "METRICS_ADDR" {
			env = append(env, kv)
		}
	}
	logPath := filepath.Join(b.dir, "worker.log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	w.Env, w.Stdout, w.Stderr = env, f, f
	if err := w.Start(); err != nil {
		f.Close()
		return err
	}
	b.worker, b.exited = w, make(chan struct{})
	exited := b.exited
	go func() { _ = w.Wait(); f.Close(); close(exited) }()
	for !portOpen(b.maddr) {
		select {
		case <-exited:
			return fmt.Errorf("worker exited; see %s", logPath)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	logf("worker pid %d up", w.Process.Pid)
	return nil
}

func (b *bench) stopWorker() {
	if b.worker == nil {
		return
	}
	select {
	case <-b.exited:
	default:
		_ = b.worker.Process.Signal(syscall.SIGINT)
		select {
		case <-b.exited:
		case <-time.After(90 * time.Second):
			_ = b.worker.Process.Kill()
			<-b.exited
		}
	}
	b.worker = nil
}

// waitApplied waits until the worker's lag gauge shows every table at the
// records produced to it.
func (b *bench) waitApplied(ctx context.Context, what string) error {
	last := time.Now()
	for {
		lags, err := scrapeLag(b.maddr)
		if err == nil {
			done := 0
			for i := range b.o.tables {
				if l, ok := lags[table(i)]; ok && l == 0 {
					done++
				}
			}
			if done == b.o.tables {
				return nil
			}
			if time.Since(last) > 15*time.Second {
				logf("waiting for %s: %d of %d tables caught up", what, done, b.o.tables)
				last = time.Now()
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-b.exited:
			return fmt.Errorf("worker exited while waiting for %s", what)
		case <-time.After(time.Second):
		}
	}
}

// busyLag returns the mean and the maximum lag in records over the busy
// tables.
func (b *bench) busyLag() (float64, float64, error) {
	lags, err := scrapeLag(b.maddr)
	if err != nil {
		return 0, 0, err
	}
	var sum, maxLag float64
	for i := range b.o.busy {
		l := lags[table(i)]
		sum += l
		maxLag = max(maxLag, l)
	}
	return sum / float64(b.o.busy), maxLag, nil
}

// phase samples the worker for d: RSS (mean, max), CPU, Temporal
// requests by operation, Kafka connections and, with lag, the busy lag.
func (b *bench) phase(ctx context.Context, d time.Duration, lag func() (float64, float64, error)) (map[string]any, error) {
	pid := b.worker.Process.Pid
	m0, err := scrapeRequests(b.maddr)
	if err != nil {
		return nil, err
	}
	c0, t0 := cpuSeconds(pid), time.Now()
	var rss, lagMeans, lagMaxes, conns []float64
	for time.Since(t0) < d {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-b.exited:
			return nil, fmt.Errorf("worker exited")
		case <-time.After(2 * time.Second):
		}
		rss = append(rss, float64(statusKiB(pid, "VmRSS"))/1024)
		conns = append(conns, float64(kafkaConns(pid, b.stack.Settings.KafkaBrokers)))
		if lag != nil {
			if mean, mx, err := lag(); err == nil {
				lagMeans, lagMaxes = append(lagMeans, mean), append(lagMaxes, mx)
			}
		}
	}
	el := time.Since(t0).Seconds()
	c1 := cpuSeconds(pid)
	m1, err := scrapeRequests(b.maddr)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"seconds": round(el, 0), "cpu_pct_of_one_core": round(100*(c1-c0)/el, 1),
		"rss_mean_mib": round(mean(rss), 0), "rss_max_mib": round(slices.Max(rss), 0),
		"kafka_conns_mean": round(mean(conns), 1), "kafka_conns_max": slices.Max(conns)}
	for op, v := range m1 {
		out["req_"+op] = v - m0[op]
	}
	for _, op := range []string{"RecordActivityTaskHeartbeat", "RespondActivityTaskCompleted", "RespondWorkflowTaskCompleted"} {
		if _, ok := out["req_"+op]; !ok {
			out["req_"+op] = 0.0
		}
	}
	if lag != nil && len(lagMeans) > 0 {
		out["lag_records_mean"] = round(mean(lagMeans), 1)
		out["lag_records_max"] = slices.Max(lagMaxes)
		out["lag_seconds_mean"] = round(mean(lagMeans)/b.o.rate, 2)
		out["lag_seconds_max"] = round(slices.Max(lagMaxes)/b.o.rate, 2)
	}
	return out, nil
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// scrapeLag returns the worker's lakemirror_kafka_lag_records by table
// (summed over partitions).
func scrapeLag(addr string) (map[string]float64, error) {
	out := map[string]float64{}
	err := scrape(addr, func(name string, labels map[string]string, v float64) {
		if name == "lakemirror_kafka_lag_records" {
			out[labels["table"]] += v
		}
	})
	return out, err
}

// scrapeRequests returns the worker's Temporal SDK request counters
// (temporal_request) by operation.
func scrapeRequests(addr string) (map[string]float64, error) {
	out := map[string]float64{}
	err := scrape(addr, func(name string, labels map[string]string, v float64) {
		if name == "temporal_request" || name == "temporal_request_total" {
			out[labels["operation"]] += v
		}
	})
	return out, err
}

// scrape reads the Prometheus text exposition of addr's /metrics.
func scrape(addr string, each func(name string, labels map[string]string, v float64)) error {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			continue
		}
		head, labels := line[:sp], map[string]string{}
		name := head
		if br := strings.IndexByte(head, '{'); br >= 0 {
			name = head[:br]
			for _, kv := range splitLabels(strings.TrimSuffix(head[br+1:], "}")) {
				if eq := strings.IndexByte(kv, '='); eq > 0 {
					labels[kv[:eq]] = strings.Trim(kv[eq+1:], `"`)
				}
			}
		}
		each(name, labels, v)
	}
	return sc.Err()
}

// splitLabels splits `a="x",b="y,z"` at the commas outside quotes.
func splitLabels(s string) []string {
	var out []string
	inQ, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			inQ = !inQ
		case ',':
			if !inQ {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func portOpen(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// cpuSeconds is the process's user+system CPU time.
func cpuSeconds(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // USER_HZ
}

func statusKiB(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// kafkaConns counts pid's established TCP connections to the brokers'
// ports (its socket inodes matched against /proc/net/tcp{,6}).
func kafkaConns(pid int, brokers []string) int {
	ports := map[string]bool{}
	for _, b := range brokers {
		if _, p, err := net.SplitHostPort(b); err == nil {
			n, _ := strconv.Atoi(p)
			ports[fmt.Sprintf("%04X", n)] = true
		}
	}
	inodes := map[string]bool{}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	n := 0
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) < 10 || fs[3] != "01" { // ESTABLISHED
				continue
			}
			remote := fs[2]
			if ports[remote[strings.LastIndexByte(remote, ':')+1:]] && inodes[fs[9]] {
				n++
			}
		}
	}
	return n
}

// nullLogger silences the Temporal client.
type nullLogger struct{}

func (nullLogger) Debug(string, ...any) {}
func (nullLogger) Info(string, ...any)  {}
func (nullLogger) Warn(string, ...any)  {}
func (nullLogger) Error(string, ...any) {}
