package activities

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// A breaker's cases of the late keys' past changes read from bronze after
// a restart: each compares the key-set read ("keys") and the full load
// ("all") with a clean in-order run or a steady worker.

// pastReadRun applies batches with a worker restarted before batch restartAt
// (and each after when every), past reads forced by mode, and compares
// with the clean in-order batch.
func pastReadRun(t *testing.T, opts TableSpec, batches [][]wev, clean []wev, restartAt int, every bool) {
	t.Helper()
	c := newWrun(t, opts)
	c.apply(clean, false)
	wm, wh := c.tables()
	for _, mode := range []string{"keys", "all"} {
		testPastRead = mode
		w := newWrun(t, opts)
		for i, b := range batches {
			if i == restartAt || (every && i > restartAt) {
				w.restart()
			}
			w.apply(b, false)
		}
		testPastRead = ""
		gm, gh := w.tables()
		t.Logf("mode %s: rebuilds %d woven %d", mode, w.rebuil, w.woven)
		if gm != wm || gh != wh {
			t.Errorf("mode %s (rebuilds %d)\nmirror got:\n%s\nwant:\n%s\nhistory got:\n%s\nwant:\n%s", mode, w.rebuil, gm, wm, gh, wh)
		}
	}
}

func tomb(k string) wev { return wev{m: sample.Message{Key: []byte(k)}} }

// A bronze file holding a key's delete and its tombstone (one `_key`
// value, one null): the key-set read must still find the delete.
func TestPastReadTombstoneFile(t *testing.T) {
	c1 := pgw("c", "null", `{"order_id":1,"status":"a","note":"n"}`, 100)
	c2 := pgw("c", "null", `{"order_id":2,"status":"a","note":"n"}`, 110)
	d1 := pgw("d", `{"order_id":1}`, "null", 300)
	late := pgw("u", "null", `{"order_id":1,"status":"b","note":"n"}`, 200)
	pastReadRun(t, TableSpec{}, [][]wev{{c1, c2}, {d1, tomb(`{"order_id":1}`)}, {late}},
		[]wev{c1, c2, late, d1, tomb(`{"order_id":1}`)}, 2, false)
}

// A late change of a purged key, refused by the purge (quarantined, its
// bronze `_key` left null), then the key re-created and late again after
// a restart: the key-set read and the full load must agree, and match a
// steady worker that never restarted.
func TestPastReadPurgeRefusedThenRebuilt(t *testing.T) {
	ctx := context.Background()
	run := func(mode string, restart bool) (string, string) {
		testPastRead = mode
		defer func() { testPastRead = "" }()
		w := newWrun(t, TableSpec{})
		w.apply([]wev{pgw("c", "null", `{"order_id":1,"status":"new"}`, 100), pgw("u", "null", `{"order_id":1,"status":"paid"}`, 150),
			pgw("d", `{"order_id":1}`, "null", 200), pgw("c", "null", `{"order_id":2,"status":"new"}`, 300)}, false)
		if res, err := w.a.Maintain(ctx, MaintenanceRequest{Spec: w.spec, Job: JobPurge, Retention: 24 * time.Hour, RetentionFloor: time.Hour}); err != nil || res.Purge.Purged != 1 {
			t.Fatalf("purge: %+v, %v", res.Purge, err)
		}
		// a late change of purged key 1, below the horizon: refused
		res, _ := w.apply([]wev{pgw("u", "null", `{"order_id":1,"status":"late"}`, 120)}, false)
		t.Logf("refused batch: quarantined %d", res.Quarantined)
		w.apply([]wev{pgw("c", "null", `{"order_id":1,"status":"again"}`, 400)}, false)
		w.apply([]wev{pgw("u", "null", `{"order_id":1,"status":"later"}`, 500)}, false)
		if restart {
			w.restart()
		}
		w.apply([]wev{pgw("u", "null", `{"order_id":1,"status":"between"}`, 450)}, false)
		return w.tables()
	}
	sm, sh := run("", false)
	for _, mode := range []string{"keys", "all"} {
		gm, gh := run(mode, true)
		if gm != sm || gh != sh {
			t.Errorf("mode %s\nmirror got:\n%s\nsteady:\n%s\nhistory got:\n%s\nsteady:\n%s", mode, gm, sm, gh, sh)
		}
	}
}

