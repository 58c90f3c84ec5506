// Command benchctl is the Go driver of lakemirror's performance benchmark
// (scripts/bench, see its README.md); run.sh calls it:
//
//	benchctl gen --out DIR --rows N0 --changes S --batch B [--batch B2 ...] [--seed 42]
//	        the workload: snapshot.jsonl, changes.jsonl (Debezium PostgreSQL JSON values),
//	        initial.parquet, changes-b<B>/batch-NNNNN.parquet (the peers' pre-parsed input),
//	        expected.parquet (the correct final mirror), orders.table.json, meta.json
//	benchctl lakemirror --data DIR --batch B --work DIR --out RESULT.json [--bin DIR]
//	        [--kafka-brokers H:P --broker-pid PID] [--start-args "..."] [--port-base P]
//	        runs the dev worker (`worker-dev`, ./worker/dev) end to end (initial load, then the timed change stream)
//	        and writes a RESULT JSON
//	benchctl produce --brokers H:P --topic T --events FILE [--key order_id]
//	        produces a file of Debezium values with Debezium-style JSON keys
//	benchctl report RESULTS_DIR [...]
//	        the markdown results table (median [min–max] over rounds) and the ratios
//	benchctl check-meta DIR
//	        prints the workload's meta.json in one line (used by run.sh)
//
// Nothing imports it; its tests (gen_test.go) check that the streamed
// workload of `lakemirror --stream` is the one `gen` writes to files.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchctl gen|lakemirror|produce|report|check-meta [flags] (see the source header or scripts/bench/README.md)")
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	var err error
	switch os.Args[1] {
	case "gen":
		err = genCmd(os.Args[2:])
	case "lakemirror":
		err = lakemirrorCmd(ctx, os.Args[2:])
	case "produce":
		err = produceCmd(ctx, os.Args[2:])
	case "report":
		err = reportCmd(os.Args[2:], os.Stdout)
	case "check-meta":
		err = checkMetaCmd(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchctl:", err)
		os.Exit(1)
	}
}

func checkMetaCmd(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: benchctl check-meta DIR")
	}
	var m map[string]any
	if err := readJSON(filepath.Join(args[0], "meta.json"), &m); err != nil {
		return err
	}
	b, _ := json.Marshal(m)
	fmt.Println(string(b))
	return nil
}

// ---- /proc: CPU and memory of a process tree

// clkTck is USER_HZ, the unit of the times in /proc/<pid>/stat (100 on
// every Linux architecture Go runs on).
const clkTck = 100

// procStat returns ppid and utime+stime+cutime+cstime (ticks) of pid.
func procStat(pid int) (ppid int, ticks int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("bad /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+2:]))
	// f[0] state, f[1] ppid, ... f[11] utime f[12] stime f[13] cutime f[14] cstime
	if len(f) < 15 {
		return 0, 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	ppid, _ = strconv.Atoi(f[1])
	for _, s := range f[11:15] {
		v, _ := strconv.ParseInt(s, 10, 64)
		ticks += v
	}
	return ppid, ticks, nil
}

// procTree is pid and all its descendants.
func procTree(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, _, err := procStat(p); err == nil {
			children[pp] = append(children[pp], p)
		}
	}
	out, todo := []int{}, []int{pid}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		out = append(out, p)
		todo = append(todo, children[p]...)
	}
	return out
}

// cpuSeconds is the user+system CPU used so far by pid's tree: every live
// process's own time plus the time of the children it has reaped.
func cpuSeconds(pid int) float64 {
	if pid <= 0 {
		return 0
	}
	var t int64
	for _, p := range procTree(pid) {
		if _, ticks, err := procStat(p); err == nil {
			t += ticks
		}
	}
	return float64(t) / clkTck
}

// statusKiB reads a "Field:   N kB" line of /proc/<pid>/status.
func statusKiB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, field+":") {
			f := strings.Fields(line[len(field)+1:])
			if len(f) > 0 {
				v, _ := strconv.ParseInt(f[0], 10, 64)
				return v
			}
		}
	}
	return 0
}

