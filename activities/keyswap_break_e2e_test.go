//go:build e2e

package activities

// A breaker's cases of key-change creates with TOAST placeholders
// against the source's state, written by hand.

import (
	"fmt"
	"testing"
)

// Two rows swap keys in one statement (PostgreSQL, a DEFERRABLE primary
// key: UPDATE orders SET order_id = 3 - order_id WHERE order_id IN (1, 2)).
// Row 1 (a, A) is updated first: delete 1 / create 2 at 200; then row 2
// (b, B): delete 2 / create 1 at 210. Both notes are TOASTed and
// unchanged, so both creates carry the placeholder. The source then
// holds key 1 = (b, B) and key 2 = (a, A), both live.
//
// Create 1 (old key 2) takes its note from "the newest change of the old
// key below the create": key 2's create at 200, which is row 1's new
// version (A), not row 2 (B), whose update is the one at 210. And key
// 2's delete at 210 (row 2 leaving the key) sorts after key 2's create
// at 200 (row 1 arriving), so key 2 ends deleted though the source holds
// it.
//
// Known gap (docs/design.md, "Known gaps"): Debezium's stream of a key
// swap is the stream of two key changes in a row (1 → 2, then 2 → 3 of
// a moved row), and key-only images cannot tell them apart. This asserts
// today's result, so that a fix shows here; the source's is in want. It
// is not silent: create 2 lands on key 2 while row 2 still holds it,
// which only a deferrable key allows, and is counted
// (KeysMovedOntoLive: status, metric, alert).
func TestBreakKeySwapToast(t *testing.T) {
	src := []wev{
		pgw("c", "null", kcRow(1, 100, "a", "A"), 100),
		pgw("c", "null", kcRow(2, 110, "b", "B"), 110),
		kcDel(1, 2, 200, ""), kcCreate(1, 2, 200, "a"),
		kcDel(2, 1, 210, ""), kcCreate(2, 1, 210, "b"),
	}
	want := "1 b B " + pgs(210, 210) + " false\n2 a A " + pgs(200, 200) + " false"
	gap := "1 b A " + pgs(210, 210) + " false\n2 a A " + pgs(210, 210) + " true"
	for _, split := range [][][]wev{{src}, {src[:2], src[2:]}} {
		w := runBatches(t, TableSpec{}, split, nil, "")
		gm, gh := w.tables()
		if gm != gap {
			t.Errorf("%d batches: mirror got:\n%s\nwant (the gap; the source: %q):\n%s\nhistory:\n%s", len(split), gm, want, gap, gh)
		}
		if w.moved != 1 {
			t.Errorf("%d batches: %d keys moved onto a live key counted, want 1 (create 2 onto row 2)", len(split), w.moved)
		}
	}
}

// The old key is deleted, inserted again with another note and updated
// with its note unchanged (a TOAST placeholder), then its key changed:
// the new key's note is the re-insert's (C). Delivered in one batch, in
// batches, with restarts (the state log built again from the tables),
// the create first (another partition), with and without bronze and
// history.
func TestBreakKeyChangeAfterReinsert(t *testing.T) {
	c1 := pgw("c", "null", kcRow(1, 100, "a", "A"), 100)
	d1 := pgw("d", `{"order_id":1}`, "null", 150)
	r1 := pgw("c", "null", kcRow(1, 160, "c", "C"), 160)
	u1 := pgw("u", "null", fmt.Sprintf(`{"order_id":1,"status":"u","note":%s}`, toast), 170)
	kd := kcDel(1, 2, 200, "")
	kc := kcCreate(1, 2, 200, "u")
	wantM := "1 u C " + pgs(200, 200) + " true\n2 u C " + pgs(200, 200) + " false"
	for name, c := range map[string]struct {
		batches [][]wev
		restart map[int]bool
	}{
		"one batch":              {[][]wev{{c1, d1, r1, u1, kd, kc}}, nil},
		"split, restarts":        {[][]wev{{c1, d1}, {r1}, {u1}, {kd, kc}}, map[int]bool{1: true, 2: true, 3: true}},
		"create first":           {[][]wev{{c1, d1}, {kc}, {r1, u1, kd}}, nil},
		"create first, restart":  {[][]wev{{c1, d1, r1}, {kc}, {u1, kd}}, map[int]bool{1: true}},
		"create with the update": {[][]wev{{c1}, {d1, r1}, {u1, kc}, {kd}}, map[int]bool{2: true}},
	} {
		for _, opts := range []TableSpec{{}, {WithoutHistory: true}, {WithoutBronze: true}} {
			w := runBatches(t, opts, c.batches, c.restart, "")
			gm, gh := w.tables()
			if gm != wantM {
				t.Errorf("%s %v: rebuilds %d\nmirror got:\n%s\nwant:\n%s\nhistory:\n%s", name, opts.Tables(), w.rebuil, gm, wantM, gh)
			}
		}
	}
}

