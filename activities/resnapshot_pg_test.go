//go:build e2e

package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
	"github.com/lakemirror/lakemirror/internal/source"
	"github.com/lakemirror/lakemirror/internal/source/pgtest"
	"github.com/lakemirror/lakemirror/schemas"
)

// A direct re-snapshot taken while a transaction T is in progress on the
// source (real PostgreSQL): T changed keys 2 (deleted) and 3 (updated)
// before the snapshot's position P and commits after it (and inserted
// key 6); key 5 was deleted before with its event lost (a ghost row). The snapshot
// does not show T, so T's streamed events, applied after the load, must
// win over the re-snapshot's rows at (P, 0), although Debezium places
// them below P: the first transaction streamed after P has the previous
// commit as lastCommitLsn and its changes were written before P (the
// real-stack failure resnapshot-concurrent-change-lost). The mirror must
// hold T's values after the batch, after a redelivery, after a late
// change of the key woven from the worker's state log, and after one
// rebuilt from bronze by a restarted worker.
func TestResnapshotInFlightTransaction(t *testing.T) {
	pg := pgtest.Start(t)
	type fixture struct {
		*recFixture
		p      uint64           // the re-snapshot's position
		lost   schemas.Record   // a change of key 3 from before T, never applied (lost)
		txRecs []schemas.Record // T's events
		tLSN   uint64           // the WAL insert position just before T's changes
	}
	setup := func(t *testing.T) *fixture {
		ctx := context.Background()
		dsn, _, exec := sourceDB(t, pg, `CREATE TABLE public.orders (order_id int PRIMARY KEY, status text NOT NULL, qty int);
			INSERT INTO public.orders SELECT i, 'new', i * 10 FROM generate_series(1, 5) AS i`)
		f := &fixture{recFixture: newRecFixture(t, dsn, "public.orders", exec)}
		f.describe()
		f.load()
		f.lost = f.event("u", f.row(3, "lost", 30), f.pos()) // its event never arrives before the re-snapshot
		exec("DELETE FROM orders WHERE order_id = 5")        // event lost: key 5 is a ghost row for the re-snapshot

		// T: begun and written before the re-snapshot, committed after it
		tconn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tconn.Close(ctx) })
		tx, err := tconn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		lastCommit := f.pos().LSN // WAL written so far: the last commit is below it
		if err := tx.QueryRow(ctx, "SELECT pg_lsn_mi(pg_current_wal_insert_lsn(), '0/0')::bigint").Scan(&f.tLSN); err != nil {
			t.Fatal(err)
		}
		// T's changes are written at or after tLSN
		if _, err := tx.Exec(ctx, "UPDATE orders SET status = 'paid' WHERE order_id = 3; DELETE FROM orders WHERE order_id = 2; INSERT INTO orders VALUES (6, 'paid', 60)"); err != nil {
			t.Fatal(err)
		}
		// another transaction commits: the WAL written so far (the snapshot's
		// position P) passes T's changes
		exec("CREATE TABLE public.other (id int); INSERT INTO public.other VALUES (1)")
		var xid string
		if err := tx.QueryRow(ctx, "SELECT pg_current_xact_id()::text").Scan(&xid); err != nil {
			t.Fatal(err)
		}
		x, err := strconv.ParseUint(xid, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		res, err := f.a.LoadTable(f.ctx, LoadRequest{Spec: f.spec, LoadID: "resnapshot-1", Resnapshot: true, Position: lake.Offsets{0: 0}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Rows != 4 || res.Ghosts != 1 || res.LSN <= f.tLSN+1 || lastCommit > f.tLSN {
			t.Fatalf("re-snapshot %+v, T written at %d, last commit at %d", res, f.tLSN, lastCommit)
		}
		f.p = res.LSN
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		// T's events as Debezium streams them (T is the first transaction
		// committed after P): sequence [lastCommitLsn, lsn] both below P,
		// txId the 32-bit transaction id
		txID := x & 0xffffffff
		f.txRecs = []schemas.Record{
			f.txEvent("u", f.row(3, "paid", 30), lastCommit, f.tLSN, txID),
			f.txEvent("d", f.row(2, "new", 20), lastCommit, f.tLSN+1, txID),
			f.txEvent("c", f.row(6, "paid", 60), lastCommit, f.tLSN+2, txID),
		}
		if got := f.mirror(t); got != "1 new 10 | 2 new 20 | 3 new 30 | 4 new 40 | 5 deleted" {
			t.Fatalf("mirror after the re-snapshot: %s", got)
		}
		return f
	}
	const want = "1 new 10 | 2 deleted | 3 paid 30 | 4 new 40 | 5 deleted | 6 paid 60"
	t.Run("streamed after the load, then redelivered", func(t *testing.T) {
		f := setup(t)
		f.produce(f.txRecs...)
		if got := f.mirror(t); got != want {
			t.Fatalf("mirror after T's batch:\n%s\nwant\n%s", got, want)
		}
		if got, w := seqOfRecord(t, f.recFixture, 3), cdc.PostgresSeq(f.p, f.tLSN).Hex(); got != w {
			t.Fatalf("key 3 _seq %s, want %s (T's change lifted above the re-snapshot's rows)", got, w)
		}
		f.produce(f.txRecs...) // redelivered
		if got := f.mirror(t); got != want {
			t.Fatalf("mirror after the redelivery:\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("late change woven from the state log", func(t *testing.T) {
		f := setup(t)
		f.produce(f.txRecs...)
		if res := f.produce(f.lost); res.WovenKeys() != 1 { // older than everything the key has: the key is late
			t.Fatalf("woven keys %d, want 1 (%+v)", res.WovenKeys(), res)
		}
		if got := f.mirror(t); got != want {
			t.Fatalf("mirror after the late change:\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("late change rebuilt from bronze by a restarted worker", func(t *testing.T) {
		f := setup(t)
		f.produce(f.txRecs...)
		restarted := New(f.a.Catalog, f.a.Kafka) // its state is built from the tables: past changes come from bronze
		restarted.StateDir = t.TempDir()
		restarted.Sources = f.a.Sources
		f.a = restarted
		if res := f.produce(f.lost); res.History.Pending != 1 || res.WovenKeys() != 0 {
			t.Fatalf("late change: %+v, want key 3 pending", res)
		}
		if rb, err := f.a.RebuildKeys(f.ctx, RebuildRequest{Spec: f.spec}); err != nil || rb.Keys != 1 {
			t.Fatalf("rebuild %+v %v", rb, err)
		}
		if got := f.mirror(t); got != want {
			t.Fatalf("mirror after the rebuild:\n%s\nwant\n%s", got, want)
		}
	})
}

// txEvent is f.event with Debezium's position words of a streamed change
// (sequence [lastCommit, lsn], lsn) and its transaction id.
func (f *recFixture) txEvent(op string, row *cdc.Row, lastCommit, lsn, txID uint64) schemas.Record {
	f.t.Helper()
	r := f.event(op, row, source.Position{LSN: lsn})
	var m map[string]any
	if err := json.Unmarshal(r.Value, &m); err != nil {
		f.t.Fatal(err)
	}
	src := m["payload"].(map[string]any)["source"].(map[string]any)
	src["sequence"] = fmt.Sprintf(`["%d","%d"]`, lastCommit, lsn)
	src["lsn"] = lsn
	src["txId"] = txID
	v, err := json.Marshal(m)
	if err != nil {
		f.t.Fatal(err)
	}
	r.Value = v
	return r
}

// produce produces recs to the topic and applies them as one batch.
func (f *recFixture) produce(recs ...schemas.Record) ApplyResult {
	f.t.Helper()
	out := make([]schemas.Record, len(recs))
	for i, r := range recs {
		if err := f.a.Kafka.Produce(f.ctx, &kgo.Record{Topic: f.spec.Topic, Partition: 0, Key: r.Key, Value: r.Value}); err != nil {
			f.t.Fatal(err)
		}
		r.Offset = f.offset
		f.offset++
		out[i] = r
	}
	st, name, err := f.a.state(f.spec)
	if err != nil {
		f.t.Fatal(err)
	}
	f.seq++
	b := lake.Batch{ID: fmt.Sprintf("b%d", f.seq), Seq: f.seq, Topic: f.spec.Topic,
		Ranges: []lake.Range{{Partition: 0, From: f.applied, To: f.offset}}, EndOffsets: lake.Offsets{0: f.offset}}
	f.applied = f.offset
	st.mu.Lock()
	defer st.mu.Unlock()
	stage := ""
	res, _, err := f.a.applyRecords(f.ctx, st, name, f.spec, b, out, nil, "", &stage)
	if err != nil {
		f.t.Fatalf("batch %d (%s): %v", f.seq, stage, err)
	}
	return res
}

// mirror renders the mirror: "id status qty" per key in key order, or
// "id deleted".
func (f *recFixture) mirror(t *testing.T) string {
	t.Helper()
	type row struct {
		id   int64
		text string
	}
	var rows []row
	_, err := tableread.ScanMirrorRows(f.ctx, f.a.Catalog, f.name, func(m tableread.MirrorRow) error {
		id, _ := m.Row.Get("order_id")
		if m.Deleted {
			rows = append(rows, row{id.I, fmt.Sprintf("%d deleted", id.I)})
			return nil
		}
		st, _ := m.Row.Get("status")
		q, _ := m.Row.Get("qty")
		rows = append(rows, row{id.I, fmt.Sprintf("%d %s %d", id.I, st.S, q.I)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].id < rows[j].id })
	var out []string
	for _, r := range rows {
		out = append(out, r.text)
	}
	return strings.Join(out, " | ")
}
