//go:build e2e

package activities

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// TestBlockingReadsAddNothing: the tables with the blocking reads equal
// those without, in one batch in source order and in split batches with
// late records and redeliveries, steady and with restarts.
func TestBlockingReadsAddNothing(t *testing.T) {
	variants := []bopts{
		{keys: 3, changes: 30, truncates: true, blocking: 2, late: 4, dups: 3},
		{keys: 3, changes: 30, truncates: true, initial: true, blocking: 2, late: 4, dups: 3},
		{keys: 4, changes: 40, truncates: true, toast: true, initial: true, blocking: 3, late: 6, dups: 4},
		{keys: 4, changes: 40, truncates: true, atTruncate: true, initial: true, blocking: 3, late: 6, dups: 4},
		{keys: 4, changes: 40, keyChanges: true, initial: true, blocking: 2, late: 6, dups: 4},
		{keys: 3, changes: 40, truncates: true, toast: true, initial: true, blocking: 2, late: 6, dups: 4, tracked: true},
		{keys: 3, changes: 40, truncates: true, initial: true, blocking: 2, late: 6, dups: 4, collapse: true},
		{keys: 2, changes: 30, truncates: true, riFull: true, initial: true, blocking: 4, late: 10, dups: 6},
		{keys: 5, changes: 60, truncates: true, toast: true, initial: true, blocking: 3, late: 12, dups: 6},
	}
	tablesOpts := []TableSpec{{}, {WithoutBronze: true}, {WithoutHistory: true}, {WithoutHistory: true, WithoutBronze: true}}
	if s := os.Getenv("BLOCKING_TABLES"); s != "" {
		var i int
		fmt.Sscan(s, &i)
		tablesOpts = tablesOpts[i : i+1]
	}
	eachBlockingRun(t, len(variants), tablesOpts, 6, func(r *rand.Rand, vi int, topts TableSpec) blockingRun {
		o := variants[vi]
		with, without := bgen(r, o)
		if o.tracked {
			topts.HistoryColumns = []string{"order_id", "status"}
		}
		return blockingRun{with: with, without: without, late: o.late, dups: o.dups, collapse: o.collapse, topts: topts}
	})
}

// TestBlockingReadsInFlightTransactions: as TestBlockingReadsAddNothing,
// with transactions of one or two changes in flight across the blocking
// snapshots (fgen).
func TestBlockingReadsInFlightTransactions(t *testing.T) {
	variants := []fopts{
		{keys: 3, steps: 40, initial: true, blocking: 2, slow: 3, late: 4, dups: 3},
		{keys: 3, steps: 40, initial: true, truncates: true, blocking: 2, slow: 3, late: 4, dups: 3},
		{keys: 3, steps: 40, initial: true, truncates: true, blocking: 3, slow: 2, twoChanges: true, late: 6, dups: 3},
		{keys: 4, steps: 60, initial: true, truncates: true, blocking: 3, slow: 3, twoChanges: true, late: 6, dups: 3, collapse: true},
		{keys: 2, steps: 40, truncates: true, blocking: 4, slow: 2, twoChanges: true, late: 8, dups: 4},
	}
	tablesOpts := []TableSpec{{}, {WithoutBronze: true}, {WithoutHistory: true}}
	eachBlockingRun(t, len(variants), tablesOpts, 4, func(r *rand.Rand, vi int, topts TableSpec) blockingRun {
		o := variants[vi]
		with, without := fgen(r, o)
		return blockingRun{with: with, without: without, late: o.late, dups: o.dups, collapse: o.collapse, topts: topts}
	})
}

type bopts struct {
	keys, changes int
	truncates     bool
	toast         bool
	keyChanges    bool
	riFull        bool
	initial       bool // keys live before streaming, read by an initial snapshot at (0, 100)
	blocking      int  // number of blocking snapshots
	late, dups    int
	tracked       bool
	collapse      bool
	atTruncate    bool // blocking snapshots sometimes at exactly a truncate's lsn
}

