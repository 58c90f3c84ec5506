package activities

// A breaker's tests of the history commit retried after the mirror's
// (lakemirror.batch-late-keys, internal/lake/mirror_stage.go): each case
// crashes a batch after its mirror commit, retries it (on the same worker
// or a new one) and compares the tables and counters with a clean run of
// the same changes.
//
// Found against main at a047dd0 (0237ce8 + 79446e8), fixed by 0f45768
// (the mirror records each late key's `_seq` before the batch, and the
// keys to rebuild, refills without a change in the batch included) and
// the purge's wait for the history (lake.ErrBatchBetweenCommits):
//   - TestBreakMirrorCrashCreateBeforeOldKeyDelete (a regression of
//     0237ce8), TestBreakMirrorCrashCreateBeforeOldKey,
//     TestBreakMirrorCrashHeirListedNotRebuilt: a key-change create
//     listed to fill again without a change in the batch was never
//     rebuilt (wrong value in mirror and history, not counted).
//   - TestBreakMirrorCrashRedelivered, ...RedeliveredDelete,
//     ...RedeliveredToastAfter, ...MySQLRedelivered: a redelivered copy
//     listed its key late; without bronze on a new worker the key's
//     in-order changes were lost from the history.
//   - TestBreakMirrorCrashLateWithInOrder: the same for a late key's
//     in-order change.
//   - TestBreakMirrorCrashPurgeBeforeRetry: a purge between the mirror
//     commit and the retry lost the purged key's history (also before
//     0237ce8).
//
// Left, asserted as today's result: TestBreakMirrorCrashManyLateKeys
// (past 256 late keys, without bronze on a new worker, an in-order
// key's version is left out and counted unwoven: Known gaps).
//
// Held from the start: TestBreakMirrorCrashInOrder (crash twice,
// compaction, purge after the history), ...Truncate, ...Reread,
// ...HistoryColumns, ...KeyChangeHeir, ...Tombstone, ...LateCompact,
// ...LateCompactNoBronze (known gap, asserted as today's result),
// ...ColumnAdded.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/schemas"
)

// bmcRun is one batch's results: the batch's own and the rebuild's after
// it (zero when nothing was pending).
type bmcRun struct {
	res     ApplyResult
	rebuild RebuildResult
	rebuilt bool
}

// applyRb is wrun.apply returning the rebuild's result too.
func (w *wrun) applyRb(evs []wev, allowErr bool) (bmcRun, error) {
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
	for _, p := range slices.Sorted(maps.Keys(parts)) {
		b.Ranges = append(b.Ranges, lake.Range{Partition: p, From: w.offset, To: w.offset + int64(len(evs))})
		b.EndOffsets[p] = w.offset + int64(len(evs))
	}
	stage := ""
	var out bmcRun
	st.mu.Lock()
	res, _, err := w.a.applyRecords(ctx, st, name, w.spec, b, recs, nil, w.decision, &stage)
	w.decision = ""
	out.res = res
	w.woven += res.WovenKeys()
	if err == nil && res.History.Pending+res.Mirror.Pending > 0 {
		w.rebuil++
		out.rebuilt = true
		out.rebuild, err = w.a.rebuildPending(ctx, st, name)
	}
	st.mu.Unlock()
	if err != nil {
		if allowErr {
			w.seq--
			return out, err
		}
		t.Fatalf("batch %d (%s): %v", w.seq, stage, err)
	}
	w.offset += int64(len(evs))
	return out, nil
}

// crashAfter makes the next `times` attempts fail after the commit of
// table (bronze, mirror, history).
func (w *wrun) crashAfter(table string, times int) {
	n := 0
	w.a.AfterCommit = func(_ context.Context, b lake.Batch, tb string) error {
		if tb == table && n < times {
			n++
			return fmt.Errorf("simulated crash after the %s commit", tb)
		}
		return nil
	}
}

// bmcCase is one scenario: batches before, the crashed batch, batches after.
type bmcCase struct {
	opts    TableSpec
	before  [][]wev
	crashed []wev
	after   [][]wev
	crashes int  // 1 (0): a crash after the mirror commit; 2: then one after the retry's history commit
	restart bool // a new worker retries (else the same one)
	// between runs maintenance between the crash and the retry
	between []string
	// cleanRestart restarts the clean run's worker before the crashed
	// batch (a baseline for no-bronze cases whose result depends on the
	// worker's local state)
	cleanRestart bool
	// cols: the columns compared (nil: order_id, status, note)
	cols []string
}