// The smallest case of the "create first" failure above: key 1 (A) is
// deleted at 150 and inserted again at 160 with note C; its key changes
// to 2 at 200. Create 2 arrives while the mirror holds key 1's delete at
// 150 (key 1's partition lags: its re-insert and the update's delete come
// in the next batch). oldKeyPast.complete takes that delete for the
// update's own, so the create is not listed in State.heirs, is filled
// from the deleted row's last known values (A), and the re-insert that
// arrives next never reaches it. The source's key 2 holds C.
//
// Fixed in 03e1ecc: complete needs the old key's delete at the create's
// own position.
func TestBreakKeyChangeCreateFirstAfterOldDelete(t *testing.T) {
	c1 := pgw("c", "null", kcRow(1, 100, "a", "A"), 100)
	d1 := pgw("d", `{"order_id":1}`, "null", 150)
	r1 := pgw("c", "null", kcRow(1, 160, "c", "C"), 160)
	kd := kcDel(1, 2, 200, "")
	kc := kcCreate(1, 2, 200, "c")
	wantM := "1 c C " + pgs(200, 200) + " true\n2 c C " + pgs(200, 200) + " false"
	for _, opts := range []TableSpec{{}, {WithoutHistory: true}, {WithoutBronze: true}} {
		w := runBatches(t, opts, [][]wev{{c1, d1}, {kc}, {r1, kd}}, nil, "")
		gm, gh := w.tables()
		if gm != wantM {
			t.Errorf("%v: mirror got:\n%s\nwant:\n%s\nhistory:\n%s", opts.Tables(), gm, wantM, gh)
		}
	}
}

// As TestBreakKeyChangeCreateFirstAfterOldDelete with create 2 delivered
// while key 1 is live (A): it is listed in State.heirs. Key 1's plain
// delete at 150 then arrives alone: State.heirsToRefill takes any delete
// at or below the create for the update's own and forgets the create, so
// the re-insert (C) in the next batch reaches nothing. The source's key
// 2 holds C.
//
// Fixed in 03e1ecc: a create is forgotten only at its own delete's
// position.
func TestBreakKeyChangeHeirForgottenOnOlderDelete(t *testing.T) {
	c1 := pgw("c", "null", kcRow(1, 100, "a", "A"), 100)
	d1 := pgw("d", `{"order_id":1}`, "null", 150)
	r1 := pgw("c", "null", kcRow(1, 160, "c", "C"), 160)
	kd := kcDel(1, 2, 200, "")
	kc := kcCreate(1, 2, 200, "c")
	wantM := "1 c C " + pgs(200, 200) + " true\n2 c C " + pgs(200, 200) + " false"
	for _, opts := range []TableSpec{{}, {WithoutHistory: true}, {WithoutBronze: true}} {
		w := runBatches(t, opts, [][]wev{{c1}, {kc}, {d1}, {r1, kd}}, nil, "")
		gm, gh := w.tables()
		if gm != wantM {
			t.Errorf("%v: mirror got:\n%s\nwant:\n%s\nhistory:\n%s", opts.Tables(), gm, wantM, gh)
		}
	}
}

