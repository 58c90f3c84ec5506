//go:build e2e

package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakemirror/lakemirror/internal/lake/tableread"
	"github.com/lakemirror/lakemirror/internal/source"
)

// A repair does not overwrite a change in flight at its re-read: a
// transaction T writes its update of key 2 before the re-read's position
// P and commits after it, with no other commit streamed between, so
// Debezium's [lastCommitLsn, lsn] puts the change below the repair's
// (P, 0). The change is applied before the final mirror read: the key's
// mirror row was ingested after a re-read whose snapshot had
// transactions in progress, so it counts as unsettled and is not
// repaired; the mirror keeps the source's value and the next run is
// clean. (A change of such a transaction streamed after the repair is
// lifted above it: the repair records its reads' snapshots like a
// re-snapshot, cdc.PostgresSnapshot.Lift.) (Found by a breaker run: before, the
// mirror kept the repaired 'paid' while the source held 'shipped'.)
func TestReconcileRepairKeepsChangeInFlight(t *testing.T) {
	ctx := context.Background()
	f, dsn, conn := loadedOrders(t)
	conn2, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn2.Close(ctx) })
	walInsert := func() uint64 {
		t.Helper()
		var text string
		if err := conn.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&text); err != nil {
			t.Fatal(err)
		}
		l, err := source.ParseLSN(text)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}

	f.exec("UPDATE orders SET status = 'paid' WHERE order_id = 2") // its event is lost: a real difference
	var tx pgx.Tx
	var lsn, lastCommit, txid uint64
	reconcileHook = func(stage string) {
		switch stage {
		case "ranges": // T writes its update now, before the re-read
			if tx, err = conn2.Begin(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "UPDATE orders SET status = 'shipped' WHERE order_id = 2"); err != nil {
				t.Fatal(err)
			}
			if err := tx.QueryRow(ctx, "SELECT txid_current()").Scan(&txid); err != nil {
				t.Fatal(err)
			}
			lsn = walInsert() // at or above the update's record
			f.exec("CREATE TABLE IF NOT EXISTS other_activity (x int); INSERT INTO other_activity VALUES (1)")
			lastCommit = walInsert() // the last commit streamed before T's
			f.exec("SELECT pg_switch_wal()")
		case "reread": // T commits after the re-read; the connector streams it, the mirror applies it
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			r := f.event("u", f.row(2, "shipped", 20), source.Position{LSN: lsn})
			r.Value = debeziumSequence(t, r.Value, lastCommit, lsn, txid%(1<<32))
			if err := f.a.Kafka.Produce(ctx, &kgo.Record{Topic: f.spec.Topic, Partition: 0, Key: r.Key, Value: r.Value}); err != nil {
				t.Fatal(err)
			}
			r.Offset = f.offset
			f.offset++
			f.apply(r)
		}
	}
	t.Cleanup(func() { reconcileHook = nil })
	f.reconcile(true)
	reconcileHook = nil

	status := func() string {
		var got string
		if _, err := tableread.ScanMirrorRows(ctx, f.a.Catalog, f.name, func(m tableread.MirrorRow) error {
			if v, _ := m.Row.Get("order_id"); v.I == 2 && !m.Deleted {
				s, _ := m.Row.Get("status")
				got = s.S
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := status(); got != "shipped" {
		t.Fatalf("after the repair key 2 is %q in the mirror, want the source's %q", got, "shipped")
	}
	res, _ := f.reconcile(false)
	for _, c := range res.Checks {
		if c.Verdict != "pass" {
			t.Errorf("the run after the repair: %s %s: %s", c.Check, c.Verdict, c.Observed)
		}
	}
}

// debeziumSequence sets an event's source.sequence to [lastCommit, lsn],
// its lsn and its txId, as Debezium's PostgreSQL connector writes them.
func debeziumSequence(t *testing.T, value []byte, lastCommit, lsn, txid uint64) []byte {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(value))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	src := m["payload"].(map[string]any)["source"].(map[string]any)
	src["sequence"] = fmt.Sprintf(`["%d","%d"]`, lastCommit, lsn)
	src["lsn"], src["txId"] = lsn, txid
	v, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A repair run by a worker that does not own the table (the
// ReconcileWorkflow's activity is not routed) builds the table's state
// for the repair and drops it afterwards, instead of keeping a second copy
// of the table's state (log file and index) for good. (A breaker's case.)
func TestReconcileRepairOnNonOwnerDropsState(t *testing.T) {
	f, _, _ := loadedOrders(t)
	b := New(f.a.Catalog, f.a.Kafka)
	b.StateDir = t.TempDir()
	b.Sources = f.a.Sources
	f.exec("UPDATE orders SET status = 'paid' WHERE order_id = 2") // its event is lost
	res, err := b.Reconcile(f.ctx, ReconcileRequest{Spec: f.spec, RunID: "on-b", Chunk: 2, Pause: -1, SettleFloor: -1, Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(res.Repaired); got != "map[reconcile-changed:1]" {
		t.Fatalf("repaired %s, want map[reconcile-changed:1]", got)
	}
	b.mu.Lock()
	n := len(b.tables)
	b.mu.Unlock()
	if n != 0 {
		t.Fatalf("worker B keeps state for %d tables after a repair of a table it does not own", n)
	}
}

// loadedOrders starts the private PostgreSQL with a new database holding
// public.orders (keys 1 to 5: 'new', qty 10·key) and loads the mirror
// from it directly; it returns the fixture, the database's DSN and a
// connection to it.
func loadedOrders(t *testing.T) (*recFixture, string, *pgx.Conn) {
	dsn, conn, exec := sourceDB(t, nil, `CREATE TABLE public.orders (order_id int PRIMARY KEY, status text NOT NULL, qty int);
		INSERT INTO public.orders SELECT i, 'new', i * 10 FROM generate_series(1, 5) AS i`)
	f := newRecFixture(t, dsn, "public.orders", exec)
	f.describe()
	f.load()
	return f, dsn, conn
}