func (c bmcCase) tables(w *wrun) (string, string) {
	if c.cols != nil {
		return w.colTables(c.cols...)
	}
	return w.tables()
}

type bmcOut struct {
	mirror, history string
	batch           bmcRun // the crashed batch's successful attempt (or the clean one)
}

func (c bmcCase) run(t *testing.T) (got, want bmcOut) {
	t.Helper()
	w := newWrun(t, c.opts)
	for _, b := range c.before {
		w.applyRb(b, false)
	}
	crashes := max(c.crashes, 1)
	for i := 0; i < crashes; i++ {
		// the first attempt dies after its mirror commit, the second
		// (retry) after its history commit
		w.crashAfter([]string{"mirror", "history"}[min(i, 1)], 1)
		if _, err := w.applyRb(c.crashed, true); err == nil {
			t.Fatalf("attempt %d: no simulated crash", i)
		}
		if c.restart {
			w.restart()
		}
	}
	w.a.AfterCommit = nil
	for _, job := range c.between {
		w.maintain(job)
	}
	var err error
	if got.batch, err = w.applyRb(c.crashed, false); err != nil {
		t.Fatal(err)
	}
	for _, b := range c.after {
		w.applyRb(b, false)
	}
	got.mirror, got.history = c.tables(w)

	clean := newWrun(t, c.opts)
	for _, b := range c.before {
		clean.applyRb(b, false)
	}
	if c.cleanRestart {
		clean.restart()
	}
	want.batch, _ = clean.applyRb(c.crashed, false)
	for _, job := range c.between { // the same maintenance after the batch
		clean.maintain(job)
	}
	for _, b := range c.after {
		clean.applyRb(b, false)
	}
	want.mirror, want.history = c.tables(clean)
	return got, want
}

func bmcCompareTables(t *testing.T, label string, got, want bmcOut) {
	t.Helper()
	if got.mirror != want.mirror || got.history != want.history {
		t.Errorf("%s:\nmirror got:\n%s\nwant:\n%s\nhistory got:\n%s\nwant:\n%s", label, got.mirror, want.mirror, got.history, want.history)
	}
}

func bmcCounts(r bmcRun) string {
	h := r.res.History
	return fmt.Sprintf("history rows %d opened %d dups %d late %d woven %d unwoven %d pending %d | rebuild keys %d unwoven %d",
		h.RowsWritten, h.Opened, h.Duplicates, h.Late, h.Woven, h.Unwoven, h.Pending, r.rebuild.Keys, r.rebuild.Unwoven)
}

var bmcFirst = []wev{pgw("c", "null", `{"order_id":1,"status":"a","note":"n1"}`, 100), pgw("c", "null", `{"order_id":2,"status":"a","note":"n1"}`, 110)}

// A crashed batch holding a redelivered copy of a change the tables
// already hold (a Kafka redelivery), and an in-order update of the same
// key.
func TestBreakMirrorCrashRedelivered(t *testing.T) {
	crashed := []wev{bmcFirst[0], pgw("u", "null", `{"order_id":1,"status":"b","note":"n2"}`, 200), pgw("u", "null", `{"order_id":2,"status":"b","note":"n2"}`, 210)}
	after := [][]wev{{pgw("u", "null", `{"order_id":1,"status":"c","note":"n3"}`, 300)}}
	for _, opts := range []TableSpec{{}, {WithoutBronze: true}} {
		for _, restart := range []bool{false, true} {
			label := fmt.Sprintf("%v restart %v", opts.Tables(), restart)
			c := bmcCase{opts: opts, before: [][]wev{bmcFirst}, crashed: crashed, after: after, restart: restart, cleanRestart: restart}
			got, want := c.run(t)
			bmcCompareTables(t, label, got, want)
			if g, w := bmcCounts(got.batch), bmcCounts(want.batch); g != w {
				t.Errorf("%s: counts\n got %s\nwant %s", label, g, w)
			}
		}
	}
}

