package telemetry

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
)

// scrape renders the named families of m's registry as the text format.
func scrape(t *testing.T, m *Metrics, names ...string) string {
	t.Helper()
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, f := range fams {
		if slices.Contains(names, f.GetName()) {
			if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
				t.Fatal(err)
			}
		}
	}
	return b.String()
}

// A scrape reports each table's key index in RAM and on disk, its chain
// log, and the worker's index budget, exactly as the state function
// gives them; without one, none of them.
func TestStateMetrics(t *testing.T) {
	m := New()
	names := []string{MetricIndexBytes, MetricStateLogBytes, MetricIndexBudget}
	if got := scrape(t, m, names...); got != "" {
		t.Fatalf("without a state function:\n%s", got)
	}
	m.SetStateFunc(func() StateSnapshot {
		return StateSnapshot{Tables: []StateSample{{Table: "shop.orders", IndexRAMBytes: 1048576, IndexDiskBytes: 3221225472, LogBytes: 5000},
			{Table: "shop.items", IndexRAMBytes: 4096}}, WorkerBudgetBytes: 3221225472, TableBudgetBytes: 805306368}
	})
	want := `# HELP lakemirror_state_index_budget_bytes The worker's RAM budget for key indexes, in bytes, by scope: worker (all tables together) and table (one table's, before it spills to disk).
# TYPE lakemirror_state_index_budget_bytes gauge
lakemirror_state_index_budget_bytes{scope="table"} 8.05306368e+08
lakemirror_state_index_budget_bytes{scope="worker"} 3.221225472e+09
# HELP lakemirror_state_index_bytes A table's key index on the worker holding it, in bytes, by medium: ram (hash table and entries, a spilled index's memtables) and disk (a spilled index's store).
# TYPE lakemirror_state_index_bytes gauge
lakemirror_state_index_bytes{medium="disk",table="shop.items"} 0
lakemirror_state_index_bytes{medium="disk",table="shop.orders"} 3.221225472e+09
lakemirror_state_index_bytes{medium="ram",table="shop.items"} 4096
lakemirror_state_index_bytes{medium="ram",table="shop.orders"} 1.048576e+06
# HELP lakemirror_state_log_bytes A table's chain log on the worker's local disk, in bytes.
# TYPE lakemirror_state_log_bytes gauge
lakemirror_state_log_bytes{table="shop.items"} 0
lakemirror_state_log_bytes{table="shop.orders"} 5000
`
	if got := scrape(t, m, names...); got != want {
		t.Fatalf("scrape:\n%s\nwant:\n%s", got, want)
	}
}

// The group cut lag: now − the newest published cut's source commit
// time, computed at scrape (it grows while no cut is published); an
// older cut does not move it back, a cut without a time records nothing.
func TestGroupCutLag(t *testing.T) {
	m := New()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	m.now = func() time.Time { return now }
	m.CutPublished("shop", now.Add(-90*time.Second))
	m.CutPublished("shop", now.Add(-10*time.Minute)) // older: ignored
	m.CutPublished("audit", time.Time{})             // per position: none
	const head = "# HELP lakemirror_group_cut_lag_seconds Seconds between now and the source commit time of the source group's newest published consistent cut (what a reader of the cut-<n> or consistent tags misses); grows while no cut is published.\n# TYPE lakemirror_group_cut_lag_seconds gauge\n"
	if got, want := scrape(t, m, MetricGroupCutLag), head+"lakemirror_group_cut_lag_seconds{group=\"shop\"} 90\n"; got != want {
		t.Fatalf("scrape:\n%s\nwant:\n%s", got, want)
	}
	now = now.Add(30 * time.Second)
	if got, want := scrape(t, m, MetricGroupCutLag), head+"lakemirror_group_cut_lag_seconds{group=\"shop\"} 120\n"; got != want {
		t.Fatalf("scrape 30 s later:\n%s\nwant:\n%s", got, want)
	}
	m.CutPublished("shop", now.Add(-2*time.Second))
	if got, want := scrape(t, m, MetricGroupCutLag), head+"lakemirror_group_cut_lag_seconds{group=\"shop\"} 2\n"; got != want {
		t.Fatalf("scrape after a new cut:\n%s\nwant:\n%s", got, want)
	}
}
