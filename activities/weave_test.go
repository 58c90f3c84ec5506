package activities

// A breaker's tests of the late path woven in the batch (internal/lake
// weave.go): hand-made streams and randomized ones through the apply and
// rebuild code, a steady worker against one restarted before every batch
// (the RebuildKeys path) and one clean pass.

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/internal/source"
	"github.com/lakemirror/lakemirror/schemas"
)

// wev is one Kafka record of a hand-made stream (headers for key changes).
type wev struct {
	m   sample.Message
	hdr []schemas.Header
	lsn int
	// part is the Kafka partition it is delivered in (0 unless a test
	// delivers a MySQL change late: a key's MySQL changes in one
	// partition come in binlog order, merge.FindBinlogRestart)
	part int32
}

// wrun applies batches through the apply and rebuild code; before batch i
// hook(i, &a) may replace the worker or run maintenance.
type wrun struct {
	t      *testing.T
	cat    catalog.Catalog
	spec   TableSpec
	a      *Activities
	offset int64
	seq    int64
	woven  int
	rebuil int
	// decision: an operator's schema decision for the next batch applied
	// (lake.DecisionEvolve, DecisionSkip); apply clears it
	decision string
}

func newWrun(t *testing.T, opts TableSpec) *wrun {
	spec := TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"}, MaxQuarantine: 1000,
		WithoutBronze: opts.WithoutBronze, WithoutHistory: opts.WithoutHistory, HistoryColumns: opts.HistoryColumns}.Defaults()
	w := &wrun{t: t, cat: mustCatalog(t), spec: spec}
	w.restart()
	return w
}

func (w *wrun) restart() {
	a := New(w.cat, nil)
	a.StateDir = w.t.TempDir()
	w.a = a
}

// apply applies one batch; it returns the error of the attempt (nil) and
// fails the test on errors unless allowErr.
func (w *wrun) apply(evs []wev, allowErr bool) (ApplyResult, error) {
	t := w.t
	t.Helper()
	ctx := context.Background()
	st, name, err := w.a.state(w.spec)
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]schemas.Record, len(evs))
	parts := map[int32]bool{0: true}
	for j, e := range evs {
		recs[j] = schemas.Record{Topic: w.spec.Topic, Partition: e.part, Offset: w.offset + int64(j), Key: e.m.Key, Value: e.m.Value, Headers: e.hdr}
		parts[e.part] = true
	}
	w.seq++
	b := lake.Batch{ID: fmt.Sprintf("b%d", w.seq), Seq: w.seq, Topic: w.spec.Topic, EndOffsets: lake.Offsets{}}
	for _, p := range slices.Sorted(maps.Keys(parts)) { // one offset span, each partition's records in it
		b.Ranges = append(b.Ranges, lake.Range{Partition: p, From: w.offset, To: w.offset + int64(len(evs))})
		b.EndOffsets[p] = w.offset + int64(len(evs))
	}
	stage := ""
	st.mu.Lock()
	res, _, err := w.a.applyRecords(ctx, st, name, w.spec, b, recs, nil, w.decision, &stage)
	w.decision = ""
	w.woven += res.WovenKeys()
	if err == nil && res.History.Pending+res.Mirror.Pending > 0 {
		w.rebuil++
		_, err = w.a.rebuildPending(ctx, st, name)
	}
	st.mu.Unlock()
	if err != nil {
		if allowErr {
			w.seq-- // the same batch again
			return res, err
		}
		t.Fatalf("batch %d (%s): %v", w.seq, stage, err)
	}
	w.offset += int64(len(evs))
	return res, nil
}

func (w *wrun) tables() (string, string) {
	name := lake.TableName{Namespace: "shop", Name: "orders"}
	m := tableText(w.t, w.cat, name, false, "order_id", "status", "note", lake.ColSeq, lake.ColDeleted)
	h := ""
	if !w.spec.WithoutHistory {
		h = tableText(w.t, w.cat, name, true, "order_id", "status", "note", lake.ColSeq, lake.ColValidToSeq, lake.ColIsCurrent)
	}
	return m, h
}

const toast = `"__debezium_unavailable_value"`

