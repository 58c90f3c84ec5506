package main

// The report: one markdown row per system (median [min–max] over the runs
// whose mirror (and history, where there is one) the checker found correct),
// a per-run table, and the ratios of each lakemirror system against the
// peers doing the same work (likeForLike), then lakemirror with its three
// tables against the mirror-only peers. A run whose result is wrong,
// unchecked or that failed contributes no performance numbers: it is
// reported as such.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

var systemOrder = []string{"lakemirror", "spark-full", "lakemirror-mirror", "duckdb-iceberg", "duckdb-native", "spark-mor", "spark-cow", "pyiceberg"}

// systemTables is what each system writes per batch.
var systemTables = map[string]string{
	"lakemirror": "bronze, mirror, history", "spark-full": "bronze, mirror, history",
	"lakemirror-mirror": "mirror", "duckdb-iceberg": "mirror", "duckdb-native": "mirror (DuckDB file)",
	"spark-mor": "mirror", "spark-cow": "mirror", "pyiceberg": "mirror",
}

// likeForLike pairs each lakemirror system with the peers that do the same
// work: the three tables, or the mirror alone.
var likeForLike = []struct {
	lm, what string
	peers    []string
}{
	{"lakemirror", "bronze + mirror + SCD2 history", []string{"spark-full"}},
	{"lakemirror-mirror", "the mirror only", []string{"duckdb-iceberg", "duckdb-native", "spark-mor", "spark-cow", "pyiceberg"}},
}

type run struct {
	file, round string
	r           map[string]any
}

func (x run) num(key string) (float64, bool) { return numAt(x.r, key) }

func numAt(m map[string]any, path string) (float64, bool) {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return 0, false
		}
		cur = mm[k]
	}
	switch v := cur.(type) {
	case float64:
		return v, true
	case string:
		f, err := strconv.ParseFloat(v, 64)
		return f, err == nil
	}
	return 0, false
}