// A change an operator skipped (a reserved-name column), then the same
// column evolved away on a later change: the skipped record's bronze
// `_key` is null. After a restart a late change rebuilds the key; the
// key-set read, the full load and a steady worker must agree.
func TestPastReadSkippedThenEvolved(t *testing.T) {
	run := func(mode string, restart bool) (string, string) {
		testPastRead = mode
		defer func() { testPastRead = "" }()
		w := newWrun(t, TableSpec{})
		w.apply([]wev{pgw("c", "null", `{"order_id":1,"status":"a"}`, 100), pgw("c", "null", `{"order_id":2,"status":"a"}`, 110)}, false)
		b2 := []wev{pgw("u", "null", `{"order_id":1,"status":"b","_is_deleted":false}`, 200)}
		if _, err := w.apply(b2, true); err == nil {
			t.Fatal("b2 not blocked")
		}
		w.decision = lake.DecisionSkip
		if res, _ := w.apply(b2, false); res.Quarantined != 1 {
			t.Fatalf("b2 quarantined %d", res.Quarantined)
		}
		b3 := []wev{pgw("u", "null", `{"order_id":1,"status":"c","_is_deleted":true}`, 300)}
		if _, err := w.apply(b3, true); err == nil {
			t.Fatal("b3 not blocked")
		}
		w.decision = lake.DecisionEvolve
		w.apply(b3, false)
		if restart {
			w.restart()
		}
		w.apply([]wev{pgw("u", "null", `{"order_id":1,"status":"x"}`, 250)}, false)
		return w.tables()
	}
	sm, sh := run("", false)
	t.Logf("steady:\n%s\n%s", sm, sh)
	for _, mode := range []string{"keys", "all"} {
		gm, gh := run(mode, true)
		if gm != sm || gh != sh {
			t.Errorf("mode %s\nmirror got:\n%s\nsteady:\n%s\nhistory got:\n%s\nsteady:\n%s", mode, gm, sm, gh, sh)
		}
	}
}

// Long string keys sharing a 20-character prefix, spread over many bronze
// files (their `_key` bounds truncated to 16 hex characters), late after
// a restart; then changed again by later batches and late again (served
// from the log), with a redelivery and a delete in between.
func TestPastReadLongKeysLateTwice(t *testing.T) {
	k := func(i int) string { return fmt.Sprintf("prefix-prefix-prefix-%03d", i) }
	row := func(i int, s string) string { return fmt.Sprintf(`{"order_id":%q,"status":%q,"note":"n"}`, k(i), s) }
	var batches [][]wev
	var clean []wev
	lsn := 100
	for b := 0; b < 6; b++ {
		var evs []wev
		for i := b; i < 12; i += 3 {
			lsn += 10
			op := "c"
			if b >= 3 {
				op = "u"
			}
			evs = append(evs, pgw(op, "null", row(i, fmt.Sprintf("s%d", lsn)), lsn))
		}
		batches = append(batches, evs)
		clean = append(clean, evs...)
	}
	// late changes of keys 4 and 9 (created in batches 1 and 0, updated in 4 and 3)
	l1 := []wev{pgw("u", "null", row(4, "late1"), 115), pgw("u", "null", row(9, "late1"), 112)}
	// later batch: key 4 changed, key 9 deleted, a redelivery of key 4's late change
	b7 := []wev{pgw("u", "null", row(4, "after"), 500), pgw("d", fmt.Sprintf(`{"order_id":%q}`, k(9)), "null", 510), pgw("u", "null", row(4, "late1"), 115)}
	l2 := []wev{pgw("u", "null", row(4, "late2"), 450), pgw("u", "null", row(9, "late2"), 505)}
	batches = append(batches, l1, b7, l2)
	all := append(append([]wev{}, clean...), l1...)
	all = append(all, pgw("u", "null", row(4, "after"), 500), pgw("d", fmt.Sprintf(`{"order_id":%q}`, k(9)), "null", 510))
	all = append(all, l2...)
	// the clean batch in source order
	slices.SortStableFunc(all, func(a, b wev) int { return a.lsn - b.lsn })
	opts := TableSpec{}
	pastReadRun(t, opts, batches, all, 6, false)
	pastReadRun(t, opts, batches, all, 6, true)
}

// A key loaded by a key-set read, then the state directory wiped (the
// state rebuilt, reason invalidated), then the key late again: it must be
// read from bronze again, not served from a log that lost its past.
func TestPastReadWipedAfterKeySetLoad(t *testing.T) {
	row := func(i int, s string) string { return fmt.Sprintf(`{"order_id":%d,"status":%q,"note":"n"}`, i, s) }
	b1 := []wev{pgw("c", "null", row(1, "a"), 100), pgw("c", "null", row(2, "a"), 110)}
	b2 := []wev{pgw("u", "null", row(1, "c"), 300), pgw("u", "null", row(2, "c"), 310)}
	l1 := []wev{pgw("u", "null", row(1, "b"), 200)}
	b4 := []wev{pgw("u", "null", row(1, "e"), 500)}
	l2 := []wev{pgw("u", "null", row(1, "d"), 400), pgw("u", "null", row(2, "b"), 210)}
	clean := newWrun(t, TableSpec{})
	clean.apply([]wev{b1[0], b1[1], l1[0], l2[1], b2[0], b2[1], l2[0], b4[0]}, false)
	wm, wh := clean.tables()
	for _, mode := range []string{"keys", "all"} {
		testPastRead = mode
		w := newWrun(t, TableSpec{})
		w.apply(b1, false)
		w.apply(b2, false)
		w.restart()
		w.apply(l1, false)
		w.apply(b4, false)
		if err := os.RemoveAll(w.a.StateDir); err != nil {
			t.Fatal(err)
		}
		w.apply(l2, false)
		testPastRead = ""
		if gm, gh := w.tables(); gm != wm || gh != wh {
			t.Errorf("mode %s (rebuilds %d)\nmirror got:\n%s\nwant:\n%s\nhistory got:\n%s\nwant:\n%s", mode, w.rebuil, gm, wm, gh, wh)
		}
	}
}
