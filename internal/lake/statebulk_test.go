package lake

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/lake/localstate"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
)

// stateDump renders what a state holds per key, independent of how its
// log lays the records out: the index entry (mirror file by path), the
// mirror values, the open history version and the live history rows
// (history files by path), sorted by key.
func stateDump(t *testing.T, s *tablestate.State) string {
	t.Helper()
	var keys []cdc.Key
	s.Index().EachHead(func(k cdc.Key, _ uint64) { keys = append(keys, k) })
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	hrow := func(h *localstate.HistRow) string {
		return fmt.Sprintf("%s..%s %d..%d %s %q %s@%d", h.Seq.Hex(), h.ToSeq.Hex(), h.From, h.To, h.Hash, h.Tx, s.HFiles[h.File], h.Pos)
	}
	vals := func(r *cdc.Row) string {
		if r == nil {
			return "-"
		}
		return fmt.Sprint(r.Cols.Names, r.Vals)
	}
	var out []string
	for _, k := range keys {
		line := fmt.Sprintf("%x:", string(k))
		if e, ok := s.Index().Lookup(k); ok {
			line += fmt.Sprintf(" mirror %s %v %s@%d", e.Seq.Hex(), e.Deleted, s.Index().FilePath(e.File), e.Pos)
		}
		var mirror *cdc.Row
		if err := s.Walk(k, localstate.WantMirror, func(r *localstate.ChainRec) bool {
			if r.Flags&localstate.RecMirror == 0 {
				return true
			}
			mirror = r.Mirror
			return false
		}); err != nil {
			t.Fatal(err)
		}
		line += " values " + vals(mirror)
		h, ov, err := s.OpenVersion(s.Index().EntryOf(k), k)
		if err != nil {
			t.Fatal(err)
		}
		if h != nil {
			line += " open " + hrow(h) + " " + vals(ov)
		}
		rows, err := s.LiveRows(k)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			line += " | " + hrow(&r)
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// A state built from the tables holds, per key, what the state the
// batches wrote holds (index entry, mirror values, open version, live
// history rows), whether the build sorts in memory or through many run
// files with its index spilled; its log is one record per key, smaller
// than the batches' log; and the next batches apply on it exactly as on
// the batches' state.
func TestStateBuildMatchesBatches(t *testing.T) {
	ctx := context.Background()
	stream := spillStream()
	for _, c := range []struct {
		name  string
		chunk int
		spill bool
	}{{"in memory", 0, false}, {"runs, spilled", 700, true}} {
		t.Run(c.name, func(t *testing.T) {
			src := newSpillPair(t, nil, t.TempDir())
			for i, evs := range stream[:10] {
				src.apply(t, batch(int64(i+1)), evs)
			}
			want := stateDump(t, src.m.State())
			if strings.Count(want, "\n") < 250 || !strings.Contains(want, "open") || !strings.Contains(want, "values") {
				t.Fatalf("the batches' state is too thin to compare:\n%s", want)
			}
			defer tablestate.SetBuildChunk(c.chunk)()
			var budget *keyindex.Budget
			if c.spill {
				budget = keyindex.NewBudget(64<<20, 0)
				defer budget.Close()
			}
			builds := map[string]int{}
			m, h := NewWriters(src.cat, testTable, orderKey, WriterOptions{StateDir: t.TempDir(), History: true, IndexBudget: budget,
				OnBuild: func(r string) { builds[r]++ }})
			var ticks int
			m.State().SetBuildProgress(func(rows, keys int) { ticks++ })
			if err := m.EnsureState(ctx); err != nil {
				t.Fatal(err)
			}
			st := m.State()
			if got := stateDump(t, st); got != want {
				t.Fatalf("built state differs from the batches' state: %s", firstDiff(got, want))
			}
			if runs, _ := st.BuildRuns(); c.chunk > 0 && runs < 10 || c.chunk == 0 && runs != 0 {
				t.Fatalf("build wrote %d runs", runs)
			}
			if ticks != 0 {
				t.Fatalf("progress told %d times for a build of fewer than 65,536 rows", ticks)
			}
			if st.LogBytes() >= src.m.State().LogBytes() {
				t.Fatalf("built log %d bytes, the batches' %d", st.LogBytes(), src.m.State().LogBytes())
			}
			// the next batches on the built state (its index spilled at
			// the first one's safe point under the 0 table budget) leave
			// it as the batches' state after them
			for i, evs := range stream[10:] {
				p := &spillPair{cat: src.cat, m: m, h: h, builds: builds}
				p.apply(t, batch(int64(11+i)), evs)
			}
			if st.Index().Spilled() != c.spill {
				t.Fatalf("index spilled %v, want %v", st.Index().Spilled(), c.spill)
			}
			if fmt.Sprint(builds) != "map[new:1]" {
				t.Fatalf("builds %v", builds)
			}
			after := stateDump(t, st)
			other := newSpillPair(t, nil, t.TempDir())
			other.cat = src.cat
			other.m, other.h = NewWriters(src.cat, testTable, orderKey, WriterOptions{StateDir: t.TempDir(), History: true})
			if err := other.m.EnsureState(ctx); err != nil {
				t.Fatal(err)
			}
			if got := stateDump(t, other.m.State()); got != after || after == want {
				t.Fatalf("after two more batches, the state differs from one built again from the tables: %s", firstDiff(after, got))
			}
		})
	}
}

// firstDiff describes the first line where a and b differ.
func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(la), len(lb)) {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n%s\nagainst\n%s", i+1, x, y)
		}
	}
	return "none"
}

// A build whose caller's context ends (ApplyBatch's start-to-close
// timeout) goes on without it: the caller gets the context's error, the
// next use of the state waits for that build instead of starting over,
// and the state is the one a build to the end gives.
func TestStateBuildOutlivesItsCaller(t *testing.T) {
	src := newSpillPair(t, nil, t.TempDir())
	for i, evs := range spillStream()[:6] {
		src.apply(t, batch(int64(i+1)), evs)
	}
	want := stateDump(t, src.m.State())
	defer tablestate.SetBuildTickRows(1)()
	builds := map[string]int{}
	m, _ := NewWriters(src.cat, testTable, orderKey, WriterOptions{StateDir: t.TempDir(), History: true,
		OnBuild: func(r string) { builds[r]++ }})
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	var ticks []string
	m.State().SetBuildProgress(func(rows, keys int) {
		ticks = append(ticks, fmt.Sprint(rows, keys))
		if rows == 1 {
			cancel() // the attempt times out while the build reads its first row
			<-release
		}
	})
	if err := m.EnsureState(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("EnsureState with its context ended mid-build: %v, want context.Canceled", err)
	}
	// other goroutines see the running build's progress (status)
	if p, ok := m.State().Building(); !ok || p.Rows != 1 || p.Keys != 0 || time.Since(p.Since) > time.Minute {
		t.Fatalf("Building mid-build: %+v, %v; want 1 row read, 0 keys written", p, ok)
	}
	close(release)
	if err := m.EnsureState(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p, ok := m.State().Building(); ok {
		t.Fatalf("Building after the build: %+v", p)
	}
	if fmt.Sprint(builds) != "map[new:1]" {
		t.Fatalf("builds %v, want map[new:1] (the retry waited for the first build)", builds)
	}
	if got := stateDump(t, m.State()); got != want {
		t.Fatalf("state after the detached build differs: %s", firstDiff(got, want))
	}
	if len(ticks) < 100 || ticks[0] != "1 0" {
		t.Fatalf("progress %d times from %v, want every row read from 1 0", len(ticks), ticks[:min(3, len(ticks))])
	}
}