func strAt(m map[string]any, path string) string {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = mm[k]
	}
	switch v := cur.(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// verdict: OK (checker: correct), WRONG (checker: not correct), FAILED (the
// runner reported an error), UNCHECKED (no check).
func (x run) verdict() string {
	if e := strAt(x.r, "error"); e != "" {
		return "FAILED"
	}
	c, ok := x.r["check"].(map[string]any)
	if !ok {
		return "UNCHECKED"
	}
	if c["correct"] == true {
		return "OK"
	}
	return "WRONG"
}

// metric is one column: how to get the value of a run.
type metric struct {
	name   string
	digits int
	get    func(run) (float64, bool)
}

func field(key string) func(run) (float64, bool) {
	return func(x run) (float64, bool) { return x.num(key) }
}

func perBatchWall(x run) (float64, bool) {
	if v, ok := x.num("phase2_batch_apply_s_mean"); ok { // lakemirror: the worker's histogram
		return v, true
	}
	if all, ok := x.r["phase2_batch_s_all"].([]any); ok && len(all) > 0 { // peers: each statement
		var t float64
		for _, v := range all {
			f, _ := v.(float64)
			t += f
		}
		return t / float64(len(all)), true
	}
	return 0, false
}

func ratio(a, b string) func(run) (float64, bool) {
	return func(x run) (float64, bool) {
		va, ok1 := x.num(a)
		vb, ok2 := x.num(b)
		if !ok1 || !ok2 || vb == 0 {
			return 0, false
		}
		return va / vb, true
	}
}

func peakRSS(x run) (float64, bool) {
	a, ok1 := x.num("rss_peak_initial_mib")
	b, ok2 := x.num("rss_peak_phase2_mib")
	if !ok1 && !ok2 {
		return 0, false
	}
	return max(a, b), true
}

var columns = []metric{
	{"phase-2 events/s", 0, field("phase2_events_per_s")},
	{"phase-2 wall s", 1, field("phase2_s")},
	{"phase-2 CPU-s", 2, field("phase2_cpu_s")},
	{"events/CPU-s", 0, ratio("events_delivered", "phase2_cpu_s")},
	{"per-batch CPU s", 2, ratio("phase2_cpu_s", "phase2_batches")},
	{"per-batch wall s", 2, perBatchWall},
	{"initial load rows/s", 0, field("initial_rows_per_s")},
	{"peak RSS MiB", 0, peakRSS},
	{"mirror files", 0, field("check.data_files")},
	{"delete files", 0, field("check.delete_files")},
	{"mirror MiB", 1, func(x run) (float64, bool) {
		d, ok1 := x.num("check.data_bytes")
		e, _ := x.num("check.delete_bytes")
		if !ok1 {
			if v, ok := x.num("disk_mib.orders"); ok {
				return v, true
			}
			return 0, false
		}
		return (d + e) / (1 << 20), true
	}},
	{"scan s", 3, field("check.scan_s_median")},
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func fmtNum(v float64, digits int) string {
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if digits == 0 && math.Abs(v) >= 1000 { // thousands separators
		neg := strings.HasPrefix(s, "-")
		s = strings.TrimPrefix(s, "-")
		var b strings.Builder
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		s = b.String()
		if neg {
			s = "-" + s
		}
	}
	return s
}

func cell(vals []float64, digits int) string {
	if len(vals) == 0 {
		return "—"
	}
	m := median(vals)
	if len(vals) == 1 {
		return fmtNum(m, digits)
	}
	return fmt.Sprintf("%s [%s–%s]", fmtNum(m, digits), fmtNum(slices.Min(vals), digits), fmtNum(slices.Max(vals), digits))
}

func times(x float64) string {
	switch {
	case x >= 10:
		return fmt.Sprintf("%.0fx", x)
	default:
		return fmt.Sprintf("%.1fx", x)
	}
}

// agg is a system's medians over its correct runs.
type agg struct{ wall, cpu, events float64 }

var roundRe = regexp.MustCompile(`-r(\d+)\.json$`)

func reportCmd(args []string, w io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: benchctl report RESULTS_DIR|RESULT.json [...]")
	}
	bySys := map[string][]run{}
	for _, a := range args {
		paths := []string{a}
		if fi, err := os.Stat(a); err == nil && fi.IsDir() {
			paths, _ = filepath.Glob(filepath.Join(a, "*.json"))
		}
		sort.Strings(paths)
		for _, p := range paths {
			var r map[string]any
			if err := readJSON(p, &r); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			sys, _ := r["system"].(string)
			if sys == "" {
				continue
			}
			x := run{file: p, r: r}
			if m := roundRe.FindStringSubmatch(p); m != nil {
				x.round = m[1]
			}
			bySys[sys] = append(bySys[sys], x)
		}
	}
	if len(bySys) == 0 {
		fmt.Fprintln(w, "no results")
		return nil
	}
	systems := make([]string, 0, len(bySys))
	for s := range bySys {
		systems = append(systems, s)
	}
	rank := func(s string) int {
		if i := slices.Index(systemOrder, s); i >= 0 {
			return i
		}
		return len(systemOrder)
	}
	sort.Slice(systems, func(i, j int) bool {
		if rank(systems[i]) != rank(systems[j]) {
			return rank(systems[i]) < rank(systems[j])
		}
		return systems[i] < systems[j]
	})

	// the workload
	any0 := bySys[systems[0]][0].r
	if data := strAt(any0, "data"); data != "" {
		var meta map[string]any
		if readJSON(filepath.Join(data, "meta.json"), &meta) == nil {
			n := func(k string) string { v, _ := numAt(meta, k); return fmtNum(v, 0) }
			b, _ := numAt(any0, "batch")
			fmt.Fprintf(w, "Workload: N0=%s initial rows; S=%s changes (c/u/d %s/%s/%s), %s late, + %s redeliveries = %s events delivered; micro-batches of %s (%s)\n\n",
				n("rows"), n("changes"), n("ops.c"), n("ops.u"), n("ops.d"), n("late"), n("redeliveries"), n("delivered"), fmtNum(b, 0), data)
		}
	}

	hdr := []string{"system", "tables", "runs"}
	for _, c := range columns {
		hdr = append(hdr, c.name)
	}
	hdr = append(hdr, "correct")
	fmt.Fprintln(w, "| "+strings.Join(hdr, " | ")+" |")
	fmt.Fprintln(w, "|"+strings.Repeat("---|", len(hdr)))
	meds := map[string]agg{}
	var notes []string
	said := map[string]bool{}
	for _, s := range systems {
		runs := bySys[s]
		var ok []run
		count := map[string]int{}
		for _, x := range runs {
			v := x.verdict()
			count[v]++
			if v == "OK" {
				ok = append(ok, x)
			}
		}
		tabs := systemTables[s]
		if tabs == "" {
			tabs = "?"
		}
		row := []string{s, tabs, strconv.Itoa(len(runs))}
		for i, c := range columns {
			if len(ok) == 0 { // no performance numbers for a wrong, failed or unchecked mirror
				if i == 0 {
					row = append(row, "**not correct: no numbers**")
				} else {
					row = append(row, "—")
				}
				continue
			}
			var vals []float64
			for _, x := range ok {
				if v, found := c.get(x); found {
					vals = append(vals, v)
				}
			}
			row = append(row, cell(vals, c.digits))
		}
		var verdict []string
		for _, v := range []string{"OK", "WRONG", "FAILED", "UNCHECKED"} {
			if count[v] > 0 {
				verdict = append(verdict, fmt.Sprintf("%s %d/%d", v, count[v], len(runs)))
			}
		}
		if len(ok) > 0 {
			verdict = append(verdict, "checksum "+strAt(ok[0].r, "check.got.checksum"))
		}
		row = append(row, strings.Join(verdict, ", "))
		fmt.Fprintln(w, "| "+strings.Join(row, " | ")+" |")
		if len(ok) > 0 {
			var wall, cpu, events []float64
			for _, x := range ok {
				if v, f := x.num("events_delivered"); f {
					events = append(events, v)
				}
				if v, f := x.num("phase2_s"); f {
					wall = append(wall, v)
				}
				if v, f := x.num("phase2_cpu_s"); f {
					cpu = append(cpu, v)
				}
			}
			if len(wall) > 0 && len(cpu) > 0 && len(events) > 0 {
				meds[s] = agg{median(wall), median(cpu), median(events)}
			}
		}
		for _, x := range runs {
			switch x.verdict() {
			case "WRONG":
				notes = append(notes, fmt.Sprintf("- **%s round %s: WRONG mirror** — got %s, expected %s", s, x.round,
					strAt(x.r, "check.got"), strAt(x.r, "check.expected")))
			case "FAILED":
				notes = append(notes, fmt.Sprintf("- **%s round %s: FAILED** — %s", s, x.round, strAt(x.r, "error")))
			case "UNCHECKED":
				notes = append(notes, fmt.Sprintf("- **%s round %s: UNCHECKED** (the checker did not run or failed; see its .check file)", s, x.round))
			}
			if k := strAt(x.r, "kafka"); k != "" && !said[s+k] {
				said[s+k] = true
				extra := ""
				if sa := strAt(x.r, "start_args"); sa != "" && sa != "[]" && sa != "null" {
					extra = ", starter start extra args " + sa
				}
				notes = append(notes, fmt.Sprintf("- %s: Kafka %s%s", s, k, extra))
			}
			if acts, okA := x.r["phase2_activities"].(map[string]any); okA && x.verdict() == "OK" {
				get := func(k string) float64 { v, _ := acts[k].(float64); return v }
				apply, plan, rebuild := get("execution_latency_seconds_sum.ApplyBatch"), get("execution_latency_seconds_sum.PlanBatch"),
					get("execution_latency_seconds_sum.RebuildKeys")
				if p2, f := x.num("phase2_s"); f && apply > 0 {
					notes = append(notes, fmt.Sprintf("- %s round %s: phase 2 %.1f s = ApplyBatch %.1f s (%d) + PlanBatch %.1f s (%d; includes waiting up to --max-wait for the last, partial batch) + RebuildKeys %.1f s (%d) + %.1f s other (Temporal scheduling, workflow tasks, status polling)",
						s, x.round, p2, apply, int(get("execution_latency_seconds_count.ApplyBatch")), plan, int(get("execution_latency_seconds_count.PlanBatch")),
						rebuild, int(get("execution_latency_seconds_count.RebuildKeys")), p2-apply-plan-rebuild))
				}
			}
			if h, okH := x.r["history_check"].(map[string]any); okH {
				g := func(k string) string { return strAt(h, k) }
				state := "open versions as expected"
				if h["correct"] != true {
					state = "**open versions WRONG**: " + strAt(x.r, "history_check")
				}
				notes = append(notes, fmt.Sprintf("- %s round %s: history %s versions (%s open; an in-order history of the workload has %s), %s; complete (every version of the in-order history, late changes woven in): %s",
					s, x.round, g("versions"), g("open"), g("expected_versions"), state, g("complete")))
			}
			if v, f := x.num("phase2_rest_server_cpu_s"); f {
				rss, _ := x.num("rest_server_rss_peak_phase2_mib")
				notes = append(notes, fmt.Sprintf("- %s round %s: the Iceberg REST catalog server (a JVM) used %.1f of its %s phase-2 CPU-s (counted in the row above), peak RSS %.0f MiB",
					s, x.round, v, strAt(x.r, "phase2_cpu_s"), rss))
			}
			if v, f := x.num("broker_phase2_cpu_s"); f {
				rss, _ := x.num("broker_rss_peak_phase2_mib")
				notes = append(notes, fmt.Sprintf("- %s round %s: the Kafka broker (separate JVM, not in the row above) used %.1f CPU-s in phase 2, peak RSS %.0f MiB", s, x.round, v, rss))
			}
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Per run:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| system | round | load avg (phase 2 start) | phase-2 s | CPU-s | events/s | batches | initial load s | peak RSS MiB | verdict |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, s := range systems {
		for _, x := range bySys[s] {
			okRun := x.verdict() == "OK"
			g := func(k string, d int) string {
				if !okRun {
					return "—"
				}
				if v, ok := x.num(k); ok {
					return fmtNum(v, d)
				}
				return "—"
			}
			rss := "—"
			if v, ok := peakRSS(x); ok && okRun {
				rss = fmtNum(v, 0)
			}
			la := strings.Fields(strAt(x.r, "loadavg_phase2_start"))
			if len(la) == 0 {
				la = []string{"?"}
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", s, x.round, la[0], g("phase2_s", 2), g("phase2_cpu_s", 2),
				g("phase2_events_per_s", 0), g("phase2_batches", 0), g("initial_load_s", 2), rss, map[bool]string{true: "OK", false: "**" + x.verdict() + "**"}[okRun])
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
	_, lm1 := bySys["lakemirror"]
	_, lm2 := bySys["lakemirror-mirror"]
	if len(systems) == 1 || (!lm1 && !lm2) {
		return nil
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Ratios (medians of phase 2, correct runs only; events per CPU-second counts every process of a system, wall time is phase 2's):")
	for _, g := range likeForLike {
		if _, ran := bySys[g.lm]; !ran {
			continue
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "Like for like, %s: %s vs\n\n", g.what, g.lm)
		writeRatios(w, meds, bySys, g.lm, g.peers)
	}
	var mirrorPeers []string
	for _, s := range systems {
		if systemTables[s] != "" && !strings.Contains(systemTables[s], "history") && !strings.HasPrefix(s, "lakemirror") {
			mirrorPeers = append(mirrorPeers, s)
		}
	}
	if _, ok := bySys["lakemirror"]; ok && len(mirrorPeers) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Not like for like, lakemirror (bronze + mirror + history) vs the mirror-only peers (the single-table comparison):")
		fmt.Fprintln(w)
		writeRatios(w, meds, bySys, "lakemirror", mirrorPeers)
	}
	return nil
}

// writeRatios writes one line per peer of lm's ratios: events per CPU-second
// and phase-2 wall time.
func writeRatios(w io.Writer, meds map[string]agg, bySys map[string][]run, lm string, peers []string) {
	l, ok := meds[lm]
	if _, ran := bySys[lm]; !ran {
		fmt.Fprintf(w, "- (%s did not run)\n", lm)
		return
	}
	if !ok {
		fmt.Fprintf(w, "- no ratios: %s has no correct run\n", lm)
		return
	}
	any := false
	for _, s := range peers {
		if _, ran := bySys[s]; !ran {
			continue
		}
		any = true
		p, ok := meds[s]
		if !ok {
			fmt.Fprintf(w, "- %s: no correct run, no ratio\n", s)
			continue
		}
		cpu := s + ": no CPU figure"
		if l.cpu > 0 && p.cpu > 0 {
			le, pe := l.events/l.cpu, p.events/p.cpu
			x := times(le / pe)
			if le < pe {
				x = fmt.Sprintf("%.2fx", le/pe)
			}
			cpu = fmt.Sprintf("%s: %s gets %s the events per CPU-second (%s vs %s; %.1f vs %.1f CPU-s)", s, lm, x,
				fmtNum(le, 0), fmtNum(pe, 0), l.cpu, p.cpu)
		}
		var wall string
		switch {
		case l.wall > 0 && p.wall >= l.wall:
			wall = fmt.Sprintf("%s faster (%.1f vs %.1f s)", times(p.wall/l.wall), l.wall, p.wall)
		case p.wall > 0:
			wall = fmt.Sprintf("%s slower (%.1f vs %.1f s)", times(l.wall/p.wall), l.wall, p.wall)
		}
		fmt.Fprintf(w, "- %s; wall time: %s\n", cpu, wall)
	}
	if !any {
		fmt.Fprintln(w, "- (no peer of this kind ran)")
	}
}