// A crashed batch with a late change of key 1 (below its stored
// position) and an in-order change of it: without bronze on a new worker
// the clean run (restarted before the batch) extends key 1 by its
// in-order change and counts the late one unwoven (docs/design.md,
// Known gaps, "Without bronze, a late change").
func TestBreakMirrorCrashLateWithInOrder(t *testing.T) {
	before := [][]wev{bmcFirst, {pgw("u", "null", `{"order_id":1,"status":"b","note":"n2"}`, 200)}}
	crashed := []wev{pgw("u", "null", `{"order_id":1,"status":"late","note":"nl"}`, 150), pgw("u", "null", `{"order_id":1,"status":"c","note":"n3"}`, 300),
		pgw("u", "null", `{"order_id":2,"status":"b","note":"n2"}`, 310)}
	after := [][]wev{{pgw("u", "null", `{"order_id":2,"status":"c","note":"n3"}`, 400)}}
	for _, opts := range []TableSpec{{}, {WithoutBronze: true}} {
		for _, restart := range []bool{false, true} {
			label := fmt.Sprintf("%v restart %v", opts.Tables(), restart)
			c := bmcCase{opts: opts, before: before, crashed: crashed, after: after, restart: restart, cleanRestart: restart}
			got, want := c.run(t)
			bmcCompareTables(t, label, got, want)
			if g, w := bmcCounts(got.batch), bmcCounts(want.batch); g != w {
				t.Logf("%s: counts\n got %s\nwant %s", label, g, w)
			}
			gu := got.batch.res.History.Unwoven + got.batch.rebuild.Unwoven
			wu := want.batch.res.History.Unwoven + want.batch.rebuild.Unwoven
			if gu != wu {
				t.Errorf("%s: unwoven %d, clean %d", label, gu, wu)
			}
		}
	}
}

// Key changes (delete + create with a TOAST placeholder) in or before
// the crashed batch: these hold. The failing shape, a create applied
// before its old key's changes, is TestBreakMirrorCrashCreateBeforeOldKey.
func TestBreakMirrorCrashKeyChangeHeir(t *testing.T) {
	c4 := pgw("c", "null", `{"order_id":4,"status":"s150","note":"n150"}`, 150)
	u4 := pgw("u", "null", `{"order_id":4,"status":"s262","note":"n262"}`, 262)
	kd, kc := bmcKcDel(4, 1, 292), bmcKcCreate(4, 1, 292, "s262")
	c1 := pgw("c", "null", bmcKcRow(1, "a", "A"), 100)
	u1 := pgw("u", "null", bmcKcRow(1, "a", "B"), 150)
	d1 := bmcKcDel(1, 2, 200)
	c2 := bmcKcCreate(1, 2, 200, "a")
	for name, sc := range map[string]struct {
		before  [][]wev
		crashed []wev
	}{
		"late old-key update":      {[][]wev{{c4}, {kd, kc}}, []wev{u4}},
		"key change in order":      {[][]wev{{c1, u1}}, []wev{d1, c2}},
		"key change, late old key": {[][]wev{{c1}}, []wev{c2, u1, d1}},
	} {
		for _, opts := range []TableSpec{{}, {WithoutBronze: true}} {
			for _, restart := range []bool{false, true} {
				if restart && opts.WithoutBronze {
					continue // no past to read after a restart: Known gaps
				}
				label := fmt.Sprintf("%s %v restart %v", name, opts.Tables(), restart)
				c := bmcCase{opts: opts, before: sc.before, crashed: sc.crashed, restart: restart}
				got, want := c.run(t)
				bmcCompareTables(t, label, got, want)
			}
		}
	}
}

// kcDel, kcCreate and kcRow as in keychange_break_e2e_test.go (e2e tag).
func bmcKcDel(k, nk, lsn int) wev {
	e := pgw("d", fmt.Sprintf(`{"order_id":%d}`, k), "null", lsn)
	e.hdr = []schemas.Header{{Key: "__debezium.newkey", Value: []byte(fmt.Sprintf(`{"order_id":%d}`, nk))}}
	return e
}

func bmcKcCreate(k, nk, lsn int, st string) wev {
	e := pgw("c", "null", fmt.Sprintf(`{"order_id":%d,"status":%q,"note":%s}`, nk, st, toast), lsn)
	e.hdr = []schemas.Header{{Key: "__debezium.oldkey", Value: []byte(fmt.Sprintf(`{"order_id":%d}`, k))}}
	return e
}

func bmcKcRow(k int, st, note string) string {
	return fmt.Sprintf(`{"order_id":%d,"status":%q,"note":%q}`, k, st, note)
}