// A chain 1 → 2 → 3 whose key-2 steps arrive before key 1's partition
// catches up: key 1 (A) is updated to note B at 150, its key changed to
// 2 at 200, and key 2's to 3 at 300. The batch holding create 2, create 3
// and key 2's delete comes before key 1's update and delete. Create 2 is
// listed (State.heirs) and filled again with B when key 1's update
// arrives; create 3 took A from create 2 and is not listed (key 2's
// delete at its position makes it "complete"). The source's key 3 holds
// B.
//
// Fixed in 03e1ecc: create 3 is listed under key 1 too
// (State.chainHeirs).
func TestBreakKeyChangeChainHeirNotPassedOn(t *testing.T) {
	c1 := pgw("c", "null", kcRow(1, 100, "a", "A"), 100)
	u1 := pgw("u", "null", kcRow(1, 150, "a", "B"), 150)
	kd1, kc2 := kcDel(1, 2, 200, ""), kcCreate(1, 2, 200, "a")
	kd2, kc3 := kcDel(2, 3, 300, ""), kcCreate(2, 3, 300, "a")
	wantM := "1 a B " + pgs(200, 200) + " true\n2 a B " + pgs(300, 300) + " true\n3 a B " + pgs(300, 300) + " false"
	clean := newWrun(t, TableSpec{})
	clean.apply([]wev{c1, u1, kd1, kc2, kd2, kc3}, false)
	if cm, _ := clean.tables(); cm != wantM {
		t.Fatalf("clean: mirror got:\n%s\nwant:\n%s", cm, wantM)
	}
	for _, opts := range []TableSpec{{}, {WithoutHistory: true}, {WithoutBronze: true}} {
		w := runBatches(t, opts, [][]wev{{c1}, {kc2, kd2, kc3}, {u1, kd1}}, nil, "")
		gm, gh := w.tables()
		if gm != wantM {
			t.Errorf("%v: rebuilds %d\nmirror got:\n%s\nwant:\n%s\nhistory:\n%s", opts.Tables(), w.rebuil, gm, wantM, gh)
		}
	}
}

// Key 2 existed once (note Z) and was deleted. Key 1, never seen by the
// mirror (the connector started without a snapshot), then changes to key
// 2 with its note TOASTed: no change of key 1 knows the note, so it is
// unknown (NULL, counted as an unknown placeholder, as for a key new to
// the mirror). The writer fills it from key 2's own deleted row instead:
// Z, a deleted row's value shown as the live row's.
//
// Fixed in 03e1ecc: such a placeholder is NULL and counted as unknown.
func TestBreakKeyChangeUnknownTakesNewKeysDeletedRow(t *testing.T) {
	c2 := pgw("c", "null", kcRow(2, 50, "z", "Z"), 50)
	d2 := pgw("d", `{"order_id":2}`, "null", 60)
	kd1, kc2 := kcDel(1, 2, 200, ""), kcCreate(1, 2, 200, "a")
	wantM := "1 <nil> <nil> " + pgs(200, 200) + " true\n2 a <nil> " + pgs(200, 200) + " false"
	for _, split := range [][][]wev{{{c2, d2, kd1, kc2}}, {{c2, d2}, {kd1, kc2}}} {
		w := runBatches(t, TableSpec{}, split, nil, "")
		gm, gh := w.tables()
		if gm != wantM {
			t.Errorf("%d batches: mirror got:\n%s\nwant:\n%s\nhistory:\n%s", len(split), gm, wantM, gh)
		}
	}
}

// A column (extra) added by key 1's update at 150, delivered after the
// key change's create (another partition ahead), which carries TOAST
// placeholders for note and extra: the create is filled again when the
// update arrives (State.heirs). The source's key 2 holds A, E.
func TestBreakKeyChangeHeirColumnAdded(t *testing.T) {
	cr := pgw("c", "null", fmt.Sprintf(`{"order_id":2,"status":"a","note":%s,"extra":%s}`, toast, toast), 200)
	cr.hdr = kcCreate(1, 2, 200, "a").hdr
	c1 := pgw("c", "null", kcRow(1, 100, "a", "A"), 100)
	u1 := pgw("u", "null", `{"order_id":1,"status":"a","note":"A","extra":"E"}`, 150)
	kd := kcDel(1, 2, 200, "")
	want := "1 a A E " + pgs(200, 200) + " true\n2 a A E " + pgs(200, 200) + " false"
	for name, batches := range map[string][][]wev{
		"create first":     {{cr}, {c1, u1, kd}},
		"create after c1":  {{c1}, {cr}, {u1, kd}},
		"update, then del": {{c1}, {cr}, {u1}, {kd}},
	} {
		for _, opts := range []TableSpec{{}, {WithoutHistory: true}, {WithoutBronze: true}} {
			w := runBatches(t, opts, batches, nil, "")
			gm, _ := w.colTables("order_id", "status", "note", "extra")
			if gm != want {
				t.Errorf("%s %v: rebuilds %d mirror got:\n%s\nwant:\n%s", name, opts.Tables(), w.rebuil, gm, want)
			}
		}
	}
}

