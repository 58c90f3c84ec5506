package activities

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
)

func ghostBase() []wev {
	return []wev{pgw("c", "null", `{"order_id":1,"status":"a","note":"n1"}`, 100), pgw("c", "null", `{"order_id":2,"status":"a","note":"n1"}`, 110),
		pgw("c", "null", `{"order_id":3,"status":"a","note":"n1"}`, 120)}
}

// ghostTables renders mirror and history with their times (`_source_ts`;
// `_valid_from`, `_valid_to`).
func (w *wrun) ghostTables() (string, string) {
	name := lake.TableName{Namespace: "shop", Name: "orders"}
	m := tableText(w.t, w.cat, name, false, "order_id", "status", "note", lake.ColSeq, lake.ColDeleted, lakecat.ColSourceTs)
	h := ""
	if !w.spec.WithoutHistory {
		h = tableText(w.t, w.cat, name, true, "order_id", "status", "note", lake.ColSeq, lake.ColValidToSeq, lake.ColIsCurrent, lakecat.ColValidFrom, lakecat.ColValidTo)
	}
	return m, h
}

// A re-snapshot's ghost batch fails after one of its commits and is
// retried (LoadTable with a Done cursor runs deleteGhosts again), later,
// on the same or a restarted worker (found by a breaker's run,
// 2026-12-03: after a failure past the mirror commit the retry found no
// live ghost and left the history version open; after one past the
// bronze commit, mirror and history took the retry's time while bronze
// kept the first attempt's, so a later rebuild from bronze changed
// them). The retry applies what bronze holds: key 2 ends deleted at the
// re-snapshot's position with its version closed there, and a late update
// of key 2 rebuilt from bronze on a restarted worker changes no time.
func TestGhostDeleteRetried(t *testing.T) {
	for _, opts := range []TableSpec{{}, {WithoutHistory: true}} {
		for _, fail := range []string{"bronze", "mirror", "history"} {
			if fail == "history" && opts.WithoutHistory {
				continue
			}
			for _, restart := range []bool{false, true} {
				tag := fmt.Sprintf("%s fail after %s restart %v", opts.Tables(), fail, restart)
				w := newWrun(t, opts)
				w.apply(ghostBase(), false)
				failed := false
				w.a.AfterCommit = func(_ context.Context, b lake.Batch, table string) error {
					if table == fail && !failed && strings.Contains(b.ID, ".ghosts.") {
						failed = true
						return fmt.Errorf("injected failure after the %s commit", table)
					}
					return nil
				}
				if _, err := w.ghostsAs("L1", 1000, 1, 3); err == nil || !failed {
					t.Fatalf("%s: the first attempt did not fail (%v)", tag, err)
				}
				w.a.AfterCommit = nil
				time.Sleep(5 * time.Millisecond) // the retry's clock is later
				if restart {
					w.restart()
				}
				if n, err := w.ghostsAs("L1", 1000, 1, 3); err != nil || n != 1 {
					t.Fatalf("%s: retry deleted %d ghosts (%v), want 1", tag, n, err)
				}
				m, h := w.ghostTables()
				row := keyLine(m, "2")
				if !strings.HasPrefix(row, "2 a n1 00000000000003e80000000000000000 true ") {
					t.Fatalf("%s: key 2 is not deleted at the re-snapshot's position:\n%s", tag, m)
				}
				ghostTs := row[strings.LastIndex(row, " ")+1:]
				closed := "2 a n1 000000000000006e000000000000006e 00000000000003e80000000000000000 false 2026-01-01T09:00:00.110000Z " + ghostTs
				if !opts.WithoutHistory && keyLine(h, "2") != closed {
					t.Errorf("%s: key 2's version is not closed at the ghost delete:\n%s\nwant %s", tag, h, closed)
				}
				// a late update of key 2 below P, rebuilt from bronze on a
				// restarted worker: the ghost delete's time stays
				w.restart()
				w.apply([]wev{pgw("u", "null", `{"order_id":3,"status":"b","note":"n2"}`, 1100)}, false)
				w.apply([]wev{pgw("u", "null", `{"order_id":2,"status":"z","note":"n9"}`, 115)}, false)
				m2, h2 := w.ghostTables()
				if got, want := keyLine(m2, "2"), "2 z n9 00000000000003e80000000000000000 true "+ghostTs; got != want {
					t.Errorf("%s: key 2 after the late update: %s, want %s", tag, got, want)
				}
				want := "2 a n1 000000000000006e000000000000006e 00000000000000730000000000000073 false 2026-01-01T09:00:00.110000Z 2026-01-01T09:00:00.115000Z\n" +
					"2 z n9 00000000000000730000000000000073 00000000000003e80000000000000000 false 2026-01-01T09:00:00.115000Z " + ghostTs
				if got := keyLines(h2, "2"); !opts.WithoutHistory && got != want {
					t.Errorf("%s: key 2's history after the late update:\n%s\nwant\n%s", tag, got, want)
				}
			}
		}
	}
}

