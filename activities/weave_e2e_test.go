//go:build e2e

package activities

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/schemas"
)

// The steady worker (late keys woven inline), a worker restarted before
// every batch (late keys by RebuildKeys from bronze) and one clean batch
// of the source order end with the same mirror and history, values
// included, under late, duplicated and swapped records, TOAST
// placeholders, deletes without before images, truncates and key changes.
func TestWeaveRandom(t *testing.T) {
	first := envInt("WEAVE_SEED", 1)
	n := envInt("WEAVE_SEEDS", 1)
	variants := []wopts{
		{keys: 3, changes: 30, toast: true, late: 6, dups: 4, oos: 3},
		{keys: 3, changes: 30, toast: true, riFull: true, late: 6, dups: 4, oos: 3},
		{keys: 4, changes: 40, toast: true, truncates: true, late: 6, dups: 4, oos: 3},
		{keys: 4, changes: 40, toast: true, keyChanges: true, late: 6, dups: 4, oos: 3},
		{keys: 4, changes: 40, keyChanges: true, late: 6, dups: 4, oos: 3},
		{keys: 2, changes: 25, toast: true, truncates: true, riFull: true, late: 10, dups: 6, oos: 5},
		{keys: 6, changes: 80, toast: true, late: 16, dups: 10, oos: 6},
		{keys: 2, changes: 60, toast: true, late: 20, dups: 10, oos: 10},
		{keys: 5, changes: 60, toast: true, riFull: true, keyChanges: true, late: 12, dups: 8, oos: 6},
		{keys: 3, changes: 40, toast: true, late: 8, dups: 4, oos: 3, tracked: true},
		{keys: 2, changes: 60, toast: true, riFull: true, late: 20, dups: 10, oos: 10, tracked: true},
		{keys: 4, changes: 40, toast: true, keyChanges: true, samePos: true, late: 6, dups: 4, oos: 3},
		{keys: 5, changes: 60, toast: true, riFull: true, keyChanges: true, samePos: true, late: 12, dups: 8, oos: 6},
	}
	// variants 3 and 8 (key changes with TOAST placeholders) failed
	// until 2026-12-05: a placeholder took a stale copy of the old key's
	// change in the batch, or its stored row past the create, or (variant
	// 8, seeds 2 and 13) kept what was known when the create came before
	// every change of its old key. Variant 5 failed without bronze until
	// 2026-12-05 (seed 21: a truncate applied before the mirror existed
	// was recorded only by bronze; the namespace keeps it now). Variant
	// 11 failed at seed 34 until 2026-12-06: a late update of a key
	// change's old key did not reach the new key
	// (TestBreakKeyChangeLateOldKeyUpdate).
	// WEAVE_VARIANT=n runs variant n alone
	vfilter := envInt("WEAVE_VARIANT", -1)
	for seed := first; seed < first+n; seed++ {
		for vi, o := range variants {
			if vfilter >= 0 && vi != vfilter {
				continue
			}
			r := rand.New(rand.NewPCG(uint64(seed), uint64(vi)))
			src := genSource(r, o)
			del := deliverFaults(r, src, o)
			sizes := splitSizes(r, len(del), 6)

			topts := weaveTableOpts()
			if o.tracked {
				topts.HistoryColumns = []string{"order_id", "status"}
			}
			clean := newWrun(t, topts)
			clean.apply(src, false)
			wm, wh := clean.tables()

			run := func(restart func(int) bool) *wrun {
				w := newWrun(t, topts)
				off := 0
				for i, n := range sizes {
					if restart(i) {
						w.restart()
					}
					w.apply(del[off:off+n], false)
					off += n
				}
				return w
			}
			steady := run(func(int) bool { return false })
			sm, sh := steady.tables()
			tag := fmt.Sprintf("seed %d variant %d (woven %d, rebuilds %d)", seed, vi, steady.woven, steady.rebuil)
			if sm != wm || sh != wh {
				t.Errorf("%s: steady differs from clean\nmirror steady:\n%s\nmirror clean:\n%s\nhistory steady:\n%s\nhistory clean:\n%s\ndelivered: %v\nsizes %v",
					tag, sm, wm, sh, wh, lsns(del), sizes)
				continue
			}
			// restarted workers read past changes from bronze: as the cost
			// decides (""), for the late keys alone ("keys"), or all at once
			// ("all")
			for _, mode := range []string{"", "keys", "all"} {
				testPastRead = mode
				rr := rand.New(rand.NewPCG(uint64(seed), 77))
				var old *wrun
				if os.Getenv("WEAVE_RANDOM_RESTARTS") != "" {
					old = run(func(i int) bool { return i > 0 && rr.IntN(3) == 0 })
				} else {
					old = run(func(i int) bool { return i > 0 })
				}
				testPastRead = ""
				om, oh := old.tables()
				if !topts.WithoutBronze && (om != wm || oh != wh) {
					t.Errorf("%s: restarted (RebuildKeys, past read %q) differs from clean\nmirror old:\n%s\nmirror clean:\n%s\nhistory old:\n%s\nhistory clean:\n%s\ndelivered: %v\nsizes %v",
						tag, mode, om, wm, oh, wh, lsns(del), sizes)
				}
			}
		}
	}
}