// Create 2 (key change 1 → 2 at 200) arrives before key 1's update of
// its note (B at 150), together with key 2's own update at 250 that
// keeps the note (a placeholder): when key 1's update arrives, key 2 is
// filled again, the update at 250 included. The source's key 2 holds
// (y, B), and its history B from 200 on.
func TestBreakKeyChangeHeirThenNewKeyUpdate(t *testing.T) {
	c1 := pgw("c", "null", kcRow(1, 100, "a", "A"), 100)
	u1 := pgw("u", "null", kcRow(1, 150, "a", "B"), 150)
	kd, kc := kcDel(1, 2, 200, ""), kcCreate(1, 2, 200, "a")
	u2 := pgw("u", "null", fmt.Sprintf(`{"order_id":2,"status":"y","note":%s}`, toast), 250)
	wantM := "1 a B " + pgs(200, 200) + " true\n2 y B " + pgs(250, 250) + " false"
	wantH := "1 a A " + pgs(100, 100) + " " + pgs(150, 150) + " false\n" +
		"1 a B " + pgs(150, 150) + " " + pgs(200, 200) + " false\n" +
		"2 a B " + pgs(200, 200) + " " + pgs(250, 250) + " false\n" +
		"2 y B " + pgs(250, 250) + " <nil> true"
	for name, batches := range map[string][][]wev{
		"old key's past after":  {{c1}, {kc, u2}, {u1, kd}},
		"update in a later one": {{c1}, {kc}, {u2}, {u1, kd}},
		"update, then del":      {{c1}, {kc, u2}, {u1}, {kd}},
	} {
		for _, opts := range []TableSpec{{}, {WithoutHistory: true}, {WithoutBronze: true}} {
			w := runBatches(t, opts, batches, nil, "")
			gm, gh := w.tables()
			if gm != wantM || !opts.WithoutHistory && gh != wantH {
				t.Errorf("%s %v: rebuilds %d\nmirror got:\n%s\nwant:\n%s\nhistory got:\n%s\nwant:\n%s", name, opts.Tables(), w.rebuil, gm, wantM, gh, wantH)
			}
		}
	}
}

// TestWeaveRandom variant 11 failed at seed 34 (WEAVE_VARIANT=11
// WEAVE_SEED=34): the history's version of a key-change create kept a
// note older than the source's. Reduced: key 4 (n150) is updated to
// n262 at 262, then changed to key 1 at 292 (delete and create at 292,
// the note a TOAST placeholder). The update at 262 is delivered late,
// after the key change (a redelivered or reordered record, as the
// random test's late records). The create came with its old key's
// delete, so it was "complete" and not listed in State.heirs; the late
// update was woven into key 4's history but never reached key 1, whose
// note stayed n150. The source's key 1 holds n262 from 292 on; a clean
// run (in order) has it.
//
// Fixed on 2026-12-06: the key-change delete keeps its new key
// (cdc.Event.NewKey, in the local state log too), the log keeps the
// create as it came beside its filled values, and a late change of the
// old key below the delete lists the new key for RebuildKeys, which
// fills the create again from the old key's changes (with bronze also
// after a restart: KeyChangeHeirs).
func TestBreakKeyChangeLateOldKeyUpdate(t *testing.T) {
	c4 := pgw("c", "null", `{"order_id":4,"status":"s150","note":"n150"}`, 150)
	u4 := pgw("u", "null", `{"order_id":4,"status":"s262","note":"n262"}`, 262)
	kd, kc := kcDel(4, 1, 292, ""), kcCreate(4, 1, 292, "s262")
	clean := newWrun(t, TableSpec{})
	clean.apply([]wev{c4, u4, kd, kc}, false)
	wm, wh := clean.tables()
	if want := "1 s262 n262 " + pgs(292, 292) + " false\n4 s262 n262 " + pgs(292, 292) + " true"; wm != want {
		t.Fatalf("clean mirror:\n%s\nwant:\n%s", wm, want)
	}
	wantH := "1 s262 n262 " + pgs(292, 292) + " <nil> true\n" +
		"4 s150 n150 " + pgs(150, 150) + " " + pgs(262, 262) + " false\n" +
		"4 s262 n262 " + pgs(262, 262) + " " + pgs(292, 292) + " false"
	if wh != wantH {
		t.Fatalf("clean history:\n%s\nwant:\n%s", wh, wantH)
	}
	lateRuns(t, wm, wh, map[string]lateRun{
		"late update alone":              {[][]wev{{c4}, {kd, kc}, {u4}}, nil},
		"late update, one more":          {[][]wev{{c4, kd, kc}, {u4}}, nil},
		"late update alone, restart":     {[][]wev{{c4}, {kd, kc}, {u4}}, map[int]bool{1: true, 2: true}},
		"late update, one more, restart": {[][]wev{{c4, kd, kc}, {u4}}, map[int]bool{1: true}},
	})
}

