package cut

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

func TestOrders(t *testing.T) {
	for _, c := range []struct {
		in   []Orders
		want Orders
	}{
		{nil, nil},
		{[]Orders{{{3, 3}}, {{1, 1}}, {{2, 2}}}, Orders{{1, 3}}},
		{[]Orders{{{5, 9}, {1, 2}}, {{4, 4}}, {{11, 12}, {2, 3}}}, Orders{{1, 9}, {11, 12}}},
		{[]Orders{{{1, 10}}, {{3, 4}}}, Orders{{1, 10}}},
		{[]Orders{{{1, 1}}, {{1, 1}}, {{7, 7}}}, Orders{{1, 1}, {7, 7}}},
	} {
		if got := Union(c.in...); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Union(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	o := Orders(nil)
	for _, n := range []int64{1, 2, 3, 2, 5, 4, 9, 1, 8} {
		o = o.Add(n)
	}
	if want := (Orders{{1, 5}, {8, 9}}); !reflect.DeepEqual(o, want) || o.Len() != 7 {
		t.Errorf("Add: %v (len %d), want %v (len 7)", o, o.Len(), want)
	}
	for n, want := range map[int64]bool{0: false, 1: true, 5: true, 6: false, 7: false, 8: true, 9: true, 10: false} {
		if o.Contains(n) != want {
			t.Errorf("Contains(%d) = %v", n, !want)
		}
	}
	if b, _ := json.Marshal(o); string(b) != "[[1,5],[8,9]]" {
		t.Errorf("JSON %s", b)
	}
	for _, bad := range []Orders{{{0, 1}}, {{3, 2}}, {{-1, -1}}} {
		if err := bad.Check(); err == nil {
			t.Errorf("Check(%v): no error", bad)
		}
	}
	if err := (Orders{{0, 1}}).Check(); err == nil || err.Error() != "cut: order range [0,1]: want 1 ≤ lo ≤ hi" {
		t.Errorf("Check error %v", err)
	}
}

// A redelivered event (the same data_collection_order, or without one
// the same position, at a new Kafka offset) does not complete its
// transaction: the Tracker counts each event once across reports and
// across a restore.
func TestTrackerRedeliveryGolden(t *testing.T) {
	tr := NewTracker("postgresql", []string{"public.accounts", "public.orders"})
	t1 := End{ID: "7:700", Commit: pg(700), TsMs: 1, Counts: map[string]int64{"public.accounts": 3, "public.orders": 1}}
	mustNil(t, "END", tr.End(t1))
	mustNil(t, "batch 1", tr.AppliedEvents("public.accounts", "7:610", Orders{{1, 2}}, nil, ev(600, 612)))
	mustNil(t, "orders", tr.AppliedEvents("public.orders", "7:620", Orders{{1, 1}}, nil, ev(600, 620)))
	// The connector restarted: order 2 again, at a new offset, in the next batch.
	mustNil(t, "batch 2: a redelivery", tr.AppliedEvents("public.accounts", "7:611", Orders{{2, 2}}, nil, ev(600, 611)))
	hold := Cut{Holds: []Hold{{Table: "public.accounts", TxID: "7:700", Commit: pg(700), Missing: 1}}}
	wantCut(t, "redelivered", tr.Cut(), hold)
	if n := tr.AppliedCount("public.accounts", "7:1"); n != 2 {
		t.Fatalf("AppliedCount %d, want 2", n)
	}
	// Through State and Restore (a continue-as-new), and a report in
	// the legacy count form that does not exceed it.
	r, err := Restore(tr.State())
	mustNil(t, "restore", err)
	wantCut(t, "restored", r.Cut(), hold)
	mustNil(t, "legacy", r.Applied("public.accounts", "7:1", 2))
	mustNil(t, "again", r.AppliedEvents("public.accounts", "7:1", Orders{{1, 2}}, nil, ""))
	wantCut(t, "repeated", r.Cut(), hold)
	mustNil(t, "order 3", r.AppliedEvents("public.accounts", "7:612", Orders{{3, 3}}, nil, ev(600, 612)))
	wantCut(t, "complete", r.Cut(), Cut{W: pg(700), TxID: "7:700", TsMs: 1})
	// T7's events redelivered after the cut passed it: below W, not kept;
	// a transaction above W whose END has not arrived is.
	mustNil(t, "after the cut", r.AppliedEvents("public.accounts", "7:612", Orders{{1, 3}}, nil, ev(600, 612)))
	mustNil(t, "next", r.AppliedEvents("public.accounts", "9:710", Orders{{1, 1}}, nil, ev(700, 710)))
	if s := r.State().Seen; !reflect.DeepEqual(s, map[string]map[string]StateSeen{"public.accounts": {"9": {Orders: Orders{{1, 1}}}}}) {
		t.Fatalf("seen after the cut: %v", s)
	}

	// Without orders: distinct positions.
	tr = NewTracker("postgresql", []string{"public.accounts"})
	mustNil(t, "END", tr.End(End{ID: "8:800", Commit: pg(800), Counts: map[string]int64{"public.accounts": 2}}))
	p1, p2 := cdc.PostgresSeq(790, 781), cdc.PostgresSeq(790, 782)
	mustNil(t, "p1", tr.AppliedEvents("public.accounts", "8", nil, []cdc.Seq{p1}, p1))
	mustNil(t, "p1 again", tr.AppliedEvents("public.accounts", "8", nil, []cdc.Seq{p1, p1}, ""))
	wantCut(t, "positions", tr.Cut(), Cut{Holds: []Hold{{Table: "public.accounts", TxID: "8:800", Commit: pg(800), Missing: 1}}})
	r, err = Restore(tr.State())
	mustNil(t, "restore", err)
	mustNil(t, "p2", r.AppliedEvents("public.accounts", "8", nil, []cdc.Seq{p2}, p2))
	wantCut(t, "positions complete", r.Cut(), Cut{W: pg(800), TxID: "8:800"})

	for _, c := range []struct {
		table, tx string
		orders    Orders
		seqs      []cdc.Seq
		last      cdc.Seq
		err       string
	}{
		{"public.x", "8", Orders{{1, 1}}, nil, "", `cut: table not in the group: "public.x"`},
		{"public.accounts", "", Orders{{1, 1}}, nil, "", `cut: applied report of "public.accounts": empty transaction id`},
		{"public.accounts", "9", Orders{{2, 1}}, nil, "", `applied report of "public.accounts", transaction "9": cut: order range [2,1]: want 1 ≤ lo ≤ hi`},
		{"public.accounts", "9", nil, []cdc.Seq{"abc"}, "", `applied report of "public.accounts", transaction "9": cut: position of another width than the group's: 3 bytes`},
		{"public.accounts", "9", Orders{{1, 1}}, nil, "abcd", `applied report of "public.accounts", transaction "9": cut: position of another width than the group's: 4 bytes`},
	} {
		if err := r.AppliedEvents(c.table, c.tx, c.orders, c.seqs, c.last); err == nil || err.Error() != c.err {
			t.Errorf("%+v: error %v, want %q", c, err, c.err)
		}
	}
}

// Random transactions over three tables, their events delivered in
// random batches with random redeliveries (an event again in the same
// batch or a later one, as after a connector restart), ENDs interleaved
// at random, the Tracker restored from its State every few steps: after
// every step W is the newest END such that it and every END before it
// have each of their events delivered in every table (the oracle), never
// earlier because of a redelivery.
func TestTrackerRedeliveryRandom(t *testing.T) {
	tables := []string{"a", "b", "c"}
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 37))
		type event struct {
			tx    int
			table string
			order int64
		}
		nTx := 1 + rng.IntN(8)
		ends := make([]End, nTx)
		var events []event
		for i := range nTx {
			counts := map[string]int64{}
			for _, tb := range tables {
				if n := int64(rng.IntN(4)); n > 0 {
					counts[tb] = n
					for o := int64(1); o <= n; o++ {
						events = append(events, event{i, tb, o})
					}
				}
			}
			ends[i] = End{ID: fmt.Sprintf("%d:%d", i+1, 100*(i+1)), Commit: pg(uint64(100 * (i + 1))), Counts: counts}
		}
		// The stream: every event once in a random order, plus redeliveries.
		stream := append([]event(nil), events...)
		for range rng.IntN(2*len(events) + 1) {
			if len(events) > 0 {
				stream = append(stream, events[rng.IntN(len(events))])
			}
		}
		rng.Shuffle(len(stream), func(i, j int) { stream[i], stream[j] = stream[j], stream[i] })
		tr := NewTracker("postgresql", tables)
		delivered := map[event]bool{}
		nextEnd := 0
		oracle := func() cdc.Seq {
			var w cdc.Seq
			for i := range nextEnd {
				for _, e := range events {
					if e.tx == i && !delivered[e] {
						return w
					}
				}
				w = ends[i].Commit
			}
			return w
		}
		for step := 0; len(stream) > 0 || nextEnd < nTx; step++ {
			if nextEnd < nTx && (len(stream) == 0 || rng.IntN(3) == 0) {
				mustNil(t, "END", tr.End(ends[nextEnd]))
				nextEnd++
			} else {
				// One batch of one table: a run of the stream's events of that table.
				n := 1 + rng.IntN(4)
				batch := map[string]map[int]Orders{}
				for k := 0; k < n && len(stream) > 0; k++ {
					e := stream[0]
					stream = stream[1:]
					delivered[e] = true
					if batch[e.table] == nil {
						batch[e.table] = map[int]Orders{}
					}
					batch[e.table][e.tx] = batch[e.table][e.tx].Add(e.order)
				}
				for tb, txs := range batch {
					for tx, o := range txs {
						mustNil(t, "applied", tr.AppliedEvents(tb, fmt.Sprintf("%d:%d", tx+1, 50+tx), o, nil, ""))
					}
				}
			}
			if step%4 == 3 {
				r, err := Restore(tr.State())
				mustNil(t, "restore", err)
				tr = r
			}
			if got, want := tr.Cut().W, oracle(); got != want {
				t.Fatalf("seed %d step %d: W %v, oracle %v", seed, step, got, want)
			}
		}
		if got := tr.Cut().W; got != ends[nTx-1].Commit {
			t.Fatalf("seed %d: all delivered, W %v, want %v", seed, got, ends[nTx-1].Commit)
		}
	}
}