// keyLines returns the lines of a tableText rendering whose first field
// is key, joined; keyLine the first of them.
func keyLines(text, key string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, key+" ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func keyLine(text, key string) string {
	l, _, _ := strings.Cut(keyLines(text, key), "\n")
	return l
}

// A ghost key whose delete below the re-snapshot's position arrives late
// keeps that delete's position, as in source order (where the re-snapshot
// finds the key deleted and deletes nothing), on a steady and on a
// restarted worker (found by a breaker's run, 2026-12-03).
func TestGhostThenLateDelete(t *testing.T) {
	for _, restart := range []bool{false, true} {
		w := newWrun(t, TableSpec{})
		w.apply(ghostBase(), false)
		if n := w.ghosts(1000, 1, 3); n != 1 {
			t.Fatalf("ghosts %d, want 1", n)
		}
		if restart {
			w.restart()
		}
		w.apply([]wev{pgw("d", `{"order_id":2,"status":"a","note":"n1"}`, "null", 130)}, false)
		m, h := w.tables()
		if !strings.Contains("\n"+m+"\n", "\n2 a n1 00000000000000820000000000000082 true\n") {
			t.Errorf("restart %v: key 2 is not deleted at the late delete's position:\n%s", restart, m)
		}
		if !strings.Contains("\n"+h+"\n", "\n2 a n1 000000000000006e000000000000006e 00000000000000820000000000000082 false\n") {
			t.Errorf("restart %v: key 2's version is not closed by the late delete:\n%s", restart, h)
		}
	}
}

// Ghost deletes go in chunks; an attempt that fails after storing its
// second chunk in bronze (before the mirror commit) is retried: the retry
// applies both stored chunks again (the first one is committed and left
// alone) and renders the rest, ending where an attempt without the
// failure ends.
func TestGhostDeleteChunksRetried(t *testing.T) {
	defer func(n int) { ghostChunk = n }(ghostChunk)
	ghostChunk = 2
	var evs []wev
	for k := 1; k <= 6; k++ {
		evs = append(evs, pgw("c", "null", fmt.Sprintf(`{"order_id":%d,"status":"a","note":"n1"}`, k), 100+k))
	}
	clean := newWrun(t, TableSpec{})
	clean.apply(evs, false)
	if n := clean.ghosts(1000, 1); n != 5 {
		t.Fatalf("ghosts %d, want 5", n)
	}
	wm, wh := clean.tables()

	w := newWrun(t, TableSpec{})
	w.apply(evs, false)
	failed := false
	w.a.AfterCommit = func(_ context.Context, b lake.Batch, table string) error {
		if table == "bronze" && !failed && strings.HasSuffix(b.ID, ".ghosts.2") {
			failed = true
			return fmt.Errorf("injected failure after the bronze commit of %s", b.ID)
		}
		return nil
	}
	if _, err := w.ghostsAs("L1", 1000, 1); err == nil || !failed {
		t.Fatalf("the first attempt did not fail (%v)", err)
	}
	w.a.AfterCommit = nil
	w.restart()
	if n, err := w.ghostsAs("L1", 1000, 1); err != nil || n != 5 {
		t.Fatalf("retry: %d ghosts (%v), want 5", n, err)
	}
	if gm, gh := w.tables(); gm != wm || gh != wh {
		t.Errorf("after the retry:\n%s\n%s\nwant:\n%s\n%s", gm, gh, wm, wh)
	}
	recs, keys, err := w.a.storedGhosts(context.Background(), lake.TableName{Namespace: "shop", Name: "orders"}, ghostTopic(w.spec.Topic, "L1", 1000), "shop.orders#L1@1000.ghosts.")
	if err != nil {
		t.Fatal(err)
	}
	var offsets []int64
	for _, r := range recs {
		offsets = append(offsets, r.Offset)
	}
	if fmt.Sprint(offsets) != "[0 1 2 3 4]" || len(keys) != 5 {
		t.Errorf("bronze holds ghost records at offsets %v of %d keys, want [0 1 2 3 4] of 5", offsets, len(keys))
	}
}
