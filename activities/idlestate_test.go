package activities

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/sample"
)

// ReleaseIdleStates releases a table's state only once its writer was
// idle for the given time, never while its lock is held (a batch in
// flight), never with release off (0), and never for a table without
// bronze unless its sidecar was written; a released table drops out of
// the state metrics and its chain log file is removed.
func TestReleaseIdleStatesRules(t *testing.T) {
	s := sample.Generate(sample.Options{Seed: 5, Inserts: 10, Updates: 20})
	ctx := context.Background()
	a := New(mustCatalog(t), nil)
	a.StateDir = t.TempDir()
	spec := TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"}, MaxQuarantine: 1000}.Defaults()
	noBronze := TableSpec{Table: "shop.items", Topic: "shop.public.items", KeyColumns: []string{"order_id"}, MaxQuarantine: 1000,
		WithoutBronze: true}.Defaults()
	applyStreamWith(t, a, spec, s.Delivered, []int{len(s.Delivered)})
	applyStreamWith(t, a, noBronze, s.Delivered, []int{len(s.Delivered)})
	st, _, _ := a.state(spec)
	used := st.used
	sampled := func() bool { // the table's state is in the metrics' snapshot, with a log
		for _, smp := range StateSamples(a).Tables {
			if smp.Table == spec.Table && smp.LogBytes > 0 {
				return true
			}
		}
		return false
	}
	logs := func() int { // the table's chain log files
		m, err := filepath.Glob(filepath.Join(a.StateDir, "shop.orders.*"))
		if err != nil {
			t.Fatal(err)
		}
		return len(m)
	}
	if !sampled() || logs() != 1 {
		t.Fatalf("before a release: sampled %v, %d log files; want true, 1", sampled(), logs())
	}
	for _, c := range []struct {
		what  string
		after time.Duration
		now   time.Time
		lock  bool
		want  int
	}{
		{"release off", 0, used.Add(48 * time.Hour), false, 0},
		{"idle 59m of 1h", time.Hour, used.Add(59 * time.Minute), false, 0},
		{"a batch in flight", time.Hour, used.Add(2 * time.Hour), true, 0},
		{"idle 1h of 1h", time.Hour, used.Add(time.Hour), false, 1},
		{"already released", time.Hour, used.Add(3 * time.Hour), false, 0},
	} {
		if c.lock {
			st.mu.Lock()
		}
		n, err := ReleaseIdleStates(ctx, a, c.after, c.now)
		if c.lock {
			st.mu.Unlock()
		}
		if err != nil || n != c.want {
			t.Fatalf("%s: released %d, %v; want %d", c.what, n, err, c.want)
		}
	}
	if StateReleases(a) != 1 || st.writer != nil || st.local.Load() != nil || sampled() || logs() != 0 {
		t.Fatalf("after the release: %d releases, writer %v, sampled %v, %d log files", StateReleases(a), st.writer != nil, sampled(), logs())
	}
	// the table without bronze keeps its state (sidecars off)
	nb, _, _ := a.state(noBronze)
	if nb.writer == nil || nb.local.Load() == nil {
		t.Fatal("the table without bronze lost its state")
	}
	var tables []string
	for _, smp := range StateSamples(a).Tables {
		tables = append(tables, smp.Table)
	}
	if got := strings.Join(tables, ","); got != "shop.items" {
		t.Fatalf("tables with state after the release: %q, want shop.items", got)
	}
	// with sidecars on it is released after writing its sidecar, and the
	// next use loads that sidecar instead of building
	a.SidecarEvery = 1_000_000
	if n, err := ReleaseIdleStates(ctx, a, time.Hour, time.Now().Add(2*time.Hour)); err != nil || n != 1 {
		t.Fatalf("the table without bronze, sidecars on: released %d, %v; want 1", n, err)
	}
	builds := StateBuilds(a)
	nb, name, _ := a.state(noBronze)
	if err := nb.tableWriter(a, name).Mirror.EnsureState(ctx); err != nil {
		t.Fatal(err)
	}
	if StateBuilds(a) != builds || nb.mirror.Index().Keys() != 10 {
		t.Fatalf("after the sidecar release: %d builds (had %d), %d keys; want a load of 10 keys", StateBuilds(a), builds, nb.mirror.Index().Keys())
	}
}
