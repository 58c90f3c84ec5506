// Package dashboards holds the Grafana dashboard, the Prometheus scrape
// configuration and alert rules of lakemirror, and the tests that keep
// them honest: every metric they use is one the worker exports, with the
// labels they use.
package dashboards

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"gopkg.in/yaml.v3"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/telemetry"
	"github.com/lakemirror/lakemirror/internal/testskip"
	"github.com/lakemirror/lakemirror/workflows"
)

const (
	dashboardFile  = "lakemirror-pipeline.json"
	rulesFile      = "alerts.yml"
	rulesTestFile  = "alerts_test.yml"
	prometheusFile = "prometheus.yml"
	datasourceUID  = "prometheus" // grafana/datasources/prometheus.yaml
)

// ---------------------------------------------------------------- loading

type panel struct {
	ID          int             `json:"id"`
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Datasource  *datasourceRef  `json:"datasource"`
	GridPos     gridPos         `json:"gridPos"`
	Targets     []target        `json:"targets"`
	Panels      []panel         `json:"panels"` // collapsed rows
	FieldConfig json.RawMessage `json:"fieldConfig"`
}

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type gridPos struct{ H, W, X, Y int }

type target struct {
	Expr       string         `json:"expr"`
	RefID      string         `json:"refId"`
	Datasource *datasourceRef `json:"datasource"`
}

type variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Definition string          `json:"definition"`
	Datasource *datasourceRef  `json:"datasource"`
}

type dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// allPanels flattens rows.
func (d dashboard) allPanels() []panel {
	var out []panel
	for _, p := range d.Panels {
		out = append(out, p)
		out = append(out, p.Panels...)
	}
	return out
}

