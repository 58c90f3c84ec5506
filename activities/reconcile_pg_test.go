//go:build e2e

package activities

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/testsuite"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
	"github.com/lakemirror/lakemirror/internal/lake/validation"
	"github.com/lakemirror/lakemirror/internal/source/pgtest"
	"github.com/lakemirror/lakemirror/internal/validate"
)

// Reconciliation against a real PostgreSQL (the private server of
// pgtest): the mirror is loaded directly from the source table, then each
// subtest injects one fault and sees exactly its check fail, naming the
// key.
func TestReconcilePostgres(t *testing.T) {
	pg := pgtest.Start(t)
	setup := func(t *testing.T) *recFixture {
		dsn := pg.CreateDatabase(t)
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(context.Background()) })
		exec := func(sql string) {
			t.Helper()
			if _, err := conn.Exec(context.Background(), sql); err != nil {
				t.Fatalf("%v\n%s", err, sql)
			}
		}
		exec(`CREATE TABLE public.orders (order_id int PRIMARY KEY, status text NOT NULL, qty int);
			INSERT INTO public.orders SELECT i, 'new', i * 10 FROM generate_series(1, 5) AS i`)
		f := newRecFixture(t, dsn, "public.orders", exec)
		f.describe()
		f.load()
		return f
	}
	reconcileFaults(t, setup)
	t.Run("resumed from its heartbeat", func(t *testing.T) {
		f := setup(t)
		f.exec("UPDATE orders SET status = 'paid' WHERE order_id = 4") // its event is lost
		// an earlier attempt compared the range of keys 1 and 2, then died
		var env testsuite.WorkflowTestSuite
		aenv := env.NewTestActivityEnvironment()
		aenv.RegisterActivity(f.a)
		aenv.SetHeartbeatDetails(reconcileProgress{Chunks: 1, After: lake.KeyParts([]cdc.Value{cdc.Int(2)}),
			Scope: validate.ReconcileScope{SourceTable: "public.orders", Ranges: 1, SourceRows: 2}})
		v, err := aenv.ExecuteActivity(f.a.Reconcile, ReconcileRequest{Spec: f.spec, RunID: "resumed", Chunk: 2, Pause: -1, SettleFloor: -1,
			SettleCeiling: time.Minute, CatchUpTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		var res ReconcileResult
		if err := v.Get(&res); err != nil {
			t.Fatal(err)
		}
		by := map[string]validate.Result{}
		for _, c := range res.Checks {
			by[c.Check] = c
		}
		wantDiff(t, res, validate.KindChanged, 4, seqOfRecord(t, f, 4))
		onlyFailing(t, res, by, validate.CheckChanged, "key "+keyShown(4)+": "+res.Diffs[0].What())
		// ranges 3-4 and 5 read now; keys 1 and 2, not read this attempt,
		// re-read by key as ghost candidates (and found)
		sc := res.Scope
		if sc.Ranges != 3 || sc.SourceRows != 5 || sc.Rechecked != 3 || sc.DifferedRanges != 1 {
			t.Fatalf("scope %+v", sc)
		}
	})
	t.Run("after a direct re-snapshot", func(t *testing.T) {
		f := setup(t)
		f.exec("DELETE FROM orders WHERE order_id = 3; UPDATE orders SET status = 'paid' WHERE order_id = 2") // events lost
		res, err := f.a.LoadTable(f.ctx, LoadRequest{Spec: f.spec, LoadID: "resnapshot-1", Resnapshot: true, Position: lake.Offsets{0: 0}})
		if err != nil || res.Ghosts != 1 {
			t.Fatalf("re-snapshot: %+v %v", res, err)
		}
		// its ghost delete (key 3) has no bronze record; op-balance counts it
		rr, by := f.reconcile(false)
		onlyFailing(t, rr, by, "", "")
		if got := by[validate.CheckBalance].Observed; got != "5 creates − 1 deletes = 4; 4 live mirror rows; 0 keys disagree" {
			t.Fatalf("balance %q", got)
		}
	})
}

// reconcileFaults are the fault-injection cases, for any source whose
// table shop.orders (order_id, status, qty) holds keys 1..5 ('new', id ×
// 10), loaded into the mirror.
func reconcileFaults(t *testing.T, setup func(*testing.T) *recFixture) {
	t.Run("clean", func(t *testing.T) {
		f := setup(t)
		res, by := f.reconcile(false)
		onlyFailing(t, res, by, "", "")
		if got := checkNames(res); got != "reconcile-ghost,reconcile-missing,reconcile-changed,op-balance" {
			t.Fatalf("checks %s", got)
		}
		sc := res.Scope
		if sc.Ranges != 3 || sc.DifferedRanges != 0 || sc.SourceRows != 5 || sc.MirrorLive != 5 || sc.Rechecked != 0 || sc.Unsettled != 0 {
			t.Fatalf("scope %+v", sc)
		}
		if got := by[validate.CheckBalance].Observed; got != "5 creates − 0 deletes = 5; 5 live mirror rows; 0 keys disagree" {
			t.Fatalf("balance observed %q", got)
		}
		if res.Settling != 0 || res.MeasuredP99 != 0 { // no stream record yet: the floor (none in the test)
			t.Fatalf("settling %s, p99 %s", res.Settling, res.MeasuredP99)
		}
		tbl, err := lake.LoadTable(f.ctx, f.a.Catalog, f.name.Validation())
		if err != nil || tbl == nil {
			t.Fatalf("validation table: %v %v", tbl, err)
		}
		rows, _, err := lake.ReadRows(f.ctx, tbl, []string{validation.ValCheck})
		if err != nil || len(rows) != 4 {
			t.Fatalf("validation rows: %d, %v", len(rows), err)
		}
	})
	t.Run("ghost row", func(t *testing.T) {
		f := setup(t)
		// a create of a row the table never had reaches the mirror (say,
		// another table's change routed to this topic)
		rec := f.change("CREATE TABLE other (x int); INSERT INTO other VALUES (1)", "c", f.row(99, "phantom", 1))
		f.apply(rec)
		res, by := f.reconcile(false)
		wantDiff(t, res, validate.KindGhost, 99, seqOfRecord(t, f, 99))
		onlyFailing(t, res, by, validate.CheckGhost, "key "+keyShown(99)+": "+res.Diffs[0].What())
		if res.Scope.Rechecked != 1 || res.Scope.MirrorLive != 6 {
			t.Fatalf("scope %+v", res.Scope)
		}
		if res.MeasuredP99 <= 0 || res.Settling != res.MeasuredP99 {
			t.Fatalf("settling %s from p99 %s: want the measured lateness of the one stream record", res.Settling, res.MeasuredP99)
		}
	})
	t.Run("lost delete", func(t *testing.T) {
		f := setup(t)
		f.exec("DELETE FROM orders WHERE order_id = 3") // its event is lost
		res, by := f.reconcile(false)
		wantDiff(t, res, validate.KindGhost, 3, seqOfRecord(t, f, 3))
		onlyFailing(t, res, by, validate.CheckGhost, "key "+keyShown(3)+": "+res.Diffs[0].What())
	})
	t.Run("missing row", func(t *testing.T) {
		f := setup(t)
		f.exec("INSERT INTO orders VALUES (6, 'new', 60)") // its event is lost
		res, by := f.reconcile(false)
		wantDiff(t, res, validate.KindMissing, 6, "")
		onlyFailing(t, res, by, validate.CheckMissing, "key "+keyShown(6)+": "+res.Diffs[0].What())
		if res.Scope.DifferedRanges != 1 || res.Scope.SourceRows != 6 {
			t.Fatalf("scope %+v", res.Scope)
		}
	})
	t.Run("changed value", func(t *testing.T) {
		f := setup(t)
		f.exec("UPDATE orders SET status = 'paid' WHERE order_id = 2") // its event is lost
		res, by := f.reconcile(false)
		wantDiff(t, res, validate.KindChanged, 2, seqOfRecord(t, f, 2))
		onlyFailing(t, res, by, validate.CheckChanged, "key "+keyShown(2)+": "+res.Diffs[0].What())
	})
	t.Run("changed after the watermark", func(t *testing.T) {
		f := setup(t)
		// committed and sent, not applied yet when the source is read: the
		// mirror catches up while reconciliation waits
		rec := f.change("UPDATE orders SET status = 'late' WHERE order_id = 2", "u", f.row(2, "late", 20))
		ran := ""
		reconcileHook = func(stage string) {
			ran += stage + ";"
			if stage == "reread" {
				f.apply(rec)
			}
		}
		t.Cleanup(func() { reconcileHook = nil })
		res, by := f.reconcile(false)
		onlyFailing(t, res, by, "", "")
		if ran != "ranges;reread;" || res.Scope.Rechecked != 1 || res.Scope.Unsettled != 0 || res.Scope.DifferedRanges != 1 {
			t.Fatalf("hooks %q, scope %+v", ran, res.Scope)
		}
	})
	t.Run("changed again after the re-read", func(t *testing.T) {
		f := setup(t)
		rec := f.change("UPDATE orders SET status = 'late' WHERE order_id = 2", "u", f.row(2, "late", 20))
		reconcileHook = func(stage string) {
			if stage == "reread" {
				f.apply(rec)
				f.apply(f.change("UPDATE orders SET status = 'later' WHERE order_id = 2", "u", f.row(2, "later", 20)))
			}
		}
		t.Cleanup(func() { reconcileHook = nil })
		res, by := f.reconcile(false)
		onlyFailing(t, res, by, "", "")
		if res.Scope.Rechecked != 1 || res.Scope.Unsettled != 1 {
			t.Fatalf("scope %+v", res.Scope)
		}
	})
	t.Run("op balance", func(t *testing.T) {
		f := setup(t)
		// source and mirror agree that key 4 is gone, but the mirror's
		// delete was written without bronze (another writer)
		f.exec("DELETE FROM orders WHERE order_id = 4")
		k, err := cdc.EncodeKey(nil, cdc.Int(4))
		if err != nil {
			t.Fatal(err)
		}
		st, name, err := f.a.state(f.spec)
		if err != nil {
			t.Fatal(err)
		}
		mirror, _ := st.writers(f.a, name)
		pos := f.pos()
		b := lake.Batch{ID: "shop.orders#other-writer", Load: &lake.LoadCursor{ID: "other-writer", Done: true}}
		if _, _, err := mirror.Apply(f.ctx, b, []*cdc.Event{{Op: cdc.OpTruncate, Seq: pos.Seq, Key: cdc.Key(k)}}); err != nil {
			t.Fatal(err)
		}
		res, by := f.reconcile(false)
		onlyFailing(t, res, by, validate.CheckBalance, "key "+keyShown(4)+": bronze's changes leave it live, the mirror does not hold it live")
		if got := by[validate.CheckBalance].Observed; got != "5 creates − 0 deletes = 5; 4 live mirror rows; 1 keys disagree" {
			t.Fatalf("balance observed %q", got)
		}
	})
	t.Run("repair", func(t *testing.T) {
		f := setup(t)
		f.apply(f.change("CREATE TABLE other (x int); INSERT INTO other VALUES (1)", "c", f.row(99, "phantom", 1)))
		f.exec(`DELETE FROM orders WHERE order_id = 3;`)
		f.exec(`INSERT INTO orders VALUES (6, 'new', 60)`)
		f.exec(`UPDATE orders SET status = 'paid' WHERE order_id = 2`)
		res, by := f.reconcile(true)
		if res.Failed != 3 || by[validate.CheckGhost].Total != 2 || by[validate.CheckMissing].Total != 1 || by[validate.CheckChanged].Total != 1 ||
			by[validate.CheckBalance].Verdict != validate.Pass {
			t.Fatalf("before the repair: %d failed: %+v", res.Failed, res.Checks)
		}
		want := map[string]int{validate.KindGhost: 2, validate.KindMissing: 1, validate.KindChanged: 1}
		if !reflect.DeepEqual(res.Repaired, want) || by[CheckRepair].Total != 4 {
			t.Fatalf("repaired %v (%+v), want %v", res.Repaired, by[CheckRepair], want)
		}
		wantKeys := fmt.Sprintf("key %s: repaired (%s)\nkey %s: repaired (%s)\nkey %s: repaired (%s)\nkey %s: repaired (%s)",
			keyShown(2), validate.KindChanged, keyShown(3), validate.KindGhost, keyShown(6), validate.KindMissing, keyShown(99), validate.KindGhost)
		if got := by[CheckRepair].Details(); got != wantKeys {
			t.Fatalf("repair details:\n%s\nwant:\n%s", got, wantKeys)
		}
		res, by = f.reconcile(false)
		onlyFailing(t, res, by, "", "")
		if got := by[validate.CheckBalance].Observed; got != "7 creates − 2 deletes = 5; 5 live mirror rows; 0 keys disagree" {
			t.Fatalf("balance after the repair %q", got)
		}
		// a change streamed after the repair's position still wins
		f.apply(f.change("UPDATE orders SET status = 'shipped' WHERE order_id = 2", "u", f.row(2, "shipped", 20)))
		res, by = f.reconcile(false)
		onlyFailing(t, res, by, "", "")
	})
}

// wantDiff asserts that the run confirmed exactly one difference: of
// kind for key id, the mirror row at mirrorSeq ("" none), read at a
// position above it.
func wantDiff(t *testing.T, res ReconcileResult, kind string, id int64, mirrorSeq string) {
	t.Helper()
	if len(res.Diffs) != 1 {
		t.Fatalf("diffs %+v, want one", res.Diffs)
	}
	d := res.Diffs[0]
	if d.Kind != kind || d.Key != keyOf(id) || d.MirrorSeq != mirrorSeq || d.ReadAt <= d.MirrorSeq {
		t.Fatalf("diff %+v, want %s of key %s with mirror _seq %q", d, kind, keyOf(id), mirrorSeq)
	}
}

// seqOfRecord is the mirror's `_seq` of key id (hex).
func seqOfRecord(t *testing.T, f *recFixture, id int64) string {
	t.Helper()
	seq := ""
	_, err := tableread.ScanMirrorRows(f.ctx, f.a.Catalog, f.name, func(m tableread.MirrorRow) error {
		if v, _ := m.Row.Get("order_id"); v.I == id {
			seq = m.Seq
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return seq
}
