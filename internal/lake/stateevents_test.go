package lake

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
)

// TestLoadAllEventsMatchesLoadEvents: past changes loaded through the key
// sort (LoadAllEvents: in memory, and through run files with the index
// spilled) leave the log serving each key the same changes as loading
// them a file at a time (LoadEvents), a redelivered file's changes kept
// once, and the state's events complete.
func TestLoadAllEventsMatchesLoadEvents(t *testing.T) {
	ctx := context.Background()
	stream := spillStream()
	src := newSpillPair(t, nil, t.TempDir())
	for i, evs := range stream {
		src.apply(t, batch(int64(i+1)), evs)
	}
	// the files as bronze gives them: every batch, the second one twice
	files := append(slices.Clone(stream), stream[1])
	byKey := func(evs []*cdc.Event) map[cdc.Key][]*cdc.Event {
		out := map[cdc.Key][]*cdc.Event{}
		for _, e := range evs {
			out[e.Key] = append(out[e.Key], e)
		}
		return out
	}
	keys := map[cdc.Key]bool{}
	for _, evs := range stream {
		for _, e := range evs {
			keys[e.Key] = true
		}
	}
	all := slices.Sorted(func(yield func(cdc.Key) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	})
	dump := func(st *tablestate.State) string {
		t.Helper()
		got, ok, err := st.Events(all)
		if err != nil || !ok {
			t.Fatalf("events: ok %v, %v", ok, err)
		}
		var b strings.Builder
		n := 0
		for _, k := range all {
			var lines []string
			for _, e := range got[k] {
				lines = append(lines, fmt.Sprintf("%x %s %d %s/%d@%d before %s after %s", string(k), e.Seq.Hex(), e.Op, e.Origin.Topic, e.Origin.Partition, e.Origin.Offset, rowText(e.Before), rowText(e.After)))
			}
			slices.Sort(lines)
			n += len(lines)
			b.WriteString(strings.Join(lines, "\n") + "\n")
		}
		if n < 900 {
			t.Fatalf("only %d events logged", n)
		}
		return b.String()
	}
	fresh := func(budget *keyindex.Budget) *tablestate.State {
		m, _ := NewWriters(src.cat, testTable, orderKey, WriterOptions{StateDir: t.TempDir(), History: true, IndexBudget: budget})
		if err := m.EnsureState(ctx); err != nil {
			t.Fatal(err)
		}
		if m.State().EventsComplete() {
			t.Fatal("a state built from tables with rows has its events complete")
		}
		return m.State()
	}
	one := fresh(nil)
	for _, evs := range files {
		if err := one.LoadEvents(byKey(evs)); err != nil {
			t.Fatal(err)
		}
	}
	one.SetEventsComplete()
	want := dump(one)
	for _, c := range []struct {
		name  string
		chunk int
		spill bool
	}{{"in memory", 0, false}, {"runs, spilled", 900, true}} {
		t.Run(c.name, func(t *testing.T) {
			defer tablestate.SetBuildChunk(c.chunk)()
			var budget *keyindex.Budget
			if c.spill {
				budget = keyindex.NewBudget(64<<20, 0)
				defer budget.Close()
			}
			st := fresh(budget)
			if c.spill {
				if err := st.Index().Release(); err != nil { // over its 0 table budget: to disk
					t.Fatal(err)
				}
			}
			if st.Index().Spilled() != c.spill {
				t.Fatalf("index spilled %v, want %v", st.Index().Spilled(), c.spill)
			}
			err := st.LoadAllEvents(func(add func(map[cdc.Key][]*cdc.Event) error) error {
				for _, evs := range files {
					if err := add(byKey(evs)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !st.EventsComplete() {
				t.Fatal("events not complete after LoadAllEvents")
			}
			if got := dump(st); got != want {
				t.Fatalf("LoadAllEvents differs from LoadEvents: %s", firstDiff(got, want))
			}
		})
	}
}

// rowText renders a row's columns and values ("<nil>" for none).
func rowText(r *cdc.Row) string {
	if r == nil {
		return "<nil>"
	}
	return fmt.Sprint(r.Cols.Names, r.Vals)
}
