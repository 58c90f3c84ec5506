package dashboards

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// A small PromQL scanner, enough to find what an expression depends on:
// the metric names it selects, the label names its matchers use, and the
// label names of its by/without/on/ignoring/group_left/group_right
// clauses. It does not evaluate or fully validate PromQL (promtool does
// that when installed, see TestPromtool).

type selector struct {
	metric string   // metric name as written (with _bucket/_sum/_count)
	labels []string // label names in its matchers
}

type exprRefs struct {
	selectors []selector
	grouping  []string // labels of by/without/on/ignoring/group_left/group_right
}

// promqlFuncs are the function and aggregation names that may precede
// "(" (or "by"/"without"); everything else that looks like an identifier
// outside a matcher or a range is a metric name.
var promqlFuncs = map[string]bool{}

func init() {
	for _, f := range strings.Fields(`sum min max avg count stddev stdvar topk bottomk quantile count_values group limitk limit_ratio
		abs absent absent_over_time ceil changes clamp clamp_max clamp_min day_of_month day_of_week day_of_year days_in_month delta deriv
		exp floor histogram_avg histogram_count histogram_fraction histogram_quantile histogram_stddev histogram_stdvar histogram_sum
		holt_winters double_exponential_smoothing hour idelta increase irate label_join label_replace ln log2 log10 minute month
		predict_linear rate resets round scalar sgn sort sort_desc sort_by_label sort_by_label_desc sqrt time timestamp vector year
		avg_over_time min_over_time max_over_time sum_over_time count_over_time quantile_over_time stddev_over_time stdvar_over_time
		last_over_time present_over_time mad_over_time acos acosh asin asinh atan atanh cos cosh sin sinh tan tanh deg rad pi info`) {
		promqlFuncs[f] = true
	}
}

var promqlKeywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true, "inf": true, "nan": true}

var groupingKeywords = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

func isIdentStart(r byte) bool { return r == '_' || r == ':' || unicode.IsLetter(rune(r)) }
func isIdentChar(r byte) bool  { return isIdentStart(r) || unicode.IsDigit(rune(r)) }

// parsePromQL scans expr. Grafana variables ($table, ${table},
// $__rate_interval) are skipped.
func parsePromQL(expr string) (exprRefs, error) {
	var refs exprRefs
	s := expr
	i := 0
	skipSpace := func(j int) int {
		for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r') {
			j++
		}
		return j
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == '#': // comment to end of line
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'' || c == '`':
			end, err := skipString(s, i)
			if err != nil {
				return refs, err
			}
			i = end
		case c == '$':
			i++
			if i < len(s) && s[i] == '{' {
				for i < len(s) && s[i] != '}' {
					i++
				}
				i++
				continue
			}
			for i < len(s) && isIdentChar(s[i]) {
				i++
			}
		case c == '[': // range or subquery: durations and variables only
			for i < len(s) && s[i] != ']' {
				i++
			}
			i++
		case c == '{': // matchers without a metric name
			return refs, fmt.Errorf("selector without a metric name at %d in %q", i, expr)
		case unicode.IsDigit(rune(c)) || (c == '.' && i+1 < len(s) && unicode.IsDigit(rune(s[i+1]))):
			for i < len(s) && (isIdentChar(s[i]) || s[i] == '.') { // 0.95, 1e3, 10m, 1h30m
				i++
			}
		case isIdentStart(c):
			j := i
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			word := s[i:j]
			k := skipSpace(j)
			switch {
			case groupingKeywords[word]:
				if k >= len(s) || s[k] != '(' {
					if word == "group_left" || word == "group_right" {
						i = j
						continue
					}
					return refs, fmt.Errorf("%s without a label list in %q", word, expr)
				}
				end := strings.IndexByte(s[k:], ')')
				if end < 0 {
					return refs, fmt.Errorf("unclosed %s( in %q", word, expr)
				}
				for _, l := range strings.Split(s[k+1:k+end], ",") {
					if l = strings.TrimSpace(l); l != "" {
						refs.grouping = append(refs.grouping, l)
					}
				}
				i = k + end + 1
			case promqlFuncs[word] || promqlKeywords[strings.ToLower(word)]:
				i = j
			default:
				sel := selector{metric: word}
				i = j
				if k < len(s) && s[k] == '{' {
					labels, end, err := parseMatchers(s, k)
					if err != nil {
						return refs, fmt.Errorf("%v in %q", err, expr)
					}
					sel.labels = labels
					i = end
				}
				refs.selectors = append(refs.selectors, sel)
			}
		default:
			i++
		}
	}
	return refs, nil
}

