package merge

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// hist renders versions as "status amount [from..to)" using the lsn word
// of the positions; "now" for the open end.
func hist(vs []Version) string {
	var lines []string
	for _, v := range vs {
		to := "now"
		if !v.Current() {
			to = fmt.Sprint(last(v.ToSeq))
		}
		s, _ := v.Values.Get("status")
		a, _ := v.Values.Get("amount")
		lines = append(lines, fmt.Sprintf("%s %s [%d..%s)", show(s), show(a), last(v.Seq), to))
	}
	return strings.Join(lines, "\n")
}

func last(s cdc.Seq) uint64 { w := s.Words(); return w[len(w)-1] }

func txev(op cdc.Op, seq uint64, id int64, status string, cents int64, tx string) *cdc.Event {
	e := ev(op, seq, id, status, cents)
	e.TxID = tx
	e.SourceTs = int64(seq) * 1000
	return e
}

func replayAll(events []*cdc.Event, o HistoryOptions) []Version {
	for _, g := range GroupByKey(events) {
		vs, _ := Replay(nil, g.Events, o)
		return vs
	}
	return nil
}

func TestHistoryRules(t *testing.T) {
	full := ev(cdc.OpDelete, 0, 1, "paid", 100) // template for a delete with values
	_ = full
	cases := []struct {
		name   string
		events []*cdc.Event
		opts   HistoryOptions
		want   string
	}{
		{"no-op update opens nothing", []*cdc.Event{
			ev(cdc.OpCreate, 1, 1, "placed", 100), ev(cdc.OpUpdate, 2, 1, "placed", 100), ev(cdc.OpUpdate, 3, 1, "paid", 100)},
			HistoryOptions{}, "placed 1.00 [1..3)\npaid 1.00 [3..now)"},
		{"delete then re-create leaves a gap", []*cdc.Event{
			ev(cdc.OpCreate, 1, 1, "placed", 100), ev(cdc.OpDelete, 2, 1, "placed", 100), ev(cdc.OpCreate, 5, 1, "placed", 300)},
			HistoryOptions{}, "placed 1.00 [1..2)\nplaced 3.00 [5..now)"},
		{"source snapshot read counts as a create", []*cdc.Event{
			ev(cdc.OpRead, 1, 1, "placed", 100), ev(cdc.OpUpdate, 4, 1, "paid", 100)},
			HistoryOptions{}, "placed 1.00 [1..4)\npaid 1.00 [4..now)"},
		{"delete of an unseen key opens nothing", []*cdc.Event{ev(cdc.OpDelete, 3, 1, "", 0)}, HistoryOptions{}, ""},
		{"a late insert before a delete stays closed", []*cdc.Event{
			ev(cdc.OpCreate, 1, 1, "placed", 100), ev(cdc.OpDelete, 9, 1, "", 0)},
			HistoryOptions{}, "placed 1.00 [1..9)"},
		{"collapse off: each change of one transaction is a version", []*cdc.Event{
			txev(cdc.OpCreate, 1, 1, "placed", 100, "t1"), txev(cdc.OpUpdate, 2, 1, "paid", 100, "t1"), txev(cdc.OpUpdate, 3, 1, "shipped", 100, "t2")},
			HistoryOptions{}, "placed 1.00 [1..2)\npaid 1.00 [2..3)\nshipped 1.00 [3..now)"},
		{"collapse on: one version per transaction", []*cdc.Event{
			txev(cdc.OpCreate, 1, 1, "placed", 100, "t1"), txev(cdc.OpUpdate, 2, 1, "paid", 100, "t1"), txev(cdc.OpUpdate, 3, 1, "shipped", 100, "t2")},
			HistoryOptions{CollapseTx: true}, "paid 1.00 [1..3)\nshipped 1.00 [3..now)"},
		{"collapse on: created and deleted in one transaction leaves nothing", []*cdc.Event{
			txev(cdc.OpCreate, 1, 1, "placed", 100, "t1"), txev(cdc.OpDelete, 2, 1, "placed", 100, "t1"), txev(cdc.OpCreate, 3, 1, "paid", 100, "t2")},
			HistoryOptions{CollapseTx: true}, "paid 1.00 [3..now)"},
		{"tracking a subset: other columns update the current version", []*cdc.Event{
			ev(cdc.OpCreate, 1, 1, "placed", 100), ev(cdc.OpUpdate, 2, 1, "placed", 250), ev(cdc.OpUpdate, 3, 1, "paid", 250)},
			HistoryOptions{Tracked: []string{"order_id", "status"}}, "placed 2.50 [1..3)\npaid 2.50 [3..now)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := hist(replayAll(c.events, c.opts)); got != c.want {
				t.Fatalf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// A late update that lands between two versions: the rebuilt history
// splits the interval.
func TestHistoryLateUpdateBetweenVersions(t *testing.T) {
	inOrder := []*cdc.Event{ev(cdc.OpCreate, 1, 1, "placed", 100), ev(cdc.OpUpdate, 5, 1, "shipped", 100)}
	late := ev(cdc.OpUpdate, 3, 1, "paid", 100)
	vs, _ := Replay(nil, inOrder, HistoryOptions{})
	if got := hist(vs); got != "placed 1.00 [1..5)\nshipped 1.00 [5..now)" {
		t.Fatal(got)
	}
	all := GroupByKey(append(slices.Clone(inOrder), late))[0].Events
	vs, _ = Replay(nil, all, HistoryOptions{})
	if got, want := hist(vs), "placed 1.00 [1..3)\npaid 1.00 [3..5)\nshipped 1.00 [5..now)"; got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// Replay from a stored version: closing it is reported as prevChanged.
func TestHistoryIncremental(t *testing.T) {
	vs, _ := Replay(nil, []*cdc.Event{ev(cdc.OpCreate, 1, 1, "placed", 100)}, HistoryOptions{})
	out, changed := Replay(&vs[0], []*cdc.Event{ev(cdc.OpUpdate, 2, 1, "placed", 100)}, HistoryOptions{})
	if changed || len(out) != 0 {
		t.Fatalf("no-op update: %v %v", changed, hist(out))
	}
	out, changed = Replay(&vs[0], []*cdc.Event{ev(cdc.OpUpdate, 4, 1, "paid", 100), ev(cdc.OpDelete, 6, 1, "", 0)}, HistoryOptions{})
	if !changed || hist(out) != "placed 1.00 [1..4)\npaid 1.00 [4..6)" {
		t.Fatalf("%v\n%s", changed, hist(out))
	}
	if !vs[0].Current() {
		t.Fatal("Replay modified its input version")
	}
}

func TestRowHashNullSafety(t *testing.T) {
	cols := cdc.NewColumns([]string{"a", "b"})
	row := func(a, b cdc.Value) *cdc.Row { return &cdc.Row{Cols: cols, Vals: []cdc.Value{a, b}} }
	hashes := map[string]string{
		"null,empty": RowHash(row(cdc.Null(), cdc.String("")), nil),
		"empty,null": RowHash(row(cdc.String(""), cdc.Null()), nil),
		"null,null":  RowHash(row(cdc.Null(), cdc.Null()), nil),
		"x,null":     RowHash(row(cdc.String("x"), cdc.Null()), nil),
		"null,x":     RowHash(row(cdc.Null(), cdc.String("x")), nil),
		"ab,c":       RowHash(row(cdc.String("ab"), cdc.String("c")), nil),
		"a,bc":       RowHash(row(cdc.String("a"), cdc.String("bc")), nil),
		"0,null":     RowHash(row(cdc.Int(0), cdc.Null()), nil),
	}
	seen := map[string]string{}
	for k, h := range hashes {
		if len(h) != 32 {
			t.Fatalf("%s: hash %q", k, h)
		}
		if o, ok := seen[h]; ok {
			t.Fatalf("%s and %s collide", k, o)
		}
		seen[h] = k
	}
	if RowHash(row(cdc.Decimal(2550, 2), cdc.Null()), nil) != RowHash(row(cdc.BigDecimal("2550", 2), cdc.Null()), nil) {
		t.Fatal("one decimal hashes two ways")
	}
}

// simHistory applies batches the way the history writer does: keys whose
// batch events all follow the highest applied position extend their
// history with Replay; a key with a late event is rebuilt from every
// event seen so far (the bronze table).
type simHistory struct {
	versions map[cdc.Key][]Version
	maxSeq   map[cdc.Key]cdc.Seq
	seen     []*cdc.Event // bronze
	opts     HistoryOptions
}

func (h *simHistory) apply(batch []*cdc.Event) {
	h.seen = append(h.seen, batch...)
	for _, g := range GroupByKey(batch) {
		vs := h.versions[g.Key]
		late := h.maxSeq[g.Key] != "" && g.Events[0].Seq <= h.maxSeq[g.Key]
		if late {
			var all []*cdc.Event
			for _, e := range h.seen {
				if e.Key == g.Key {
					all = append(all, e)
				}
			}
			full := GroupByKey(all)[0]
			h.versions[g.Key], _ = Replay(nil, full.Events, h.opts)
			h.maxSeq[g.Key] = full.Events[len(full.Events)-1].Seq
			continue
		}
		var prev *Version
		if len(vs) > 0 {
			prev = &vs[len(vs)-1]
		}
		out, replaces := Replay(prev, g.Events, h.opts)
		if replaces {
			vs = vs[:len(vs)-1]
		}
		h.versions[g.Key] = append(vs, out...)
		h.maxSeq[g.Key] = g.Events[len(g.Events)-1].Seq
	}
}

func (h *simHistory) dump() string {
	var keys []string
	byKey := map[string]cdc.Key{}
	for k := range h.versions {
		keys = append(keys, string(k))
		byKey[string(k)] = k
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		for _, v := range h.versions[byKey[k]] {
			id, _ := v.Values.Get("order_id")
			fmt.Fprintf(&b, "%d %s %d..%s %d..%d %s\n", id.I, v.Hash, last(v.Seq), v.ToSeq.Hex(), v.From, v.To, v.OpenTx)
		}
	}
	return b.String()
}

// Issue 4's property: any permutation, duplication and batch split of a
// stream with late events, deletes, re-creates and no-op updates gives
// exactly the history of one clean in-order pass.
func TestPropertyHistoryOrderIndependence(t *testing.T) {
	for _, opts := range []HistoryOptions{{}, {CollapseTx: true}, {Tracked: []string{"order_id", "status"}}} {
		for seed := range uint64(1500) {
			r := rand.New(rand.NewPCG(seed, 99))
			clean := genStream(r, 1+r.IntN(40))
			for i, e := range clean { // transactions of 1-3 changes, no-op updates
				e.SourceTs = int64(i) * 1000
				e.TxID = fmt.Sprint("tx", i/(1+int(seed%3)))
				if e.Op == cdc.OpUpdate && r.IntN(4) == 0 && i > 0 {
					e.After = clean[i-1].Image() // repeats the previous values: a no-op when it is the same key
				}
			}
			want := &simHistory{versions: map[cdc.Key][]Version{}, maxSeq: map[cdc.Key]cdc.Seq{}, opts: opts}
			want.apply(clean)
			got := &simHistory{versions: map[cdc.Key][]Version{}, maxSeq: map[cdc.Key]cdc.Seq{}, opts: opts}
			for _, b := range deliver(r, clean) {
				got.apply(b)
			}
			if got.dump() != want.dump() {
				t.Fatalf("opts %+v seed %d:\ngot:\n%s\nwant:\n%s", opts, seed, got.dump(), want.dump())
			}
		}
	}
}