// bgen returns the source with blocking reads (in stream order, at the
// point of L) and the same without them.
func bgen(r *rand.Rand, o bopts) (with, without []wev) {
	rows := map[int]*krow{}
	for k := 1; k <= o.keys; k++ {
		rows[k] = &krow{}
	}
	emit := func(e wev, snap bool) {
		with = append(with, e)
		if !snap {
			without = append(without, e)
		}
	}
	if o.initial {
		for k := 1; k <= o.keys; k++ {
			if r.IntN(2) == 0 {
				x := rows[k]
				x.live, x.status, x.note = true, fmt.Sprintf("i%d", k), fmt.Sprintf("in%d", k)
				emit(pgw("r", "null", img(k, x), 100), false)
			}
		}
	}
	snapAt := map[int]bool{}
	for range o.blocking {
		snapAt[r.IntN(o.changes)] = true
	}
	blocking := func(l int) {
		for k := 1; k <= o.keys; k++ {
			if x := rows[k]; x.live {
				emit(pgw("r", "null", img(k, x), l), true)
			}
		}
	}
	lsn := 100
	for i := range o.changes {
		lsn += 10
		if snapAt[i] && !o.atTruncate {
			blocking(lsn - 5)
		}
		if o.truncates && r.IntN(12) == 0 {
			if snapAt[i] && o.atTruncate {
				blocking(lsn) // read at the truncate's own lsn: before it
			}
			emit(wev{m: sample.PostgresChange("t", "null", "null", lsn), lsn: lsn}, false)
			for _, x := range rows {
				x.live = false
			}
			continue
		}
		if snapAt[i] && o.atTruncate {
			blocking(lsn - 5)
		}
		k := 1 + r.IntN(o.keys)
		x := rows[k]
		if !x.live {
			x.live, x.status, x.note = true, fmt.Sprintf("s%d", lsn), fmt.Sprintf("n%d", lsn)
			emit(pgw("c", "null", img(k, x), lsn), false)
			continue
		}
		if o.keyChanges && r.IntN(8) == 0 {
			// no TOAST placeholder in the new key's create: bgen's draws
			if evs := keyChange(r, rows, k, lsn, o.riFull, false, false); evs != nil {
				for _, e := range evs {
					emit(e, false)
				}
				lsn++
				continue
			}
		}
		emit(deleteOrUpdate(r, k, x, lsn, o.riFull, o.toast), false)
	}
	if snapAt[o.changes-1] || o.blocking > 0 && r.IntN(3) == 0 {
		blocking(lsn + 5)
	}
	return with, without
}

// btables: mirror without _seq (a no-op re-read of a key only read before
// moves its _seq), history with positions.
func (w *wrun) btables() (string, string) {
	name := lake.TableName{Namespace: "shop", Name: "orders"}
	m := tableText(w.t, w.cat, name, false, "order_id", "status", "note", lake.ColDeleted)
	h := ""
	if !w.spec.WithoutHistory {
		h = tableText(w.t, w.cat, name, true, "order_id", "status", "note", lake.ColSeq, lake.ColValidToSeq, lake.ColIsCurrent, lakecat.ColValidFrom, lakecat.ColValidTo)
	}
	sortLines := func(s string) string {
		l := strings.Split(s, "\n")
		slices.Sort(l)
		return strings.Join(l, "\n")
	}
	return sortLines(m), sortLines(h)
}

func newBrun(t *testing.T, spec TableSpec, collapse bool) *wrun {
	w := newWrun(t, spec)
	w.spec.HistoryCollapseTx = collapse
	return w
}

// blockingRun is one generated source with and without its blocking
// reads, its delivery faults (late records, redeliveries) and the table
// setup to apply it to.
type blockingRun struct {
	with, without []wev
	late, dups    int
	collapse      bool
	topts         TableSpec
}

