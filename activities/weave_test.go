package activities

// A breaker's tests of the late path woven in the batch (internal/lake
// weave.go): hand-made streams and randomized ones through the apply and
// rebuild code, a steady worker against one restarted before every batch
// (the RebuildKeys path) and one clean pass.

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
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
	t      testing.TB
	cat    catalog.Catalog
	spec   TableSpec
	a      *Activities
	offset int64
	seq    int64
	woven  int
	rebuil int
	moved  int // keys moved onto a live key (MirrorResult.KeysMovedOntoLive)
	// decision: an operator's schema decision for the next batch applied
	// (lake.DecisionEvolve, DecisionSkip); apply clears it
	decision string
}

func newWrun(t testing.TB, opts TableSpec) *wrun {
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
	w.moved += res.Mirror.KeysMovedOntoLive
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
	for _, opts := range []TableSpec{{}, {WithoutHistory: true}, {WithoutBronze: true}, {WithoutBronze: true, WithoutHistory: true}} {
		clean := newWrun(t, opts)
		clean.apply([]wev{c1, trunc, c2}, false)
		wm, wh := clean.tables()
		if !opts.WithoutHistory && !strings.Contains(wh, "1 a n1 000000000000006e000000000000006e 00000000000000780000000000000078 false") {
			t.Fatalf("in order: key 1's version does not close at the truncate:\n%s", wh)
		}
		for _, restart := range []bool{false, true} {
			w := newWrun(t, opts)
			w.apply([]wev{trunc}, false)
			if want := ""; opts.WithoutBronze { // no bronze to record it: the namespace keeps it until the mirror exists
				want = `[{"seq":"00000000000000780000000000000078","ts":1767258000120000}]` // source.ts_ms 1767258000120
				if got := w.pendingTruncates(); got != want {
					t.Errorf("%v: truncates kept on the namespace %q, want %q", opts.Tables(), got, want)
				}
			}
			w.apply([]wev{c2}, false)
			if got := w.pendingTruncates(); got != "" {
				t.Errorf("%v: truncates still kept on the namespace once the mirror exists: %q", opts.Tables(), got)
			}
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

// pendingTruncates is the namespace property that keeps the table's
// truncates before its mirror exists (lake.PropPendingTruncatesPrefix),
// "" when there is none.
func (w *wrun) pendingTruncates() string {
	w.t.Helper()
	name, err := lake.ParseTableName(w.spec.Table)
	if err != nil {
		w.t.Fatal(err)
	}
	props, err := w.a.Catalog.LoadNamespaceProperties(context.Background(), catalog.ToIdentifier(name.Namespace))
	if err != nil {
		w.t.Fatal(err)
	}
	return props[lake.PropPendingTruncatesPrefix+name.Name]
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

// TestPastReadKeySetThenAll: a restarted worker reads a late key's past
// changes from bronze for that key alone; once such reads have cost four
// times bronze's rows, the next late key loads every bronze record, and
// the tables end as in source order either way.
func TestPastReadKeySetThenAll(t *testing.T) {
	row := func(k int, s string) string { return fmt.Sprintf(`{"order_id":%d,"status":%q,"note":"n"}`, k, s) }
	var creates, updates, late []wev
	for k := 1; k <= 40; k++ {
		creates = append(creates, pgw("c", "null", row(k, "a"), 100+10*k))
		updates = append(updates, pgw("u", "null", row(k, "c"), 1000+10*k))
	}
	for i, k := range []int{3, 5, 7, 9, 11} {
		late = append(late, pgw("u", "null", row(k, "b"), 500+i))
	}
	clean := newWrun(t, TableSpec{})
	clean.apply(append(append(slices.Clone(creates), late...), updates...), false)
	wm, wh := clean.tables()

	w := newWrun(t, TableSpec{})
	w.apply(creates, false) // bronze file 1: 40 rows
	w.apply(updates, false) // bronze file 2: 40 rows
	w.restart()             // the local state is built from the tables
	state := func() *tablestate.State {
		st, name, err := w.a.state(w.spec)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := st.writers(w.a, name)
		return m.State()
	}
	// each late key alone: files 1 and 2 read whole (80 rows), the late
	// files' `_key` columns (81 to 84 values with files 1 and 2, an eighth
	// each) and its own file whole: 91 each; the fifth key finds 364 at or
	// above 4 x 84 bronze rows and loads them all
	var got []string
	for _, e := range late {
		w.apply([]wev{e}, false)
		keys, cost := state().KeyLoads()
		got = append(got, fmt.Sprintf("%d/%d/%v", keys, cost, state().EventsComplete()))
	}
	if want := "[1/91/false 2/182/false 3/273/false 4/364/false 0/364/true]"; fmt.Sprint(got) != want {
		t.Errorf("keys loaded/cost/complete after each late key: %v, want %s", got, want)
	}
	if gm, gh := w.tables(); gm != wm || gh != wh {
		t.Errorf("rebuilds %d\nmirror got:\n%s\nwant:\n%s\nhistory got:\n%s\nwant:\n%s", w.rebuil, gm, wm, gh, wh)
	}
	if w.rebuil != 5 {
		t.Errorf("%d rebuilds, want 5", w.rebuil)
	}
}

// A worker killed between a batch's mirror and history commits (the
// retry runs on a new worker: no local state) gives the history the
// batch's versions in order, as a clean run does: the mirror's commit
// lists the keys it found late or redelivered (none here), so the retry
// knows every other key's changes follow the history's versions. Before,
// the retry sent every key of the batch to the late-key rebuild, which a
// table without bronze cannot run after a restart: the batch's versions
// were missing from its history (counted as unwoven). Keys the mirror
// found late go to the rebuild as before (with bronze: exact).
func TestHistoryAfterMirrorCrash(t *testing.T) {
	first := []wev{pgw("c", "null", `{"order_id":1,"status":"a","note":"n1"}`, 100), pgw("c", "null", `{"order_id":2,"status":"a","note":"n1"}`, 110)}
	crashed := []wev{pgw("u", "null", `{"order_id":1,"status":"b","note":`+toast+`}`, 200), pgw("d", `{"order_id":2}`, "null", 210),
		pgw("c", "null", `{"order_id":3,"status":"a","note":"n3"}`, 220), pgw("u", "null", `{"order_id":1,"status":"c","note":"n4"}`, 230)}
	last := []wev{pgw("u", "null", `{"order_id":3,"status":"z","note":"q"}`, 400)}
	for _, lateToo := range []bool{false, true} {
		for _, opts := range []TableSpec{{}, {WithoutBronze: true}} {
			if lateToo && opts.WithoutBronze {
				continue // a late key without bronze after a restart: docs/design.md, Known gaps
			}
			batch := slices.Clone(crashed)
			if lateToo { // a change of key 1 below its stored position
				batch = append(batch, pgw("u", "null", `{"order_id":2,"status":"late","note":"n0"}`, 105))
			}
			w := newWrun(t, opts)
			w.apply(first, false)
			w.a.AfterCommit = func(_ context.Context, b lake.Batch, table string) error {
				if table == "mirror" {
					return fmt.Errorf("simulated crash after the mirror commit")
				}
				return nil
			}
			if _, err := w.apply(batch, true); err == nil {
				t.Fatal("no simulated crash")
			}
			w.restart()
			res, err := w.apply(batch, false)
			if err != nil {
				t.Fatal(err)
			}
			// key 1: its version closed at 200 (rewritten), versions at
			// 200 and 230; key 2: closed at 210; key 3: opened
			wantRows, wantRebuilds := 5, 0
			if lateToo {
				wantRows, wantRebuilds = 4, 1 // key 2 rebuilt from bronze
			}
			if res.History.Unwoven != 0 || res.History.RowsWritten != wantRows || w.rebuil != wantRebuilds {
				t.Errorf("%v late %v: retried batch: history rows %d unwoven %d, rebuilds %d; want %d, 0, %d",
					opts.Tables(), lateToo, res.History.RowsWritten, res.History.Unwoven, w.rebuil, wantRows, wantRebuilds)
			}
			w.apply(last, false)
			gm, gh := w.tables()
			clean := newWrun(t, opts)
			clean.apply(first, false)
			clean.apply(batch, false)
			clean.apply(last, false)
			wm, wh := clean.tables()
			if gm != wm || gh != wh {
				t.Errorf("%v late %v:\nmirror got:\n%s\nwant:\n%s\nhistory got:\n%s\nwant:\n%s", opts.Tables(), lateToo, gm, wm, gh, wh)
			}
		}
	}
}