// Purges and compactions between batches: the steady worker (weaving) and
// one restarted before every batch (RebuildKeys) end alike; with
// compactions only, both equal the clean pass.
func TestWeaveMaintenance(t *testing.T) {
	first := envInt("WEAVE_SEED", 1)
	n := envInt("WEAVE_SEEDS", 1)
	variants := []wopts{
		{keys: 3, changes: 30, toast: true, late: 6, dups: 4, oos: 3},
		{keys: 3, changes: 30, toast: true, riFull: true, late: 6, dups: 4, oos: 3},
	}
	if os.Getenv("WEAVE_ALL") == "" {
		variants = variants[:1]
	}
	for _, topts := range []TableSpec{{}, {WithoutHistory: true}} {
		for _, purge := range []bool{false, true} {
			for seed := first; seed < first+n; seed++ {
				for vi, o := range variants {
					r := rand.New(rand.NewPCG(uint64(seed), uint64(vi)+100))
					src := genSource(r, o)
					del := deliverFaults(r, src, o)
					sizes := splitSizes(r, len(del), 6)
					jobs := make([]string, len(sizes))
					for i := range jobs {
						switch x := r.IntN(6); {
						case x == 0 && purge:
							jobs[i] = JobPurge
						case x == 1:
							jobs[i] = JobCompact
						}
					}
					run := func(restart bool) *wrun {
						w := newWrun(t, topts)
						off := 0
						for i, n := range sizes {
							if restart && i > 0 {
								w.restart()
							}
							if jobs[i] != "" && i > 0 {
								w.maintain(jobs[i])
							}
							w.apply(del[off:off+n], false)
							off += n
						}
						return w
					}
					steady := run(false)
					sm, sh := steady.tables()
					old := run(true)
					om, oh := old.tables()
					tag := fmt.Sprintf("%v purge %v seed %d variant %d (woven %d, rebuilds %d) jobs %q", topts.Tables(), purge, seed, vi, steady.woven, steady.rebuil, jobs)
					if sm != om || sh != oh {
						t.Errorf("%s: steady differs from restarted\nmirror steady:\n%s\nmirror old:\n%s\nhistory steady:\n%s\nhistory old:\n%s\ndelivered: %v\nsizes %v",
							tag, sm, om, sh, oh, lsns(del), sizes)
						continue
					}
					if purge {
						continue
					}
					clean := newWrun(t, topts)
					clean.apply(src, false)
					wm, wh := clean.tables()
					if sm != wm || sh != wh {
						t.Errorf("%s: differs from clean\nmirror steady:\n%s\nmirror clean:\n%s\nhistory steady:\n%s\nhistory clean:\n%s\ndelivered: %v\nsizes %v",
							tag, sm, wm, sh, wh, lsns(del), sizes)
					}
				}
			}
		}
	}
}

type wopts struct {
	keys, changes   int
	riFull          bool
	toast           bool
	truncates       bool
	keyChanges      bool
	samePos         bool // a key change's create at its delete's position, as Debezium gives them
	late, dups, oos int
	tracked         bool // history tracks order_id and status only (--history-columns)
}

// krow is a generated source row of key order_id.
type krow struct {
	live         bool
	status, note string
}

// img is row x of key k as a Debezium JSON image.
func img(k int, x *krow) string {
	return fmt.Sprintf(`{"order_id":%d,"status":%q,"note":%q}`, k, x.status, x.note)
}

// deleteOrUpdate changes live row x of key k at lsn: a delete (1 in 4;
// before image the key, or the row with riFull) or an update of status
// and/or note (note a TOAST placeholder now and then with toast).
func deleteOrUpdate(r *rand.Rand, k int, x *krow, lsn int, riFull, toastOn bool) wev {
	if r.IntN(4) == 0 {
		before := fmt.Sprintf(`{"order_id":%d}`, k)
		if riFull {
			before = img(k, x)
		}
		x.live = false
		return wev{m: sample.PostgresChange("d", before, "null", lsn), lsn: lsn}
	}
	before := "null"
	if riFull {
		before = img(k, x)
	}
	if r.IntN(3) == 0 {
		x.status = fmt.Sprintf("s%d", lsn)
	}
	noteJSON := ""
	switch {
	case r.IntN(3) == 0:
		x.note = fmt.Sprintf("n%d", lsn)
	case toastOn && r.IntN(2) == 0:
		noteJSON = toast
	}
	after := img(k, x)
	if noteJSON != "" {
		after = fmt.Sprintf(`{"order_id":%d,"status":%q,"note":%s}`, k, x.status, noteJSON)
	}
	return wev{m: sample.PostgresChange("u", before, after, lsn), lsn: lsn}
}