// lateRun is a case of lateRuns: batches applied in order, with a
// restart of the worker before each batch whose index restart lists.
type lateRun struct {
	batches [][]wev
	restart map[int]bool
}

// lateRuns applies each case with and without bronze and without
// history (a restart case without bronze is skipped: no past to read
// after a restart, docs/design.md, Known gaps) and wants the mirror wm
// and, where kept, the history wh.
func lateRuns(t *testing.T, wm, wh string, cases map[string]lateRun) {
	t.Helper()
	for name, c := range cases {
		for _, opts := range []TableSpec{{}, {WithoutBronze: true}, {WithoutHistory: true}} {
			if c.restart != nil && opts.WithoutBronze {
				continue
			}
			w := runBatches(t, opts, c.batches, c.restart, "")
			gm, gh := w.tables()
			if gm != wm || !opts.WithoutHistory && gh != wh {
				t.Errorf("%s %v: rebuilds %d woven %d\nmirror got:\n%s\nwant:\n%s\nhistory got:\n%s\nwant:\n%s", name, opts.Tables(), w.rebuil, w.woven, gm, wm, gh, wh)
			}
		}
	}
}

// As TestBreakKeyChangeLateOldKeyUpdate with a second key change of the
// new key (1 → 7 at 300, the note a TOAST placeholder again): the late
// update of key 4 reaches key 7 through key 1 (RebuildKeys follows the
// new keys' own key changes).
func TestBreakKeyChangeLateOldKeyUpdateChain(t *testing.T) {
	c4 := pgw("c", "null", `{"order_id":4,"status":"s150","note":"n150"}`, 150)
	u4 := pgw("u", "null", `{"order_id":4,"status":"s262","note":"n262"}`, 262)
	kd, kc := kcDel(4, 1, 292, ""), kcCreate(4, 1, 292, "s262")
	kd1, kc7 := kcDel(1, 7, 300, ""), kcCreate(1, 7, 300, "s300")
	clean := newWrun(t, TableSpec{})
	clean.apply([]wev{c4, u4, kd, kc, kd1, kc7}, false)
	wm, wh := clean.tables()
	if want := "1 s262 n262 " + pgs(300, 300) + " true\n4 s262 n262 " + pgs(292, 292) + " true\n7 s300 n262 " + pgs(300, 300) + " false"; wm != want {
		t.Fatalf("clean mirror:\n%s\nwant:\n%s", wm, want)
	}
	lateRuns(t, wm, wh, map[string]lateRun{
		"late update":          {[][]wev{{c4}, {kd, kc, kd1, kc7}, {u4}}, nil},
		"late update, split":   {[][]wev{{c4, kd, kc}, {kd1, kc7}, {u4}}, nil},
		"late update, restart": {[][]wev{{c4}, {kd, kc, kd1, kc7}, {u4}}, map[int]bool{1: true, 2: true}},
	})
}

// Known gap (docs/design.md, "Known gaps"): without bronze, a worker
// that built its state from the tables after key 4's create has no past
// of key 4 to weave its late update into: the update is left out of the
// history and counted as unwoven (key 4), key 4's deleted row keeps
// the values before it, and key 1 the note its create took (n150; the
// source's is n262). This asserts today's result
// and the count, so that a fix shows here.
func TestBreakKeyChangeLateOldKeyUpdateRestartWithoutBronze(t *testing.T) {
	c4 := pgw("c", "null", `{"order_id":4,"status":"s150","note":"n150"}`, 150)
	u4 := pgw("u", "null", `{"order_id":4,"status":"s262","note":"n262"}`, 262)
	kd, kc := kcDel(4, 1, 292, ""), kcCreate(4, 1, 292, "s262")
	w := newWrun(t, TableSpec{WithoutBronze: true})
	w.apply([]wev{c4}, false)
	w.restart()
	w.apply([]wev{kd, kc}, false)
	res, _ := w.apply([]wev{u4}, false)
	gm, _ := w.tables()
	// the source: key 1 s262 n262, and key 4's deleted row the update's
	// values (a key-only delete keeps the last known ones)
	want := "1 s262 n150 " + pgs(292, 292) + " false\n4 s150 n150 " + pgs(292, 292) + " true"
	if gm != want || res.History.Unwoven != 1 {
		t.Errorf("unwoven %d (want 1)\nmirror got:\n%s\nwant (the gap):\n%s", res.History.Unwoven, gm, want)
	}
}