// eachBlockingRun checks checkAddsNothing for every seed (BLOCKING_SEED,
// BLOCKING_SEEDS), variant below variants (all, or BLOCKING_VARIANT) and
// table setup of tablesOpts, on the source gen makes from the seed's and
// variant's random numbers, delivered with its faults in random batch
// sizes; it stops the test after more than maxFails differing runs.
func eachBlockingRun(t *testing.T, variants int, tablesOpts []TableSpec, maxFails int, gen func(r *rand.Rand, vi int, topts TableSpec) blockingRun) {
	t.Helper()
	first, n, vfilter := envInt("BLOCKING_SEED", 1), envInt("BLOCKING_SEEDS", 1), envInt("BLOCKING_VARIANT", -1)
	fails := 0
	for seed := first; seed < first+n; seed++ {
		for vi := range variants {
			if vfilter >= 0 && vi != vfilter {
				continue
			}
			for ti, topts := range tablesOpts {
				r := rand.New(rand.NewPCG(uint64(seed), uint64(vi)))
				b := gen(r, vi, topts)
				del := deliverFaults(r, b.with, wopts{late: b.late, dups: b.dups})
				sizes := splitSizes(r, len(del), 6)
				tag := fmt.Sprintf("seed %d variant %d tables %d", seed, vi, ti)
				fails += checkAddsNothing(t, tag, uint64(seed), b.topts, b.collapse, b.with, b.without, del, sizes)
				if fails > maxFails {
					t.Fatal("too many")
				}
			}
		}
	}
}

// checkAddsNothing applies without (the source without its blocking
// reads) in one batch, with (the source with them) in one batch, and del
// (with as delivered: late records, redeliveries) split into sizes, on a
// steady worker and on one restarted before random batches (seeded by
// seed); every run must give the tables of without. It returns the number
// of runs that differ (each reported).
func checkAddsNothing(t *testing.T, tag string, seed uint64, topts TableSpec, collapse bool, with, without, del []wev, sizes []int) int {
	t.Helper()
	fails := 0
	clean := newBrun(t, topts, collapse)
	clean.apply(without, false)
	wm, wh := clean.btables()
	one := newBrun(t, topts, collapse)
	one.apply(with, false)
	if om, oh := one.btables(); om != wm || oh != wh {
		t.Errorf("%s: one batch with blocking reads differs\nmirror:\n%s\nwant:\n%s\nhistory:\n%s\nwant:\n%s\nsource: %v", tag, om, wm, oh, wh, lsnsOp(with))
		fails++
	}
	for _, mode := range []string{"steady", "restarts"} {
		if mode == "restarts" && topts.WithoutBronze {
			continue // a late key after a restart without bronze keeps its versions (Unwoven): docs/design.md, Known gaps
		}
		w := newBrun(t, topts, collapse)
		w.applySplit(del, sizes, mode == "restarts", seed)
		if sm, sh := w.btables(); sm != wm || sh != wh {
			t.Errorf("%s %s: differs from clean without reads\nmirror:\n%s\nwant:\n%s\nhistory:\n%s\nwant:\n%s\ndelivered: %v\nsizes %v", tag, mode, sm, wm, sh, wh, lsnsOp(del), sizes)
			fails++
		}
	}
	return fails
}

// applySplit applies del in batches of sizes; with restarts the worker
// restarts before a batch at random (the seed's draws).
func (w *wrun) applySplit(del []wev, sizes []int, restarts bool, seed uint64) {
	rr := rand.New(rand.NewPCG(seed, 99))
	off := 0
	for i, n := range sizes {
		if restarts && i > 0 && rr.IntN(2) == 0 {
			w.restart()
		}
		w.apply(del[off:off+n], false)
		off += n
	}
}

// lsnsOp names each delivered record by op and position ("~" for a
// tombstone).
func lsnsOp(d []wev) []string {
	out := make([]string, len(d))
	for i, e := range d {
		op := byte('~')
		if e.m.Value != nil {
			op = e.m.Op
		}
		out[i] = fmt.Sprintf("%c%d", op, e.lsn)
	}
	return out
}

// pgMsg is a Debezium PostgreSQL event with source.sequence
// [lastCommit, lsn] (lastCommit 0 = null) and txId tx.
func pgMsg(op, before, after string, lastCommit, lsn, tx, ts int) wev {
	lc := "null"
	if lastCommit > 0 {
		lc = fmt.Sprintf(`\"%d\"`, lastCommit)
	}
	v := fmt.Sprintf(`{"before":%s,"after":%s,"source":{"version":"2.7.0.Final","connector":"postgresql","name":"pg","ts_ms":%d,"snapshot":"false","db":"db","sequence":"[%s, \"%d\"]","schema":"public","table":"orders","txId":%d,"lsn":%d},"op":%q,"ts_ms":%d}`,
		before, after, 1767258000000+ts, lc, lsn, tx, lsn, op, 1767258000000+ts)
	return wev{m: sample.Message{Value: []byte(v), Op: op[0]}, lsn: lsn}
}