// keyChange moves live row k of rows (keys 1..len(rows)) to the first
// other key not live, as Debezium streams a primary-key change: a delete
// of k at lsn (before image the key, or the row with riFull) with header
// __debezium.newkey, then a create of the new key at lsn+1 (at lsn with
// samePos, as Debezium gives them) with header
// __debezium.oldkey (its note now and then a TOAST placeholder with
// toastOn). It returns nil when every other key is live.
func keyChange(r *rand.Rand, rows map[int]*krow, k, lsn int, riFull, toastOn, samePos bool) []wev {
	nk := 0
	for c := 1; c <= len(rows); c++ {
		if !rows[c].live && c != k {
			nk = c
			break
		}
	}
	if nk == 0 {
		return nil
	}
	x, y := rows[k], rows[nk]
	before := fmt.Sprintf(`{"order_id":%d}`, k)
	if riFull {
		before = img(k, x)
	}
	del := wev{m: sample.PostgresChange("d", before, "null", lsn), lsn: lsn,
		hdr: []schemas.Header{{Key: "__debezium.newkey", Value: []byte(fmt.Sprintf(`{"order_id":%d}`, nk))}}}
	y.live, y.status, y.note = true, x.status, x.note
	x.live = false
	after := img(nk, y)
	if toastOn && r.IntN(2) == 0 {
		after = fmt.Sprintf(`{"order_id":%d,"status":%q,"note":%s}`, nk, y.status, toast)
	}
	at := lsn + 1
	if samePos {
		at = lsn // as Debezium gives them: both at the update's position
	}
	create := wev{m: sample.PostgresChange("c", "null", after, at), lsn: at,
		hdr: []schemas.Header{{Key: "__debezium.oldkey", Value: []byte(fmt.Sprintf(`{"order_id":%d}`, k))}}}
	return []wev{del, create}
}

// genSource makes a valid source history (ascending LSNs).
func genSource(r *rand.Rand, o wopts) []wev {
	rows := map[int]*krow{}
	for k := 1; k <= o.keys; k++ {
		rows[k] = &krow{}
	}
	var out []wev
	lsn := 100
	for range o.changes {
		lsn += 10
		if o.truncates && r.IntN(25) == 0 {
			out = append(out, wev{m: sample.PostgresChange("t", "null", "null", lsn), lsn: lsn})
			for _, x := range rows {
				x.live = false
			}
			continue
		}
		k := 1 + r.IntN(o.keys)
		x := rows[k]
		if !x.live {
			x.live, x.status, x.note = true, fmt.Sprintf("s%d", lsn), fmt.Sprintf("n%d", lsn)
			out = append(out, wev{m: sample.PostgresChange("c", "null", img(k, x), lsn), lsn: lsn})
			continue
		}
		if o.keyChanges && r.IntN(8) == 0 {
			if evs := keyChange(r, rows, k, lsn, o.riFull, o.toast, o.samePos); evs != nil {
				out = append(out, evs...)
				lsn++
				continue
			}
		}
		out = append(out, deleteOrUpdate(r, k, x, lsn, o.riFull, o.toast))
	}
	return out
}

// deliverFaults moves some records later, duplicates some and swaps
// neighbours.
func deliverFaults(r *rand.Rand, src []wev, o wopts) []wev {
	d := append([]wev(nil), src...)
	for range o.late {
		if len(d) < 2 {
			break
		}
		i := r.IntN(len(d) - 1)
		e := d[i]
		d = append(d[:i], d[i+1:]...)
		j := i + 1 + r.IntN(len(d)-i)
		d = append(d[:j], append([]wev{e}, d[j:]...)...)
	}
	for range o.oos {
		if len(d) < 2 {
			break
		}
		i := r.IntN(len(d) - 1)
		d[i], d[i+1] = d[i+1], d[i]
	}
	for range o.dups {
		i := r.IntN(len(d))
		j := i + r.IntN(len(d)-i+1)
		d = append(d[:j], append([]wev{d[i]}, d[j:]...)...)
	}
	return d
}

func splitSizes(r *rand.Rand, total, maxN int) []int {
	var out []int
	for total > 0 {
		n := 1 + r.IntN(min(total, maxN))
		out = append(out, n)
		total -= n
	}
	return out
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func lsns(d []wev) []int {
	out := make([]int, len(d))
	for i, e := range d {
		out[i] = e.lsn
	}
	return out
}

func weaveTableOpts() TableSpec {
	switch os.Getenv("WEAVE_TABLES") {
	case "mirror":
		return TableSpec{WithoutHistory: true, WithoutBronze: true}
	case "bronze+mirror":
		return TableSpec{WithoutHistory: true}
	case "mirror+history":
		return TableSpec{WithoutBronze: true}
	}
	return TableSpec{}
}