type rule struct {
	Alert       string            `yaml:"alert"`
	Record      string            `yaml:"record"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

type ruleGroup struct {
	Name     string `yaml:"name"`
	Interval string `yaml:"interval"`
	Rules    []rule `yaml:"rules"`
}

type ruleFile struct {
	Groups []ruleGroup `yaml:"groups"`
}

func loadRules(t *testing.T) ruleFile {
	t.Helper()
	data, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true) // a misspelt key (annotation:, label:) is an error
	if err := dec.Decode(&rf); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	return rf
}

// usage is one PromQL expression and where it is used.
type usage struct {
	where string
	expr  string
}

var labelValuesRE = regexp.MustCompile(`^\s*label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$`)

// expressions returns every PromQL expression of the dashboard and the
// rules. A label_values(metric, label) variable query becomes
// "count by (label) (metric)".
func expressions(t *testing.T) []usage {
	t.Helper()
	var out []usage
	d := loadDashboard(t)
	for _, p := range d.allPanels() {
		for _, tg := range p.Targets {
			out = append(out, usage{fmt.Sprintf("%s panel %d %q target %s", dashboardFile, p.ID, p.Title, tg.RefID), tg.Expr})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		m := labelValuesRE.FindStringSubmatch(v.Definition)
		if m == nil {
			t.Errorf("%s: variable %s: query %q is not label_values(metric, label)", dashboardFile, v.Name, v.Definition)
			continue
		}
		out = append(out, usage{fmt.Sprintf("%s variable %s", dashboardFile, v.Name), fmt.Sprintf("count by (%s) (%s%s)", m[3], m[1], m[2])})
	}
	for _, g := range loadRules(t).Groups {
		for _, r := range g.Rules {
			out = append(out, usage{fmt.Sprintf("%s group %s alert %s", rulesFile, g.Name, r.Alert), r.Expr})
		}
	}
	return out
}

// ---------------------------------------------------------------- structure

func TestDashboardStructure(t *testing.T) {
	d := loadDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Errorf("dashboard uid %q title %q: both are required (provisioning keys on the uid)", d.UID, d.Title)
	}
	vars := map[string]variable{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	if v, ok := vars["datasource"]; !ok || v.Type != "datasource" {
		t.Errorf("missing the datasource variable (type datasource)")
	}
	okDS := func(ds *datasourceRef) bool {
		return ds != nil && ds.Type == "prometheus" && (ds.UID == "${datasource}" || ds.UID == datasourceUID)
	}
	ids := map[int]string{}
	type rect struct {
		title string
		g     gridPos
	}
	var rects []rect
	varRE := regexp.MustCompile(`\$\{?([a-zA-Z_][a-zA-Z0-9_]*)`)
	for _, p := range d.allPanels() {
		if prev, dup := ids[p.ID]; dup || p.ID == 0 {
			t.Errorf("panel %q: id %d is missing or also used by %q", p.Title, p.ID, prev)
		}
		ids[p.ID] = p.Title
		g := p.GridPos
		if g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
			t.Errorf("panel %q: gridPos %+v outside the 24-column grid", p.Title, g)
		}
		for _, r := range rects {
			o := r.g
			if g.X < o.X+o.W && o.X < g.X+g.W && g.Y < o.Y+o.H && o.Y < g.Y+g.H {
				t.Errorf("panel %q overlaps %q", p.Title, r.title)
			}
		}
		rects = append(rects, rect{p.Title, g})
		if p.Type == "row" {
			continue
		}
		if p.Title == "" || p.Description == "" {
			t.Errorf("panel %d: title %q and a description are required", p.ID, p.Title)
		}
		if !okDS(p.Datasource) {
			t.Errorf("panel %q: datasource %+v, want the prometheus ${datasource} variable", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no queries", p.Title)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if tg.Expr == "" || tg.RefID == "" || refs[tg.RefID] {
				t.Errorf("panel %q: target %q: empty expr or missing/duplicate refId", p.Title, tg.RefID)
			}
			refs[tg.RefID] = true
			if !okDS(tg.Datasource) {
				t.Errorf("panel %q target %s: datasource %+v", p.Title, tg.RefID, tg.Datasource)
			}
			for _, m := range varRE.FindAllStringSubmatch(tg.Expr, -1) {
				if name := m[1]; !strings.HasPrefix(name, "__") {
					if _, ok := vars[name]; !ok {
						t.Errorf("panel %q: $%s is not a dashboard variable", p.Title, name)
					}
				}
			}
		}
	}
}

var durationRE = regexp.MustCompile(`^([0-9]+(ms|s|m|h|d|w|y))+$`)

// Prometheus rule-file structure: groups with unique names, alerting rules
// with a unique CamelCase name, an expression, a valid `for`, a severity
// label and summary/description annotations; the alerts the pipeline
// needs are there.
func TestRuleFileStructure(t *testing.T) {
	rf := loadRules(t)
	if len(rf.Groups) == 0 {
		t.Fatal("no rule groups")
	}
	groups, alerts := map[string]bool{}, map[string]rule{}
	for _, g := range rf.Groups {
		if g.Name == "" || groups[g.Name] {
			t.Errorf("group name %q is empty or repeated", g.Name)
		}
		groups[g.Name] = true
		if g.Interval != "" && !durationRE.MatchString(g.Interval) {
			t.Errorf("group %s: interval %q", g.Name, g.Interval)
		}
		if len(g.Rules) == 0 {
			t.Errorf("group %s has no rules", g.Name)
		}
		for _, r := range g.Rules {
			if r.Record != "" {
				t.Errorf("group %s: recording rule %s: this file holds alerts only", g.Name, r.Record)
				continue
			}
			if !regexp.MustCompile(`^[A-Z][A-Za-z0-9]+$`).MatchString(r.Alert) {
				t.Errorf("group %s: alert name %q is not CamelCase", g.Name, r.Alert)
			}
			if _, dup := alerts[r.Alert]; dup {
				t.Errorf("alert %s is defined twice", r.Alert)
			}
			alerts[r.Alert] = r
			if strings.TrimSpace(r.Expr) == "" {
				t.Errorf("alert %s: empty expr", r.Alert)
			}
			if r.For != "" && !durationRE.MatchString(r.For) {
				t.Errorf("alert %s: for %q is not a Prometheus duration", r.Alert, r.For)
			}
			if sev := r.Labels["severity"]; sev != "critical" && sev != "warning" && sev != "info" {
				t.Errorf("alert %s: labels.severity %q, want critical, warning or info", r.Alert, sev)
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("alert %s: annotations summary and description are required", r.Alert)
			}
			for k := range r.Annotations {
				if k != "summary" && k != "description" && k != "runbook_url" {
					t.Errorf("alert %s: unexpected annotation %q", r.Alert, k)
				}
			}
		}
	}
	// What the alerts must cover, by the metric each one watches.
	uses := func(name, metric string) bool {
		r, ok := alerts[name]
		return ok && strings.Contains(r.Expr, metric)
	}
	for name, metric := range map[string]string{
		"LakemirrorLagGrowing":       telemetry.MetricLag,
		"LakemirrorFreshnessHigh":    telemetry.MetricFreshness,
		"LakemirrorGroupCutStale":    telemetry.MetricGroupCutLag,
		"LakemirrorTableStalled":     telemetry.MetricLastBatchTime,
		"LakemirrorQuarantine":       telemetry.MetricQuarantined,
		"LakemirrorRetentionGap":     telemetry.MetricRetentionGaps,
		"LakemirrorCommitConflicts":  telemetry.MetricCommitErrors,
		"LakemirrorWorkerDown":       "up",
		"LakemirrorTableBlocked":     workflows.PhaseGauge,
		"LakemirrorValidationFailed": telemetry.MetricValFailed,
		"LakemirrorValidationStale":  telemetry.MetricValLastRun,
	} {
		if !uses(name, metric) {
			t.Errorf("alert %s on %s is missing", name, metric)
		}
	}
	if !uses("LakemirrorTableStalled", telemetry.MetricLag) {
		t.Errorf("LakemirrorTableStalled must require lag > 0 (an idle table is not stalled)")
	}
}

type promConfig struct {
	RuleFiles     []string `yaml:"rule_files"`
	ScrapeConfigs []struct {
		JobName       string `yaml:"job_name"`
		MetricsPath   string `yaml:"metrics_path"`
		StaticConfigs []struct {
			Targets []string `yaml:"targets"`
		} `yaml:"static_configs"`
	} `yaml:"scrape_configs"`
}

// The scrape config loads the rule file and has the worker job the
// LakemirrorWorkerDown alert names. (deploy/ checks the target against
// docker-compose.yaml.)
func TestPrometheusConfig(t *testing.T) {
	data, err := os.ReadFile(prometheusFile)
	if err != nil {
		t.Fatal(err)
	}
	var pc promConfig
	if err := yaml.Unmarshal(data, &pc); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pc.RuleFiles, rulesFile) {
		t.Errorf("rule_files %v does not load %s", pc.RuleFiles, rulesFile)
	}
	found := false
	for _, sc := range pc.ScrapeConfigs {
		if sc.JobName == "lakemirror-worker" {
			found = true
			if sc.MetricsPath != "" && sc.MetricsPath != "/metrics" {
				t.Errorf("worker metrics_path %q; the worker serves /metrics", sc.MetricsPath)
			}
			if len(sc.StaticConfigs) == 0 || len(sc.StaticConfigs[0].Targets) == 0 {
				t.Errorf("worker job has no targets")
			}
		}
	}
	if !found {
		t.Error("no scrape job lakemirror-worker (the alerts select up{job=\"lakemirror-worker\"})")
	}
	for _, f := range []string{"grafana/datasources/prometheus.yaml", "grafana/dashboards/lakemirror.yaml"} {
		var v map[string]any
		data, err := os.ReadFile(f)
		if err == nil {
			err = yaml.Unmarshal(data, &v)
		}
		if err != nil || v["apiVersion"] != 1 {
			t.Errorf("%s: %v (apiVersion %v)", f, err, v["apiVersion"])
		}
	}
}

// ---------------------------------------------------------------- metrics

// prometheusBuiltin are series Prometheus itself makes per target.
var prometheusBuiltin = map[string][]string{"up": {"job", "instance"}}

// resolve maps a name used in PromQL to its exported family: histograms
// and summaries are exported as one family whose series are name_bucket
// (histograms only), name_sum and name_count.
func resolve(e exported, name string) (string, family, bool) {
	if f, ok := e[name]; ok {
		return name, f, true
	}
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suf)
		if !ok {
			continue
		}
		f, ok := e[base]
		if !ok {
			continue
		}
		if f.typ == dto.MetricType_HISTOGRAM || (f.typ == dto.MetricType_SUMMARY && suf != "_bucket") {
			return base, f, true
		}
	}
	return "", family{}, false
}

// The heart: every metric the dashboard and the alert rules use is one the
// worker exports, with the labels they use.
//
//   - lakemirror_* names must be in telemetry.Names and be produced by a
//     real telemetry.Metrics after every Observe method ran, except the
//     workflows' own (workflowMetrics: the phase gauge), which the
//     worker's registry must hold after the real run below;
//   - temporal_* names must be produced by the worker's own registry
//     (runner.Start: the Temporal SDK's tally bridge) after a real table
//     workflow and failing probe activities and workflow tasks ran on the
//     embedded Temporal server;
//   - label names in matchers and by/on clauses must exist on the
//     families the expression uses.
//
// And every pipeline metric is on the dashboard.
// workflowMetrics are lakemirror_* metrics the workflows set through the
// Temporal SDK's metrics handler (so on the worker's registry after a
// real run, not on telemetry.Metrics).
var workflowMetrics = map[string]bool{workflows.PhaseGauge: true}

func TestMetricsExported(t *testing.T) {
	pipeline := pipelineMetrics(t)
	worker := workerMetrics(t)
	t.Logf("worker registry after a real run:\n%s", worker)

	names := map[string]bool{}
	for _, n := range telemetry.Names {
		names[n] = true
		if _, ok := pipeline[n]; !ok {
			t.Errorf("telemetry.Names lists %s but telemetry.Metrics does not export it", n)
		}
	}
	for n := range pipeline {
		if strings.HasPrefix(n, "lakemirror_") && !names[n] {
			t.Errorf("telemetry.Metrics exports %s, which telemetry.Names does not list", n)
		}
	}

	used := map[string][]string{} // family → where
	for _, u := range expressions(t) {
		refs, err := parsePromQL(u.expr)
		if err != nil {
			t.Errorf("%s: %v", u.where, err)
			continue
		}
		if len(refs.selectors) == 0 {
			t.Errorf("%s: no metric in %q", u.where, u.expr)
		}
		available := map[string]bool{"job": true, "instance": true} // added by the scrape
		for _, sel := range refs.selectors {
			var (
				fam  string
				f    family
				ok   bool
				from exported
			)
			switch {
			case workflowMetrics[sel.metric]:
				from = worker // set by the workflows through the SDK's metrics handler
			case strings.HasPrefix(sel.metric, "lakemirror_"):
				from = pipeline
			case strings.HasPrefix(sel.metric, "temporal_"):
				from = worker
			}
			if from != nil {
				fam, f, ok = resolve(from, sel.metric)
			} else if ls, builtin := prometheusBuiltin[sel.metric]; builtin {
				fam, ok = sel.metric, true
				f = family{labels: map[string]bool{}}
				for _, l := range ls {
					f.labels[l] = true
				}
			}
			if !ok {
				t.Errorf("%s: metric %s is not exported by the worker", u.where, sel.metric)
				continue
			}
			if strings.HasPrefix(fam, "lakemirror_") && !names[fam] && !workflowMetrics[fam] {
				t.Errorf("%s: %s is not in telemetry.Names", u.where, fam)
			}
			used[fam] = append(used[fam], u.where)
			for l := range f.labels {
				available[l] = true
			}
			switch f.typ {
			case dto.MetricType_HISTOGRAM:
				available["le"] = true
			case dto.MetricType_SUMMARY:
				available["quantile"] = true
			}
			for _, l := range sel.labels {
				if l == "quantile" && f.typ == dto.MetricType_SUMMARY && sel.metric == fam {
					continue
				}
				if l == "le" && f.typ == dto.MetricType_HISTOGRAM && strings.HasSuffix(sel.metric, "_bucket") {
					continue
				}
				if !f.labels[l] && l != "job" && l != "instance" {
					t.Errorf("%s: %s has no label %q (it has %v)", u.where, fam, l, sortedKeys(f.labels))
				}
			}
		}
		for _, l := range refs.grouping {
			if !available[l] {
				t.Errorf("%s: grouping label %q is on none of the metrics used", u.where, l)
			}
		}
	}

	// The dashboard shows every pipeline metric.
	dash := map[string]bool{}
	for fam, wheres := range used {
		for _, w := range wheres {
			if strings.HasPrefix(w, dashboardFile) {
				dash[fam] = true
			}
		}
	}
	for _, n := range telemetry.Names {
		if !dash[n] {
			t.Errorf("pipeline metric %s is on no dashboard panel", n)
		}
	}

	var list []string
	for fam := range used {
		list = append(list, fam)
	}
	sort.Strings(list)
	t.Logf("metrics used by the dashboard and the alerts (%d): %s", len(list), strings.Join(list, " "))
}

// Temporal panels and rules filter on the worker's task queue.
func TestTaskQueueMatchers(t *testing.T) {
	re := regexp.MustCompile(`task_queue\s*=\s*"([^"]*)"`)
	for _, u := range expressions(t) {
		for _, m := range re.FindAllStringSubmatch(u.expr, -1) {
			if m[1] != activities.TaskQueue {
				t.Errorf("%s: task_queue=%q, the worker serves %q", u.where, m[1], activities.TaskQueue)
			}
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ---------------------------------------------------------------- promtool

// With promtool installed (Debian: apt-get install prometheus), the real
// Prometheus parser checks the scrape config, the rule file and every
// dashboard query, and the alert unit tests in alerts_test.yml run.
func TestPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		testskip.Skip(t, "promtool not installed: the alert rules' unit tests and the PromQL checks need it (Debian: apt-get install prometheus)")
	}
	run := func(args ...string) {
		t.Helper()
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("check", "config", prometheusFile)
	run("check", "rules", rulesFile)
	run("test", "rules", rulesTestFile)

	// Dashboard queries as recording rules, Grafana variables replaced.
	repl := strings.NewReplacer("$__rate_interval", "1m", "$__interval", "1m", "$__range", "1h", "${table}", ".*", "$table", ".*")
	var rules []map[string]string
	for i, u := range expressions(t) {
		if strings.HasPrefix(u.where, dashboardFile) {
			rules = append(rules, map[string]string{"record": fmt.Sprintf("dashboard:query_%d", i), "expr": repl.Replace(u.expr)})
		}
	}
	data, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "dashboard-queries.yml")
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	run("check", "rules", f)
}