type fopts struct {
	keys, steps int
	truncates   bool
	initial     bool
	blocking    int
	slow        int // chance 1/slow that a change starts an in-flight transaction
	twoChanges  bool
	late, dups  int
	collapse    bool
}

// fgen: a source with transactions in flight across blocking snapshots.
// Each transaction changes one key (once, or twice when twoChanges); a
// slow transaction's changes are written, then other keys' transactions
// run and a snapshot may be taken, then it commits. Stream order is
// commit order; an event's sequence is [previous commit, lsn].
func fgen(r *rand.Rand, o fopts) (with, without []wev) {
	committed := map[int]*krow{} // visible state
	working := map[int]*krow{}   // latest state incl. in flight
	for k := 1; k <= o.keys; k++ {
		committed[k], working[k] = &krow{}, &krow{}
	}
	lsn := 100
	prevCommit := 0
	tx := 1000
	emit := func(e wev, snap bool) {
		with = append(with, e)
		if !snap {
			without = append(without, e)
		}
	}
	if o.initial {
		for k := 1; k <= o.keys; k++ {
			if r.IntN(2) == 0 {
				x := &krow{true, fmt.Sprintf("i%d", k), fmt.Sprintf("in%d", k)}
				*committed[k], *working[k] = *x, *x
				emit(pgMsg("r", "null", img(k, x), 0, lsn, 1, lsn), false)
			}
		}
	}
	type change struct {
		op, before, after string
		lsn               int
	}
	type txn struct {
		key     int
		changes []change
		id      int
	}
	var slow *txn
	commit := func(t *txn, at int) {
		for _, c := range t.changes {
			emit(pgMsg(c.op, c.before, c.after, prevCommit, c.lsn, t.id, at), false)
		}
		prevCommit = at
		if t.key > 0 {
			*committed[t.key] = *working[t.key]
		} else {
			for k := range committed {
				*committed[k] = *working[k]
			}
		}
	}
	// one change of key k on the working state
	mk := func(k int) change {
		lsn += 10
		x := working[k]
		if !x.live {
			x.live, x.status, x.note = true, fmt.Sprintf("s%d", lsn), fmt.Sprintf("n%d", lsn)
			return change{"c", "null", img(k, x), lsn}
		}
		if r.IntN(4) == 0 {
			x.live = false
			return change{"d", fmt.Sprintf(`{"order_id":%d}`, k), "null", lsn}
		}
		if r.IntN(2) == 0 {
			x.status = fmt.Sprintf("s%d", lsn)
		} else {
			x.note = fmt.Sprintf("n%d", lsn)
		}
		return change{"u", "null", img(k, x), lsn}
	}
	snapsLeft := o.blocking
	for range o.steps {
		if snapsLeft > 0 && r.IntN(max(1, o.steps/(o.blocking*2))) == 0 {
			snapsLeft--
			lsn += 10
			l := lsn - 5
			for k := 1; k <= o.keys; k++ {
				if x := committed[k]; x.live {
					emit(pgMsg("r", "null", img(k, x), 0, l, 1, l), true)
				}
			}
			continue
		}
		if slow != nil && r.IntN(3) == 0 {
			lsn += 10
			commit(slow, lsn)
			slow = nil
			continue
		}
		if o.truncates && slow == nil && r.IntN(15) == 0 {
			lsn += 10
			for _, x := range working {
				x.live = false
			}
			tx++
			t := &txn{key: 0, id: tx, changes: []change{{"t", "null", "null", lsn}}}
			lsn += 2
			commit(t, lsn)
			continue
		}
		k := 1 + r.IntN(o.keys)
		if slow != nil && slow.key == k {
			continue // row lock
		}
		tx++
		t := &txn{key: k, id: tx}
		t.changes = append(t.changes, mk(k))
		if o.twoChanges && r.IntN(3) == 0 {
			t.changes = append(t.changes, mk(k))
		}
		if slow == nil && o.slow > 0 && r.IntN(o.slow) == 0 {
			slow = t
			continue
		}
		lsn += 2
		commit(t, lsn)
	}
	if slow != nil {
		lsn += 10
		commit(slow, lsn)
	}
	return with, without
}