// bmcMatrix runs a scenario with and without bronze, retried on the same
// worker and on a new one (the clean run then restarted before the batch
// too), comparing tables and the unwoven count (batch + rebuild).
func bmcMatrix(t *testing.T, c bmcCase, skipNoBronzeRestart bool, noBronzeSkip ...bool) {
	t.Helper()
	for _, opts := range []TableSpec{{HistoryColumns: c.opts.HistoryColumns}, {WithoutBronze: true, HistoryColumns: c.opts.HistoryColumns}} {
		if opts.WithoutBronze && len(noBronzeSkip) > 0 && noBronzeSkip[0] {
			continue
		}
		for _, restart := range []bool{false, true} {
			if restart && opts.WithoutBronze && skipNoBronzeRestart {
				continue
			}
			c := c
			c.opts, c.restart, c.cleanRestart = opts, restart, restart
			label := fmt.Sprintf("%v restart %v crashes %d between %v", opts.Tables(), restart, max(c.crashes, 1), c.between)
			got, want := c.run(t)
			bmcCompareTables(t, label, got, want)
			gu := got.batch.res.History.Unwoven + got.batch.rebuild.Unwoven
			wu := want.batch.res.History.Unwoven + want.batch.rebuild.Unwoven
			if gu != wu {
				t.Errorf("%s: unwoven %d, clean %d\n got %s\nwant %s", label, gu, wu, bmcCounts(got.batch), bmcCounts(want.batch))
			}
		}
	}
}

// In-order changes only (creates, updates with TOAST placeholders,
// deletes, a re-create): no key is late, so nothing should go to the
// rebuild, crashed once, twice, with maintenance before the retry.
func TestBreakMirrorCrashInOrder(t *testing.T) {
	crashed := []wev{pgw("u", "null", `{"order_id":1,"status":"b","note":`+toast+`}`, 200), pgw("d", `{"order_id":2}`, "null", 210),
		pgw("c", "null", `{"order_id":2,"status":"r","note":"again"}`, 220), pgw("c", "null", `{"order_id":3,"status":"a","note":"n3"}`, 230),
		pgw("d", `{"order_id":3}`, "null", 240)}
	after := [][]wev{{pgw("u", "null", `{"order_id":1,"status":"c","note":`+toast+`}`, 300), pgw("u", "null", `{"order_id":2,"status":"c","note":"x"}`, 310)}}
	for _, v := range []struct {
		crashes int
		between []string
	}{{1, nil}, {2, nil}, {1, []string{JobCompact}}, {2, []string{JobCompact, JobPurge}}} {
		bmcMatrix(t, bmcCase{before: [][]wev{bmcFirst}, crashed: crashed, after: after, crashes: v.crashes, between: v.between}, false)
	}
}

// A table truncate in the crashed batch, with changes on both sides.
func TestBreakMirrorCrashTruncate(t *testing.T) {
	tr := wev{m: sample.PostgresChange("t", "null", "null", 200), lsn: 200}
	crashed := []wev{pgw("u", "null", `{"order_id":1,"status":"b","note":"n2"}`, 150), tr, pgw("c", "null", `{"order_id":2,"status":"r","note":"n"}`, 250)}
	after := [][]wev{{pgw("c", "null", `{"order_id":1,"status":"c","note":"n3"}`, 300)}}
	bmcMatrix(t, bmcCase{before: [][]wev{bmcFirst}, crashed: crashed, after: after}, false)
}

// A blocking snapshot re-read (op r, sorting below the key's changes) in
// the crashed batch: late for its key.
func TestBreakMirrorCrashReread(t *testing.T) {
	crashed := []wev{pgw("r", "null", `{"order_id":1,"status":"a","note":"n1"}`, 500), pgw("u", "null", `{"order_id":2,"status":"b","note":"n2"}`, 510)}
	after := [][]wev{{pgw("u", "null", `{"order_id":1,"status":"c","note":"n3"}`, 600)}}
	bmcMatrix(t, bmcCase{before: [][]wev{bmcFirst}, crashed: crashed, after: after}, false)
}

// History column tracking (only status opens versions): an in-order
// note-only change and a redelivery in the crashed batch.
func TestBreakMirrorCrashHistoryColumns(t *testing.T) {
	crashed := []wev{pgw("u", "null", `{"order_id":1,"status":"a","note":"n2"}`, 200), pgw("u", "null", `{"order_id":2,"status":"b","note":"n2"}`, 210)}
	after := [][]wev{{pgw("u", "null", `{"order_id":1,"status":"c","note":"n3"}`, 300)}}
	bmcMatrix(t, bmcCase{opts: TableSpec{HistoryColumns: []string{"status"}}, before: [][]wev{bmcFirst}, crashed: crashed, after: after}, false)
}