func treeRSSKiB(pid int) int64 {
	var t int64
	for _, p := range procTree(pid) {
		t += statusKiB(p, "VmRSS")
	}
	return t
}

// sampler samples the summed RSS of a process tree every 250 ms.
type sampler struct {
	pid  int
	mu   sync.Mutex
	peak int64
	stop chan struct{}
	done chan struct{}
}

func newSampler(pid int) *sampler {
	s := &sampler{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *sampler) sample() int64 {
	if s.pid <= 0 {
		return 0
	}
	v := treeRSSKiB(s.pid)
	s.mu.Lock()
	s.peak = max(s.peak, v)
	s.mu.Unlock()
	return v
}

func (s *sampler) nowMiB() float64 { return mib(s.sample() * 1024) }

// peakMiB is the peak since reset, including a sample taken now.
func (s *sampler) peakMiB() float64 {
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	return mib(s.peak * 1024)
}

func (s *sampler) reset() {
	s.mu.Lock()
	s.peak = 0
	s.mu.Unlock()
}

func (s *sampler) close() {
	close(s.stop)
	<-s.done
}

func mib(bytes int64) float64 { return round(float64(bytes)/(1<<20), 1) }

func round(v float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	if v < 0 {
		return -float64(int64(-v*p+0.5)) / p
	}
	return float64(int64(v*p+0.5)) / p
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// ---- Prometheus text format

var promLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? ([0-9.eE+-]+|NaN|\+Inf|-Inf)`)

// scrapeText fetches addr's /metrics.
func scrapeText(addr string) (string, error) {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, err = io.Copy(&b, resp.Body)
	return b.String(), err
}

// scrape reads addr's /metrics: the lakemirror_*, go_*, process_* and
// temporal_activity_* / temporal_workflow_task_* samples (histogram buckets
// left out), keyed by name{labels}.
func scrape(addr string) (map[string]float64, error) {
	text, err := scrapeText(addr)
	if err != nil {
		return nil, err
	}
	return parseProm(text), nil
}

func parseProm(text string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		if !strings.HasPrefix(line, "lakemirror_") && !strings.HasPrefix(line, "go_") && !strings.HasPrefix(line, "process_") &&
			!strings.HasPrefix(line, "temporal_activity_") && !strings.HasPrefix(line, "temporal_workflow_task_") {
			continue
		}
		m := promLine.FindStringSubmatch(line)
		if m == nil || strings.HasSuffix(m[1], "_bucket") {
			continue
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			continue
		}
		out[m[1]+m[2]] = v
	}
	return out
}

var labelRe = regexp.MustCompile(`([a-zA-Z_]+)="([^"]*)"`)

// byLabel sums the series of metric name in m by the value of label.
func byLabel(m map[string]float64, name, label string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if !strings.HasPrefix(k, name+"{") {
			continue
		}
		for _, l := range labelRe.FindAllStringSubmatch(k[len(name):], -1) {
			if l[1] == label {
				out[l[2]] += v
			}
		}
	}
	return out
}

// msum sums a metric over its label sets.
func msum(m map[string]float64, name string) float64 {
	var t float64
	for k, v := range m {
		if k == name || strings.HasPrefix(k, name+"{") {
			t += v
		}
	}
	return t
}

// mdelta is the per-series difference b-a of the metrics with one of the prefixes.
func mdelta(a, b map[string]float64, prefixes ...string) map[string]float64 {
	out := map[string]float64{}
	keys := make([]string, 0, len(b))
	for k := range b {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, p := range prefixes {
			if strings.HasPrefix(k, p) {
				if d := b[k] - a[k]; d != 0 {
					out[k] = round(d, 3)
				}
				break
			}
		}
	}
	return out
}

// ---- files

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// dirBytes is the total size of the regular files under dir.
func dirBytes(dir string) int64 {
	var t int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				t += fi.Size()
			}
		}
		return nil
	})
	return t
}