type wopts struct {
	keys, changes   int
	riFull          bool
	toast           bool
	truncates       bool
	keyChanges      bool
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
// __debezium.newkey, then a create of the new key at lsn+1 with header
// __debezium.oldkey (its note now and then a TOAST placeholder with
// toastOn). It returns nil when every other key is live.
func keyChange(r *rand.Rand, rows map[int]*krow, k, lsn int, riFull, toastOn bool) []wev {
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
	create := wev{m: sample.PostgresChange("c", "null", after, lsn+1), lsn: lsn + 1,
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
			if evs := keyChange(r, rows, k, lsn, o.riFull, o.toast); evs != nil {
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
	}
	// variants 3 and 8 (a key-change create's TOAST placeholder filled
	// from the old key's stored row, not its last change) fail on the
	// current code, with the old RebuildKeys path too (known gaps, see
	// docs/design.md "Known gaps"); variant 5 fails only without bronze
	// (seed 21: a truncate applied before the mirror existed is recorded
	// only by bronze). WEAVE_VARIANT=n runs variant n alone, WEAVE_ALL=1
	// every one
	vfilter := envInt("WEAVE_VARIANT", -1)
	known := map[int]bool{3: true, 8: true}
	for seed := first; seed < first+n; seed++ {
		for vi, o := range variants {
			if vfilter >= 0 && vi != vfilter || vfilter < 0 && known[vi] && os.Getenv("WEAVE_ALL") == "" {
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
			rr := rand.New(rand.NewPCG(uint64(seed), 77))
			var old *wrun
			if os.Getenv("WEAVE_RANDOM_RESTARTS") != "" {
				old = run(func(i int) bool { return i > 0 && rr.IntN(3) == 0 })
			} else {
				old = run(func(i int) bool { return i > 0 })
			}
			om, oh := old.tables()
			tag := fmt.Sprintf("seed %d variant %d (woven %d, rebuilds %d)", seed, vi, steady.woven, steady.rebuil)
			if sm != wm || sh != wh {
				t.Errorf("%s: steady differs from clean\nmirror steady:\n%s\nmirror clean:\n%s\nhistory steady:\n%s\nhistory clean:\n%s\nold mirror:\n%s\nold history:\n%s\ndelivered: %v\nsizes %v",
					tag, sm, wm, sh, wh, om, oh, lsns(del), sizes)
				continue
			}
			if !topts.WithoutBronze && (om != wm || oh != wh) {
				t.Errorf("%s: restarted (RebuildKeys) differs from clean\nmirror old:\n%s\nmirror clean:\n%s\nhistory old:\n%s\nhistory clean:\n%s\ndelivered: %v\nsizes %v",
					tag, om, wm, oh, wh, lsns(del), sizes)
			}
		}
	}
}

func lsns(d []wev) []int {
	out := make([]int, len(d))
	for i, e := range d {
		out[i] = e.lsn
	}
	return out
}

func pgw(op, before, after string, lsn int) wev {
	return wev{m: sample.PostgresChange(op, before, after, lsn), lsn: lsn}
}

// A column added between a key's past changes and its late change: the
// weave folds past changes recorded in the old layout.
func TestWeaveColumnAdded(t *testing.T) {
	for _, opts := range []TableSpec{{}, {WithoutHistory: true}} {
		w := newWrun(t, opts)
		w.apply([]wev{pgw("c", "null", `{"order_id":1,"status":"a"}`, 100), pgw("c", "null", `{"order_id":2,"status":"a"}`, 110)}, false)
		w.apply([]wev{pgw("u", "null", `{"order_id":1,"status":"c"}`, 300)}, false)
		w.apply([]wev{pgw("u", "null", `{"order_id":2,"status":"b","note":"x"}`, 310)}, false)
		w.apply([]wev{pgw("u", "null", `{"order_id":1,"status":"b","note":"y"}`, 200)}, false)
		gm, gh := w.tables()
		clean := newWrun(t, opts)
		clean.apply([]wev{pgw("c", "null", `{"order_id":1,"status":"a"}`, 100), pgw("c", "null", `{"order_id":2,"status":"a"}`, 110),
			pgw("u", "null", `{"order_id":1,"status":"b","note":"y"}`, 200), pgw("u", "null", `{"order_id":1,"status":"c"}`, 300),
			pgw("u", "null", `{"order_id":2,"status":"b","note":"x"}`, 310)}, false)
		wm, wh := clean.tables()
		if gm != wm || gh != wh {
			t.Errorf("%+v woven %d rebuilds %d\nmirror got:\n%s\nwant:\n%s\nhistory got:\n%s\nwant:\n%s", opts.Tables(), w.woven, w.rebuil, gm, wm, gh, wh)
		}
	}
}

// A column added between a key's past changes and its late change, where
// the refold takes a TOAST placeholder's value from the late change: the
// refolded row is in the past change's (older, narrower) layout.
func TestWeaveColumnAddedToast(t *testing.T) {
	if !inChild(t) {
		return
	}
	for _, opts := range []TableSpec{{}, {WithoutHistory: true}} {
		w := newWrun(t, opts)
		w.apply([]wev{pgw("c", "null", `{"order_id":1,"status":"a","note":"n1"}`, 100), pgw("c", "null", `{"order_id":2,"status":"a","note":"n1"}`, 110)}, false)
		w.apply([]wev{pgw("u", "null", `{"order_id":1,"status":"c","note":`+toast+`}`, 300)}, false)
		w.apply([]wev{pgw("u", "null", `{"order_id":2,"status":"b","note":"x","extra":"e"}`, 310)}, false)
		if _, err := w.apply([]wev{pgw("u", "null", `{"order_id":1,"status":"b","note":"n2","extra":"f"}`, 200)}, true); err != nil {
			t.Errorf("%v: the late batch failed: %v", opts.Tables(), err)
			continue
		}
		gm, gh := w.tables()
		clean := newWrun(t, opts)
		clean.apply([]wev{pgw("c", "null", `{"order_id":1,"status":"a","note":"n1"}`, 100), pgw("c", "null", `{"order_id":2,"status":"a","note":"n1"}`, 110),
			pgw("u", "null", `{"order_id":1,"status":"b","note":"n2","extra":"f"}`, 200), pgw("u", "null", `{"order_id":1,"status":"c","note":`+toast+`}`, 300),
			pgw("u", "null", `{"order_id":2,"status":"b","note":"x","extra":"e"}`, 310)}, false)
		wm, wh := clean.tables()
		if gm != wm || gh != wh {
			t.Errorf("%+v woven %d rebuilds %d\nmirror got:\n%s\nwant:\n%s\nhistory got:\n%s\nwant:\n%s", opts.Tables(), w.woven, w.rebuil, gm, wm, gh, wh)
		}
	}
}

// A batch whose mirror commit succeeded fails before the history commit
// (AfterCommit), and is applied again.
func TestWeaveRetryAfterMirror(t *testing.T) {
	for _, fail := range []string{"bronze", "mirror", "history"} {
		for _, opts := range []TableSpec{{}, {WithoutHistory: true}, {WithoutBronze: true}} {
			if opts.WithoutHistory && fail == "history" || opts.WithoutBronze && fail == "bronze" {
				continue
			}
			w := newWrun(t, opts)
			w.apply([]wev{pgw("c", "null", `{"order_id":1,"status":"a","note":"n1"}`, 100), pgw("c", "null", `{"order_id":2,"status":"a","note":"n1"}`, 110)}, false)
			w.apply([]wev{pgw("u", "null", `{"order_id":1,"status":"c","note":`+toast+`}`, 300), pgw("d", `{"order_id":2}`, "null", 310)}, false)
			failed := false
			w.a.AfterCommit = func(_ context.Context, b lake.Batch, table string) error {
				if table == fail && !failed {
					failed = true
					return fmt.Errorf("injected after %s", table)
				}
				return nil
			}
			late := []wev{pgw("u", "null", `{"order_id":1,"status":"b","note":"n2"}`, 200), pgw("u", "null", `{"order_id":2,"status":"b","note":"n3"}`, 210),
				pgw("c", "null", `{"order_id":3,"status":"a","note":"n1"}`, 320)}
			if _, err := w.apply(late, true); err == nil {
				t.Fatalf("no injected failure")
			}
			w.apply(late, false)
			w.apply([]wev{pgw("u", "null", `{"order_id":3,"status":"z","note":"q"}`, 400), pgw("u", "null", `{"order_id":1,"status":"b","note":"n4"}`, 250)}, false)
			gm, gh := w.tables()
			clean := newWrun(t, opts)
			clean.apply([]wev{pgw("c", "null", `{"order_id":1,"status":"a","note":"n1"}`, 100), pgw("c", "null", `{"order_id":2,"status":"a","note":"n1"}`, 110),
				late[0], late[1], pgw("u", "null", `{"order_id":1,"status":"b","note":"n4"}`, 250),
				pgw("u", "null", `{"order_id":1,"status":"c","note":`+toast+`}`, 300), pgw("d", `{"order_id":2}`, "null", 310), late[2],
				pgw("u", "null", `{"order_id":3,"status":"z","note":"q"}`, 400)}, false)
			wm, wh := clean.tables()
			if gm != wm || gh != wh {
				t.Errorf("fail after %s %v woven %d rebuilds %d\nmirror got:\n%s\nwant:\n%s\nhistory got:\n%s\nwant:\n%s", fail, opts.Tables(), w.woven, w.rebuil, gm, wm, gh, wh)
			}
		}
	}
}

func (w *wrun) maintain(job string) {
	w.t.Helper()
	if _, err := w.a.Maintain(context.Background(), MaintenanceRequest{Spec: w.spec, Job: job, Retention: 24 * time.Hour, RetentionFloor: time.Hour}); err != nil {
		w.t.Fatalf("%s: %v", job, err)
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

// Mirror-only: a purged key comes back as a delete without a before
// image, then a change older than everything arrives: the steady worker
// (whose purge dropped the key's chain) and a restarted one (bronze) must
// agree.
func TestWeavePurgedMirrorOnly(t *testing.T) {
	for _, opts := range []TableSpec{{WithoutHistory: true}, {}} {
		var got [2]string
		for ri, restart := range []bool{false, true} {
			w := newWrun(t, opts)
			w.apply([]wev{pgw("c", "null", `{"order_id":1,"status":"a","note":"n1"}`, 100), pgw("c", "null", `{"order_id":2,"status":"a","note":"n1"}`, 110),
				pgw("d", `{"order_id":1}`, "null", 200)}, false)
			w.maintain(JobPurge)
			w.apply([]wev{pgw("d", `{"order_id":1}`, "null", 300)}, false)
			if restart {
				w.restart()
			}
			w.apply([]wev{pgw("u", "null", `{"order_id":1,"status":"z","note":"nz"}`, 50)}, false)
			m, h := w.tables()
			got[ri] = m + "\n--\n" + h
		}
		if got[0] != got[1] {
			t.Errorf("%v: steady:\n%s\nrestarted:\n%s", opts.Tables(), got[0], got[1])
		}
	}
}

// A change refused because it would resurrect a purged key (quarantined,
// never in the log) is in bronze: a later late change of the re-created
// key is woven from the log (without it) by a steady worker and rebuilt
// from bronze (with it) by a restarted one.
func TestWeaveRefusedInBronze(t *testing.T) {
	var got [2]string
	for ri, restart := range []bool{false, true} {
		w := newWrun(t, TableSpec{})
		w.apply([]wev{pgw("c", "null", `{"order_id":1,"status":"a","note":"n1"}`, 100), pgw("c", "null", `{"order_id":2,"status":"a","note":"n1"}`, 110),
			pgw("d", `{"order_id":1}`, "null", 200)}, false)
		w.maintain(JobPurge)
		if res, _ := w.apply([]wev{pgw("u", "null", `{"order_id":1,"status":"b","note":"n1"}`, 150)}, false); res.Quarantined != 1 {
			t.Fatalf("the change below the purge was not refused: %+v", res)
		}
		w.apply([]wev{pgw("c", "null", `{"order_id":1,"status":"c","note":"n1"}`, 400)}, false)
		w.apply([]wev{pgw("u", "null", `{"order_id":1,"status":"d","note":"n1"}`, 500)}, false)
		if restart {
			w.restart()
		}
		w.apply([]wev{pgw("u", "null", `{"order_id":1,"status":"e","note":"n1"}`, 450)}, false)
		m, h := w.tables()
		got[ri] = m + "\n--\n" + h
	}
	if got[0] != got[1] {
		t.Errorf("steady:\n%s\nrestarted:\n%s", got[0], got[1])
	}
}

// No TOAST: a column added after a key's past changes, then one batch
// with a late change of the key and its delete without a before image
// (REPLICA IDENTITY DEFAULT): the refold keeps the last update's values,
// recorded in the older layout.
func TestWeaveColumnAddedDelete(t *testing.T) {
	if !inChild(t) {
		return
	}
	for _, opts := range []TableSpec{{}, {WithoutHistory: true}} {
		w := newWrun(t, opts)
		w.apply([]wev{pgw("c", "null", `{"order_id":1,"status":"a"}`, 100), pgw("c", "null", `{"order_id":2,"status":"a"}`, 110)}, false)
		w.apply([]wev{pgw("u", "null", `{"order_id":1,"status":"c"}`, 300)}, false)
		w.apply([]wev{pgw("u", "null", `{"order_id":2,"status":"b","note":"x"}`, 310)}, false)
		w.apply([]wev{pgw("u", "null", `{"order_id":1,"status":"b"}`, 200), pgw("d", `{"order_id":1}`, "null", 400)}, false)
		gm, _ := w.tables()
		want := "1 c <nil> 00000000000001900000000000000190 true\n2 b x 00000000000001360000000000000136 false"
		if gm != want {
			t.Errorf("%v: mirror\n%s\nwant\n%s", opts.Tables(), gm, want)
		}
	}
}

// inChild runs the calling test in a child test process (its panics, in
// the batch's goroutines, would end this one) and reports its failure;
// it returns true in the child, which then runs the test's body.
func inChild(t *testing.T) bool {
	t.Helper()
	if os.Getenv("WEAVE_CHILD") == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), "WEAVE_CHILD="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil {
		text := string(out)
		if len(text) > 3000 {
			text = text[:3000]
		}
		t.Errorf("%s in a child process: %v\n%s", t.Name(), err, text)
	}
	return false
}

// Mirror-only: every row purged, then a worker restart builds its state
// from an empty mirror and takes its log as complete although bronze
// holds the keys' past; a restart one batch later reads bronze.
func TestWeaveAllPurgedRestart(t *testing.T) {
	var got []string
	for _, when := range []int{2, 3} {
		w := newWrun(t, TableSpec{WithoutHistory: true})
		w.apply([]wev{pgw("c", "null", `{"order_id":1,"status":"a","note":"n1"}`, 100), pgw("d", `{"order_id":1}`, "null", 200)}, false)
		w.maintain(JobPurge)
		if when == 2 {
			w.restart()
		}
		w.apply([]wev{pgw("d", `{"order_id":1}`, "null", 300)}, false)
		if when == 3 {
			w.restart()
		}
		w.apply([]wev{pgw("u", "null", `{"order_id":1,"status":"z","note":"nz"}`, 50)}, false)
		m, _ := w.tables()
		got = append(got, m)
	}
	if got[0] != got[1] {
		t.Errorf("restart before batch 2 (state from an empty mirror):\n%s\nrestart before batch 3 (bronze read):\n%s", got[0], got[1])
	}
}

// With tracked history columns, a late change of an untracked column
// inside a version is that version's last change: the version's stored
// values must become the late change's, although its tracked-columns hash,
// its interval and its _seq stay the same (docs/design.md, "Known gaps",
// before this was fixed). Woven by a steady worker, rebuilt by a restarted
// one, and the same as the batches applied in order.
func TestWeaveUntrackedLateChange(t *testing.T) {
	opts := TableSpec{HistoryColumns: []string{"order_id", "status"}}
	inOrder := []wev{
		pgw("c", "null", `{"order_id":1,"status":"a","note":"n1"}`, 100), pgw("c", "null", `{"order_id":2,"status":"a","note":"n1"}`, 110),
		pgw("u", "null", `{"order_id":1,"status":"a","note":"n2"}`, 200), // untracked: no new version
		pgw("u", "null", `{"order_id":1,"status":"b","note":"n3"}`, 300),
		pgw("u", "null", `{"order_id":2,"status":"b","note":"x"}`, 310),
	}
	clean := newWrun(t, opts)
	clean.apply(inOrder, false)
	wm, wh := clean.tables()
	// key 1's first version opened at 100 and holds its last change's note
	wantHistory := "1 a n2 00000000000000640000000000000064 000000000000012c000000000000012c false\n" +
		"1 b n3 000000000000012c000000000000012c <nil> true\n" +
		"2 a n1 000000000000006e000000000000006e 00000000000001360000000000000136 false\n" +
		"2 b x 00000000000001360000000000000136 <nil> true"
	if got := wh; got != wantHistory {
		t.Fatalf("in order: history\n%s\nwant\n%s", got, wantHistory)
	}
	for _, restart := range []bool{false, true} {
		w := newWrun(t, opts)
		w.apply(inOrder[:2], false)
		w.apply(inOrder[3:4], false)
		w.apply(inOrder[4:5], false)
		if restart {
			w.restart()
		}
		w.apply(inOrder[2:3], false) // late
		gm, gh := w.tables()
		if gm != wm || gh != wh {
			t.Errorf("restart %v, woven %d, rebuilds %d\nmirror got:\n%s\nwant:\n%s\nhistory got:\n%s\nwant:\n%s", restart, w.woven, w.rebuil, gm, wm, gh, wh)
		}
	}
}

// A table truncate in a batch with no row change comes before the mirror
// exists; a change below it arrives later. Bronze records the truncate
// and the mirror created later starts with it, so the late change is
// truncated as in source order (key 1's row deleted at 120, its version
// closed there), by a steady worker and a restarted one.
func TestWeaveTruncateBeforeMirror(t *testing.T) {
	trunc := wev{m: sample.PostgresChange("t", "null", "null", 120), lsn: 120}
	c1 := pgw("c", "null", `{"order_id":1,"status":"a","note":"n1"}`, 110)
	c2 := pgw("c", "null", `{"order_id":2,"status":"a","note":"n1"}`, 130)
	for _, opts := range []TableSpec{{}, {WithoutHistory: true}} {
		clean := newWrun(t, opts)
		clean.apply([]wev{c1, trunc, c2}, false)
		wm, wh := clean.tables()
		if !opts.WithoutHistory && !strings.Contains(wh, "1 a n1 000000000000006e000000000000006e 00000000000000780000000000000078 false") {
			t.Fatalf("in order: key 1's version does not close at the truncate:\n%s", wh)
		}
		for _, restart := range []bool{false, true} {
			w := newWrun(t, opts)
			w.apply([]wev{trunc}, false)
			w.apply([]wev{c2}, false)
			if restart {
				w.restart()
			}
			w.apply([]wev{c1}, false) // below the truncate
			gm, gh := w.tables()
			if gm != wm || gh != wh {
				t.Errorf("%v restart %v\nmirror got:\n%s\nwant:\n%s\nhistory got:\n%s\nwant:\n%s", opts.Tables(), restart, gm, wm, gh, wh)
			}
		}
	}
}

// ghosts soft-deletes, as a direct re-snapshot at position p does, every
// live mirror key but the order ids seen (deleteGhosts: Debezium deletes
// with key-only before images, in bronze under "<topic>#L1@<p>#ghosts"),
// and returns how many it deleted.
func (w *wrun) ghosts(p uint64, seen ...int) int {
	w.t.Helper()
	n, err := w.ghostsAs("L1", p, seen...)
	if err != nil {
		w.t.Fatal(err)
	}
	return n
}

// ghostsAs is ghosts for load id, returning deleteGhosts' error.
func (w *wrun) ghostsAs(id string, p uint64, seen ...int) (int, error) {
	w.t.Helper()
	ctx := context.Background()
	st, name, err := w.a.state(w.spec)
	if err != nil {
		w.t.Fatal(err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	mirror, _ := st.writers(w.a, name)
	if err := mirror.EnsureState(ctx); err != nil {
		w.t.Fatal(err)
	}
	s := map[cdc.Key]bool{}
	for _, id := range seen {
		k, err := cdc.EncodeKey(nil, cdc.Int(int64(id)))
		if err != nil {
			w.t.Fatal(err)
		}
		s[cdc.Key(k)] = true
	}
	info := source.TableInfo{Database: "db", Schema: "public", Table: "orders", Key: []string{"order_id"}, Columns: []source.ColumnInfo{
		{Column: cdc.Column{Name: "order_id", Type: cdc.Type{Kind: cdc.KindInt, Bits: 64}, Source: "int64"}, PGType: "bigint", SQLType: "pg_catalog.int8", Read: "int8", Connect: "int64"},
		{Column: cdc.Column{Name: "status", Type: cdc.Type{Kind: cdc.KindString}, Optional: true, Source: "string"}, PGType: "text", SQLType: "pg_catalog.text", Read: "text", Connect: "string"},
		{Column: cdc.Column{Name: "note", Type: cdc.Type{Kind: cdc.KindString}, Optional: true, Source: "string"}, PGType: "text", SQLType: "pg_catalog.text", Read: "text", Connect: "string"},
	}}
	renderer, err := source.NewRenderer(info, "pg")
	if err != nil {
		w.t.Fatal(err)
	}
	return w.a.deleteGhosts(ctx, st, name, w.spec, renderer, LoadRequest{Spec: w.spec, LoadID: id, Resnapshot: true, Position: lake.Offsets{0: w.offset}}, p, 0, s, nil)
}

// A re-snapshot at 1000 soft-deletes ghost key 2, then a late update of
// key 2 below it arrives, at a steady and at a restarted worker (found by
// a breaker's run, 2026-12-03: the restarted worker folds the key from
// bronze, which held no record of the ghost delete, and revived the row
// at 115). Both keep it deleted at 1000 with the late update's values, and
// the history has the update's version closed by the delete.
func TestWeaveGhostThenLateUpdate(t *testing.T) {
	var got []string
	for _, restart := range []bool{false, true} {
		w := newWrun(t, TableSpec{})
		w.apply([]wev{pgw("c", "null", `{"order_id":1,"status":"a","note":"n1"}`, 100), pgw("c", "null", `{"order_id":2,"status":"a","note":"n1"}`, 110),
			pgw("c", "null", `{"order_id":3,"status":"a","note":"n1"}`, 120)}, false)
		if n := w.ghosts(1000, 1, 3); n != 1 {
			t.Fatalf("ghosts deleted %d, want 1", n)
		}
		w.apply([]wev{pgw("u", "null", `{"order_id":3,"status":"b","note":"n2"}`, 1100)}, false)
		if restart {
			w.restart()
		}
		w.apply([]wev{pgw("u", "null", `{"order_id":2,"status":"z","note":"n9"}`, 115)}, false)
		m, h := w.tables()
		if !strings.Contains(m, "\n2 z n9 00000000000003e80000000000000000 true\n") {
			t.Errorf("restart %v: key 2 is not kept deleted at the re-snapshot's position:\n%s", restart, m)
		}
		for _, v := range []string{"\n2 a n1 000000000000006e000000000000006e 00000000000000730000000000000073 false\n",
			"\n2 z n9 00000000000000730000000000000073 00000000000003e80000000000000000 false\n"} {
			if !strings.Contains("\n"+h, v) {
				t.Errorf("restart %v: history lacks version %q:\n%s", restart, strings.TrimSpace(v), h)
			}
		}
		got = append(got, m+h)
	}
	if got[0] != got[1] {
		t.Errorf("a restarted worker's tables differ from a steady one's:\n%s\nwant:\n%s", got[1], got[0])
	}
}

// A table truncate delivered after a key was re-created past it closes
// the key's earlier version at the truncate (the key is woven); the same
// truncate delivered again weaves nothing (the mirror recorded it and the
// history committed the batch that applied it), and the tables equal
// those of source order.
func TestWeaveLateTruncateRedelivered(t *testing.T) {
	trunc := func() wev { return wev{m: sample.PostgresChange("t", "null", "null", 150), lsn: 150} }
	src := []wev{pgw("c", "null", `{"order_id":1,"status":"a","note":"n1"}`, 100), pgw("c", "null", `{"order_id":2,"status":"a","note":"n1"}`, 110),
		trunc(), pgw("c", "null", `{"order_id":1,"status":"b","note":"n2"}`, 200)}
	clean := newWrun(t, TableSpec{})
	clean.apply(src, false)
	wm, wh := clean.tables()

	w := newWrun(t, TableSpec{})
	w.apply(src[:2], false)
	w.apply(src[3:], false)
	w.apply([]wev{trunc()}, false)
	if w.woven != 1 {
		t.Errorf("the late truncate wove %d keys, want 1 (key 1)", w.woven)
	}
	w.apply([]wev{trunc()}, false)
	if w.woven != 1 || w.rebuil != 0 {
		t.Errorf("the redelivered truncate wove or rebuilt keys: woven %d rebuilds %d in all", w.woven, w.rebuil)
	}
	if m, h := w.tables(); m != wm || h != wh {
		t.Errorf("mirror:\n%s\nwant:\n%s\nhistory:\n%s\nwant:\n%s", m, wm, h, wh)
	}
	if !strings.Contains("\n"+wh+"\n", "\n1 a n1 00000000000000640000000000000064 00000000000000960000000000000096 false\n") {
		t.Errorf("key 1's first version does not close at the truncate:\n%s", wh)
	}
}

// Debezium's blocking snapshot reads sit at (0, LSN), below every streamed
// change, also below a table truncate streamed before the snapshot. A
// read taken after the truncate (its LSN above the truncate's) is not
// truncated: key 3, whose streamed insert at 160 was lost, is read at
// (0, 200) after the truncate at 150 and stays live, with its version
// open, whether the truncate was applied in an earlier batch, comes in
// the read's batch or arrives late, after it, at a steady and a restarted
// worker. A read taken before the truncate (key 5, read at (0, 140)) is
// truncated (found by a breaker's run, 2026-12-03: every read was
// soft-deleted at the truncate).
func TestBlockingReadAfterTruncate(t *testing.T) {
	trunc := func() wev { return wev{m: sample.PostgresChange("t", "null", "null", 150), lsn: 150} }
	c1 := pgw("c", "null", `{"order_id":1,"status":"a","note":"n1"}`, 100)
	c2 := pgw("c", "null", `{"order_id":2,"status":"a","note":"n1"}`, 110)
	read3 := pgw("r", "null", `{"order_id":3,"status":"s","note":"n3"}`, 200)
	read5 := pgw("r", "null", `{"order_id":5,"status":"s","note":"n5"}`, 140)
	wantM := "1 a n1 00000000000000960000000000000096 true\n" +
		"2 a n1 00000000000000960000000000000096 true\n" +
		"3 s n3 000000000000000000000000000000c8 false\n" +
		"5 s n5 00000000000000960000000000000096 true\n"
	wantH := "1 a n1 00000000000000640000000000000064 00000000000000960000000000000096 false\n" +
		"2 a n1 000000000000006e000000000000006e 00000000000000960000000000000096 false\n" +
		"3 s n3 000000000000000000000000000000c8 <nil> true\n" +
		"5 s n5 0000000000000000000000000000008c 00000000000000960000000000000096 false\n"
	orders := map[string][][]wev{
		"truncate first":     {{c1, c2, trunc()}, {read3, read5}},
		"same batch":         {{c1, c2}, {trunc(), read3, read5}},
		"truncate late":      {{c1, c2}, {read3, read5}, {trunc()}},
		"truncate redeliver": {{c1, c2, trunc()}, {read3, read5}, {trunc()}},
	}
	for name, batches := range orders {
		for _, opts := range []TableSpec{{}, {WithoutHistory: true}, {WithoutBronze: true}} {
			for _, restart := range []bool{false, true} {
				w := newWrun(t, opts)
				for i, b := range batches {
					if restart && i == len(batches)-1 {
						w.restart()
					}
					w.apply(b, false)
				}
				m, h := w.tables()
				m, h = m+"\n", h+"\n"
				if m != wantM {
					t.Errorf("%s %v restart %v: mirror\n%s\nwant:\n%s", name, opts.Tables(), restart, m, wantM)
				}
				if !opts.WithoutHistory && h != wantH {
					t.Errorf("%s %v restart %v: history\n%s\nwant:\n%s", name, opts.Tables(), restart, h, wantH)
				}
			}
		}
	}
}

// pgs is the `_seq` text of PostgreSQL position (first, lsn).
func pgs(first, lsn int) string { return fmt.Sprintf("%016x%016x", first, lsn) }

// rereadSrc is a source whose Debezium blocking snapshot at 500 re-reads
// every key: keys 1 and 2 created at 100 and 110 (key 1 updated at 120),
// keys 3 and 4 read by the initial snapshot at 300 and updated at 290 (in
// flight at that snapshot) and 400.
type rereadSrc struct{ c1, c2, u1, r3, r4, u3, u4, re1, re2, re3, re4 wev }

func newRereadSrc() rereadSrc {
	return rereadSrc{
		c1:  pgw("c", "null", `{"order_id":1,"status":"a","note":"n1"}`, 100),
		c2:  pgw("c", "null", `{"order_id":2,"status":"a","note":"n1"}`, 110),
		u1:  pgw("u", "null", `{"order_id":1,"status":"b","note":"n1"}`, 120),
		r3:  pgw("r", "null", `{"order_id":3,"status":"a","note":"n3"}`, 300),
		r4:  pgw("r", "null", `{"order_id":4,"status":"a","note":"n4"}`, 300),
		u3:  pgw("u", "null", `{"order_id":3,"status":"b","note":"n3"}`, 290),
		u4:  pgw("u", "null", `{"order_id":4,"status":"b","note":"n4"}`, 400),
		re1: pgw("r", "null", `{"order_id":1,"status":"b","note":"n1"}`, 500),
		re2: pgw("r", "null", `{"order_id":2,"status":"a","note":"n1"}`, 500),
		re3: pgw("r", "null", `{"order_id":3,"status":"b","note":"n3"}`, 500),
		re4: pgw("r", "null", `{"order_id":4,"status":"b","note":"n4"}`, 500),
	}
}

// A Debezium blocking snapshot at 500 re-reads keys that have streamed
// changes (keys 1 and 2) and a key first read by the initial snapshot at
// 300 and updated since (key 4): its reads sit at (0, 500), below those
// changes, and open no version (merge/reread.go); the tables equal those
// without the re-reads, whether the reads come in their own batch, with
// the changes, or before a worker restart. Key 3 was read by the initial
// snapshot at 300 while an update written at 290 was still in flight: its
// read keeps the version before the update. Found by a breaker's run
// (2026-12-03): every re-read opened a version ahead of the key's real
// ones.
func TestBlockingRereadOpensNoVersion(t *testing.T) {
	s := newRereadSrc()
	wantM := fmt.Sprintf("1 b n1 %s false\n2 a n1 %s false\n3 b n3 %s false\n4 b n4 %s false\n",
		pgs(120, 120), pgs(110, 110), pgs(290, 290), pgs(400, 400))
	wantH := fmt.Sprintf("1 a n1 %s %s false\n1 b n1 %s <nil> true\n2 a n1 %s <nil> true\n"+
		"3 a n3 %s %s false\n3 b n3 %s <nil> true\n4 a n4 %s %s false\n4 b n4 %s <nil> true\n",
		pgs(100, 100), pgs(120, 120), pgs(120, 120), pgs(110, 110),
		pgs(0, 300), pgs(290, 290), pgs(290, 290), pgs(0, 300), pgs(400, 400), pgs(400, 400))
	orders := map[string][][]wev{
		"source order":       {{s.c1, s.c2, s.u1}, {s.r3, s.r4}, {s.u3, s.u4}, {s.re1, s.re2, s.re3, s.re4}},
		"one batch":          {{s.c1, s.c2, s.u1, s.r3, s.r4, s.u3, s.u4, s.re1, s.re2, s.re3, s.re4}},
		"re-reads first":     {{s.re1, s.re2, s.re3, s.re4}, {s.c1, s.c2, s.u1}, {s.r3, s.r4}, {s.u3, s.u4}},
		"update before read": {{s.c1, s.c2, s.u1}, {s.u3, s.u4}, {s.r3, s.r4}, {s.re1, s.re2, s.re3, s.re4}},
	}
	for name, batches := range orders {
		for _, opts := range []TableSpec{{}, {WithoutBronze: true}} {
			for _, restart := range []bool{false, true} {
				if restart && opts.WithoutBronze && name == "re-reads first" {
					continue // late keys after a restart without bronze: docs/design.md, "Known gaps"
				}
				w := newWrun(t, opts)
				for i, b := range batches {
					if restart && i == len(batches)-1 && i > 0 {
						w.restart()
					}
					w.apply(b, false)
				}
				m, h := w.tables()
				if m+"\n" != wantM || h+"\n" != wantH {
					t.Errorf("%s %v restart %v:\nmirror\n%s\nwant:\n%s\nhistory\n%s\nwant:\n%s", name, opts.Tables(), restart, m, wantM, h, wantH)
				}
			}
		}
	}
}