func skipString(s string, i int) (int, error) {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		if s[j] == '\\' && q != '`' {
			j++
			continue
		}
		if s[j] == q {
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("unterminated string at %d in %q", i, s)
}

// parseMatchers reads {name op "value", ...} starting at s[i] == '{' and
// returns the label names and the index after '}'.
func parseMatchers(s string, i int) ([]string, int, error) {
	var labels []string
	i++
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == ',' || s[i] == '\n' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			return nil, 0, fmt.Errorf("unclosed matchers")
		}
		if s[i] == '}' {
			return labels, i + 1, nil
		}
		j := i
		for j < len(s) && isIdentChar(s[j]) {
			j++
		}
		if j == i {
			return nil, 0, fmt.Errorf("bad matcher at %d", i)
		}
		labels = append(labels, s[i:j])
		for j < len(s) && s[j] == ' ' {
			j++
		}
		op := ""
		for _, o := range []string{"=~", "!~", "!=", "="} {
			if strings.HasPrefix(s[j:], o) {
				op = o
				break
			}
		}
		if op == "" {
			return nil, 0, fmt.Errorf("bad matcher operator at %d", j)
		}
		j += len(op)
		for j < len(s) && s[j] == ' ' {
			j++
		}
		if j >= len(s) || (s[j] != '"' && s[j] != '\'' && s[j] != '`') {
			return nil, 0, fmt.Errorf("matcher value is not a string at %d", j)
		}
		end, err := skipString(s, j)
		if err != nil {
			return nil, 0, err
		}
		i = end
	}
}

func TestParsePromQL(t *testing.T) {
	cases := []struct {
		expr     string
		metrics  []string
		labels   []string
		grouping []string
	}{
		{`sum by (table, le) (rate(lakemirror_batch_records_bucket{table=~"$table"}[$__rate_interval]))`,
			[]string{"lakemirror_batch_records_bucket"}, []string{"table"}, []string{"table", "le"}},
		{`histogram_quantile(0.95, sum by (le) (rate(x_bucket[5m])))`, []string{"x_bucket"}, nil, []string{"le"}},
		{"time() - max by (table) (lakemirror_last_batch_timestamp_seconds{table=~\"$table\"}) > 600\n  and\nsum by (table) (lag) > 0",
			[]string{"lakemirror_last_batch_timestamp_seconds", "lag"}, []string{"table"}, []string{"table", "table"}},
		{`a unless a offset 1h and on () count(up{job="w", instance!~'x'} offset 1h) > 0`,
			[]string{"a", "a", "up"}, []string{"job", "instance"}, nil},
		{`max(temporal_x_seconds{quantile="0.5", task_queue="lakemirror"}) * 1000 # comment metric_in_comment`,
			[]string{"temporal_x_seconds"}, []string{"quantile", "task_queue"}, nil},
		{`sum without (instance) (m{a="}{"}) / ignoring (b) group_left (c) n`, []string{"m", "n"}, []string{"a"}, []string{"instance", "b", "c"}},
		{`rate(m[5m:1m]) > 1e3 and ${x} < 2`, []string{"m"}, nil, nil},
	}
	for _, c := range cases {
		refs, err := parsePromQL(c.expr)
		if err != nil {
			t.Errorf("%q: %v", c.expr, err)
			continue
		}
		var metrics, labels []string
		for _, s := range refs.selectors {
			metrics = append(metrics, s.metric)
			labels = append(labels, s.labels...)
		}
		if !slices.Equal(metrics, c.metrics) || !slices.Equal(labels, c.labels) || !slices.Equal(refs.grouping, c.grouping) {
			t.Errorf("%q: metrics %v labels %v grouping %v, want %v %v %v", c.expr, metrics, labels, refs.grouping, c.metrics, c.labels, c.grouping)
		}
	}
	for _, bad := range []string{`{__name__="x"}`, `m{a=b}`, `sum by table (m)`, `m{a="x"`} {
		if _, err := parsePromQL(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