// More than lakecat.MaxBatchLateKeys (256) late keys in the crashed
// batch, with an in-order change of another key: the property lists
// "all", so the retry sends every key to the rebuild (the way before
// 2026-12-06, docs/design.md). With bronze, or on the same worker, the
// tables equal a clean run's. Without bronze on a new worker the rebuild
// has no past: the in-order key's version at 3000 is left out of the
// history too and counted with the late ones as unwoven (258 against a
// clean restarted run's 257): docs/design.md, Known gaps.
func TestBreakMirrorCrashManyLateKeys(t *testing.T) {
	const n = 257
	var first, second, crashed []wev
	for k := 1; k <= n; k++ {
		first = append(first, pgw("c", "null", fmt.Sprintf(`{"order_id":%d,"status":"a","note":"n1"}`, k), 100+k))
		second = append(second, pgw("u", "null", fmt.Sprintf(`{"order_id":%d,"status":"b","note":"n1"}`, k), 2000+k))
		crashed = append(crashed, pgw("u", "null", fmt.Sprintf(`{"order_id":%d,"status":"late","note":"n1"}`, k), 1000+k))
	}
	first = append(first, pgw("c", "null", `{"order_id":1000,"status":"a","note":"n1"}`, 1))
	crashed = append(crashed, pgw("u", "null", `{"order_id":1000,"status":"b","note":"in order"}`, 3000))
	c := bmcCase{before: [][]wev{first, second}, crashed: crashed}
	bmcMatrix(t, c, true)
	c.opts, c.restart, c.cleanRestart = TableSpec{WithoutBronze: true}, true, true
	got, want := c.run(t)
	const v3000 = "1000 b in order " // the in-order version a clean run opens at 3000
	gu := got.batch.res.History.Unwoven + got.batch.rebuild.Unwoven
	wu := want.batch.res.History.Unwoven + want.batch.rebuild.Unwoven
	if got.mirror != want.mirror || strings.Contains(got.history, v3000) || !strings.Contains(want.history, v3000) || gu != 258 || wu != 257 {
		t.Errorf("without bronze, restarted: mirror equal %v, in-order version kept %v (clean %v), unwoven %d (clean %d); want equal mirrors, the version left out and counted: 258 against 257",
			got.mirror == want.mirror, strings.Contains(got.history, v3000), strings.Contains(want.history, v3000), gu, wu)
	}
}

// A tombstone purge between the mirror commit and the retried history
// commit: key 3, created and deleted in the crashed batch (its delete
// old enough to purge), would be purged from the mirror before the
// history holds its version; the retry would then take the key's changes
// for changes of a purged key (mirror.go, purged.refuses) and the history
// would never get key 3's version (found by a breaker, 2026-12-06; the
// code before 0237ce8 failed the same way). The purge now refuses while
// a batch is between its mirror and history commits
// (lake.ErrBatchBetweenCommits, retryable); once the retry committed the
// history, it purges as after a clean run.
func TestBreakMirrorCrashPurgeBeforeRetry(t *testing.T) {
	crashed := []wev{pgw("u", "null", `{"order_id":1,"status":"b","note":"n2"}`, 200),
		pgw("c", "null", `{"order_id":3,"status":"a","note":"n3"}`, 230), pgw("d", `{"order_id":3}`, "null", 240)}
	const wantH = "3 a n3 00000000000000e600000000000000e6 00000000000000f000000000000000f0 false"
	for _, opts := range []TableSpec{{}, {WithoutBronze: true}} {
		for _, restart := range []bool{false, true} {
			label := fmt.Sprintf("%v restart %v", opts.Tables(), restart)
			w := newWrun(t, opts)
			w.applyRb(bmcFirst, false)
			w.crashAfter("mirror", 1)
			if _, err := w.applyRb(crashed, true); err == nil {
				t.Fatal("no simulated crash")
			}
			if restart {
				w.restart()
			}
			w.a.AfterCommit = nil
			_, err := w.a.Maintain(context.Background(), MaintenanceRequest{Spec: w.spec, Job: JobPurge, Retention: 24 * time.Hour, RetentionFloor: time.Hour})
			if !errors.Is(err, lake.ErrBatchBetweenCommits) {
				t.Fatalf("%s: purge between the commits: %v, want ErrBatchBetweenCommits", label, err)
			}
			got, err := w.applyRb(crashed, false)
			if err != nil {
				t.Fatal(err)
			}
			w.maintain(JobPurge)
			gm, gh := w.tables()
			clean := newWrun(t, opts)
			clean.applyRb(bmcFirst, false)
			want, _ := clean.applyRb(crashed, false)
			clean.maintain(JobPurge)
			wm, wh := clean.tables()
			if !strings.Contains(wh, wantH) {
				t.Fatalf("%s: clean history lacks key 3's version:\n%s", label, wh)
			}
			if gm != wm || gh != wh || got.res.Quarantined != want.res.Quarantined {
				t.Errorf("%s: quarantined %d (clean %d)\nmirror got:\n%s\nwant:\n%s\nhistory got:\n%s\nwant:\n%s", label, got.res.Quarantined, want.res.Quarantined, gm, wm, gh, wh)
			}
		}
	}
}

// The diagnosis of TestBreakMirrorCrashKeyChangeHeir's "create before
// old key": the mirror's crashed commit does list key 2 (the create to
// fill again) in lakemirror.batch-late-keys, but key 2 has no change in
// the batch, and the retried history stage only sends the batch's own
// keys (plan.Groups) that the list names to the pending set, so nothing
// reaches RebuildKeys: key 2 keeps the note its create took ("A") in
// the mirror and the history, where a clean run has "B".
func TestBreakMirrorCrashHeirListedNotRebuilt(t *testing.T) {
	c1 := pgw("c", "null", bmcKcRow(1, "a", "A"), 100)
	u1 := pgw("u", "null", bmcKcRow(1, "a", "B"), 150)
	c2 := bmcKcCreate(1, 2, 200, "a")
	w := newWrun(t, TableSpec{})
	w.applyRb([]wev{c1}, false)
	w.applyRb([]wev{c2}, false)
	w.crashAfter("mirror", 1)
	if _, err := w.applyRb([]wev{u1}, true); err == nil {
		t.Fatal("no simulated crash")
	}
	mirror, err := w.cat.LoadTable(context.Background(), lake.TableName{Namespace: "shop", Name: "orders"}.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	late, rebuild, ok, err := lakecat.ReadBatchLateKeys(mirror, w.seq+1)
	if err != nil || !ok || len(late) != 0 || len(rebuild) != 1 {
		t.Fatalf("late keys %v, to rebuild %v, %v %v (property %q); want key 2 to rebuild", late, rebuild, ok, err, mirror.Properties()[lakecat.PropBatchLateKeys])
	}
	t.Logf("property: %s", mirror.Properties()[lakecat.PropBatchLateKeys])
	res, err := w.applyRb([]wev{u1}, false)
	if err != nil {
		t.Fatal(err)
	}
	m, h := w.tables()
	wantM := "1 a B " + pgs(150, 150) + " false\n2 a B " + pgs(200, 200) + " false"
	wantH := "1 a A " + pgs(100, 100) + " " + pgs(150, 150) + " false\n" +
		"1 a B " + pgs(150, 150) + " <nil> true\n" +
		"2 a B " + pgs(200, 200) + " <nil> true"
	if m != wantM || h != wantH || !res.rebuilt {
		t.Errorf("retried batch: pending %d, rebuilt %v\nmirror:\n%s\nwant:\n%s\nhistory:\n%s\nwant:\n%s", res.res.History.Pending, res.rebuilt, m, wantM, h, wantH)
	}
}

// Late keys (a late change, a woven-capable key) with a compaction of the
// tables between the crash and the retry (its commits move the tables'
// snapshots; the list must still be read), and with the crash twice.
func TestBreakMirrorCrashLateCompact(t *testing.T) {
	before := [][]wev{bmcFirst, {pgw("u", "null", `{"order_id":1,"status":"b","note":"n2"}`, 200), pgw("u", "null", `{"order_id":2,"status":"b","note":`+toast+`}`, 210)}}
	crashed := []wev{pgw("u", "null", `{"order_id":1,"status":"late","note":"nl"}`, 150), pgw("u", "null", `{"order_id":3,"status":"a","note":"n3"}`, 300),
		pgw("u", "null", `{"order_id":2,"status":"c","note":`+toast+`}`, 310)}
	after := [][]wev{{pgw("u", "null", `{"order_id":1,"status":"c","note":"n3"}`, 400)}}
	for _, v := range []struct {
		crashes int
		between []string
	}{{1, []string{JobCompact}}, {2, nil}, {2, []string{JobCompact}}} {
		// without bronze a compaction before the retry is the known gap
		// (TestBreakMirrorCrashLateCompactNoBronze)
		bmcMatrix(t, bmcCase{before: before, crashed: crashed, after: after, crashes: v.crashes, between: v.between}, true, v.between != nil)
	}
}

// As TestBreakMirrorCrashRedelivered with a delete: the crashed batch
// holds a redelivered copy of key 2's create and key 2's delete. Without
// bronze on a new worker the retried history sends key 2 to a rebuild
// that has no past, so its version is never closed: the history keeps
// key 2 current while the mirror has it deleted.
func TestBreakMirrorCrashRedeliveredDelete(t *testing.T) {
	crashed := []wev{bmcFirst[1], pgw("d", `{"order_id":2}`, "null", 210)}
	c := bmcCase{opts: TableSpec{WithoutBronze: true}, before: [][]wev{bmcFirst}, crashed: crashed, restart: true, cleanRestart: true}
	got, want := c.run(t)
	const wantH = "1 a n1 00000000000000640000000000000064 <nil> true\n" +
		"2 a n1 000000000000006e000000000000006e 00000000000000d200000000000000d2 false"
	if want.history != wantH {
		t.Fatalf("clean history:\n%s\nwant:\n%s", want.history, wantH)
	}
	bmcCompareTables(t, "redelivered create and delete", got, want)
	if g, w := bmcCounts(got.batch), bmcCounts(want.batch); g != w {
		t.Errorf("counts\n got %s\nwant %s", g, w)
	}
}

// A key-change create applied before its old key's changes below it
// (TestKeyChangeCreateBeforeOldKey's shapes), the old key's changes in
// the crashed batch: the create (key 2, a key with no change in the
// batch) is listed to fill again, but the retry never sends it to the
// rebuild (TestBreakMirrorCrashHeirListedNotRebuilt): key 2 keeps note
// "A" in the mirror and the history, a clean run gives "B". Nothing
// counts it. With the old key's update alone in the batch the code
// before 0237ce8 fails the same way (TestBreakMirrorCrashCreateBeforeOldKey);
// with its update and delete (TestBreakMirrorCrashCreateBeforeOldKeyDelete)
// it passed: every key of the batch went to the rebuild, which follows
// key 1's key-change delete to key 2. A regression of 0237ce8.
func TestBreakMirrorCrashCreateBeforeOldKey(t *testing.T) {
	bmcCreateBeforeOldKey(t, false)
}

func TestBreakMirrorCrashCreateBeforeOldKeyDelete(t *testing.T) {
	bmcCreateBeforeOldKey(t, true)
}

func bmcCreateBeforeOldKey(t *testing.T, withDelete bool) {
	c1 := pgw("c", "null", bmcKcRow(1, "a", "A"), 100)
	u1 := pgw("u", "null", bmcKcRow(1, "a", "B"), 150)
	d1 := bmcKcDel(1, 2, 200)
	c2 := bmcKcCreate(1, 2, 200, "a")
	cases := map[string][]wev{"update": {u1}}
	if withDelete {
		cases = map[string][]wev{"update and delete": {u1, d1}}
	}
	for name, crashed := range cases {
		for _, opts := range []TableSpec{{}, {WithoutBronze: true}} {
			for _, restart := range []bool{false, true} {
				if restart && opts.WithoutBronze {
					continue // no past to read after a restart: Known gaps
				}
				label := fmt.Sprintf("%s %v restart %v", name, opts.Tables(), restart)
				c := bmcCase{opts: opts, before: [][]wev{{c1}, {c2}}, crashed: crashed, restart: restart}
				got, want := c.run(t)
				bmcCompareTables(t, label, got, want)
			}
		}
	}
}

// Without bronze, retried on the same worker with a compaction between
// the crash and the retry: the late change of key 1 goes to a rebuild
// after the compaction reset the local state, so it is left out of the
// history and counted unwoven, where a clean run (compaction after the
// batch) weaves it. This is the known gap "Without bronze, a late
// change" (a compaction), reached here through the retry; asserted as
// today's result. The code before 0237ce8 gives the same.
func TestBreakMirrorCrashLateCompactNoBronze(t *testing.T) {
	before := [][]wev{bmcFirst, {pgw("u", "null", `{"order_id":1,"status":"b","note":"n2"}`, 200)}}
	crashed := []wev{pgw("u", "null", `{"order_id":1,"status":"late","note":"nl"}`, 150), pgw("u", "null", `{"order_id":3,"status":"a","note":"n3"}`, 300)}
	c := bmcCase{opts: TableSpec{WithoutBronze: true}, before: before, crashed: crashed, between: []string{JobCompact}}
	got, want := c.run(t)
	const lateRow = "1 late nl 00000000000000960000000000000096 00000000000000c800000000000000c8 false"
	if !strings.Contains(want.history, lateRow) || strings.Contains(got.history, lateRow) || got.mirror != want.mirror {
		t.Errorf("history got:\n%s\nclean:\n%s", got.history, want.history)
	}
	if u := got.batch.res.History.Unwoven + got.batch.rebuild.Unwoven; u != 1 {
		t.Errorf("unwoven %d, want 1 (%s)", u, bmcCounts(got.batch))
	}
}

// MySQL: a redelivered binlog change (the connector restarted from an
// earlier offset) in the crashed batch, its original in an earlier
// batch: a clean run counts a duplicate; the retry lists the key late
// and rebuilds it from bronze, where the key's records go back in
// position in delivery order.
func TestBreakMirrorCrashMySQLRedelivered(t *testing.T) {
	c1 := myw("c", "null", `{"order_id":1,"status":"a","note":"n1"}`, 1, 1, 100)
	u1 := myw("u", `{"order_id":1,"status":"a","note":"n1"}`, `{"order_id":1,"status":"b","note":"n2"}`, 1, 1, 200)
	u1b := myw("u", `{"order_id":1,"status":"b","note":"n2"}`, `{"order_id":1,"status":"c","note":"n3"}`, 1, 1, 300)
	c2 := myw("c", "null", `{"order_id":2,"status":"a","note":"n1"}`, 1, 1, 310)
	for _, opts := range []TableSpec{{}, {WithoutBronze: true}} {
		for _, restart := range []bool{false, true} {
			label := fmt.Sprintf("%v restart %v", opts.Tables(), restart)
			c := bmcCase{opts: opts, before: [][]wev{{c1, u1}}, crashed: []wev{u1, u1b, c2}, restart: restart, cleanRestart: restart}
			got, want := c.run(t)
			bmcCompareTables(t, label, got, want)
			if g, w := bmcCounts(got.batch), bmcCounts(want.batch); g != w {
				t.Errorf("%s: counts\n got %s\nwant %s", label, g, w)
			}
		}
	}
}

// The version TestBreakMirrorCrashRedelivered loses (no bronze, a new
// worker) also falsifies the values of the key's later versions: a
// later update whose note is a TOAST placeholder takes the note of the
// version the history kept open (n1) where the source's is n2; the
// mirror is right.
func TestBreakMirrorCrashRedeliveredToastAfter(t *testing.T) {
	crashed := []wev{bmcFirst[0], pgw("u", "null", `{"order_id":1,"status":"b","note":"n2"}`, 200)}
	after := [][]wev{{pgw("u", "null", `{"order_id":1,"status":"c","note":`+toast+`}`, 300)}}
	c := bmcCase{opts: TableSpec{WithoutBronze: true}, before: [][]wev{bmcFirst}, crashed: crashed, after: after, restart: true, cleanRestart: true}
	got, want := c.run(t)
	const cur = "1 c n2 000000000000012c000000000000012c <nil> true"
	if !strings.Contains(want.history, cur) {
		t.Fatalf("clean history:\n%s", want.history)
	}
	bmcCompareTables(t, "redelivered, then a TOAST update", got, want)
}

// A column added in the crashed batch (the mirror's commit evolved its
// schema, the history's did not happen), with a TOAST placeholder and a
// late change.
func TestBreakMirrorCrashColumnAdded(t *testing.T) {
	before := [][]wev{bmcFirst, {pgw("u", "null", `{"order_id":2,"status":"b","note":"n2"}`, 200)}}
	crashed := []wev{pgw("u", "null", `{"order_id":1,"status":"b","note":`+toast+`,"extra":"e1"}`, 300),
		pgw("u", "null", `{"order_id":2,"status":"late","note":"nl","extra":"e0"}`, 150)}
	after := [][]wev{{pgw("u", "null", `{"order_id":1,"status":"c","note":"n3","extra":"e2"}`, 400)}}
	bmcMatrix(t, bmcCase{before: before, crashed: crashed, after: after, cols: []string{"order_id", "status", "note", "extra"}}, true)
}

// A delete and its Kafka tombstone in the crashed batch, and a later
// re-create of the key.
func TestBreakMirrorCrashTombstone(t *testing.T) {
	del := pgw("d", `{"order_id":2}`, "null", 210)
	crashed := []wev{pgw("u", "null", `{"order_id":1,"status":"b","note":"n2"}`, 200), del, {m: sample.Message{Key: del.m.Key}}}
	after := [][]wev{{pgw("c", "null", `{"order_id":2,"status":"again","note":`+toast+`}`, 300)}}
	bmcMatrix(t, bmcCase{before: [][]wev{bmcFirst}, crashed: crashed, after: after}, false)
}
