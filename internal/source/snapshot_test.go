//go:build e2e

package source

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// TestSnapshotConsistentUnderWrites: while Snapshot reads, other
// connections insert, update and delete rows (some commits are forced
// between chunks); Snapshot returns exactly the table as of its start.
func TestSnapshotConsistentUnderWrites(t *testing.T) {
	db := newDB(t)
	ctx := ctxT(t)
	const n = 3000
	db.exec(t, fmt.Sprintf(`
		CREATE TABLE snap (id int PRIMARY KEY, v int NOT NULL, pad text);
		INSERT INTO snap SELECT g, g, repeat('x', g %% 50) FROM generate_series(1, %d) g;`, n))
	info, err := db.src.Describe(ctx, "public", "snap", nil)
	if err != nil {
		t.Fatal(err)
	}
	before, err := db.src.CurrentLSN(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// A background writer on its own connection, committing small
	// transactions as fast as it can once the snapshot has begun (its
	// first chunk is read inside the snapshot; a commit before that would
	// rightly be in the snapshot).
	wconn, err := pgx.Connect(ctx, db.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer wconn.Close(context.Background())
	stop, begun := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	var commits int
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(1, 2))
		select {
		case <-begun:
		case <-stop:
			return
		}
		for next := 100_000; ; next++ {
			select {
			case <-stop:
				return
			default:
			}
			err := pgx.BeginFunc(ctx, wconn, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, `UPDATE snap SET v = v + 1000000 WHERE id = $1`, 1+rng.IntN(n)); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, `DELETE FROM snap WHERE id = $1`, 1+rng.IntN(n)); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, `INSERT INTO snap VALUES ($1, -1, 'concurrent')`, next)
				return err
			})
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "40P01" {
				continue // deadlocked with the sweep between chunks, the test's other writer: PostgreSQL rolled it back
			}
			if err != nil {
				t.Errorf("writer: %v", err)
				return
			}
			commits++
		}
	}()

	var got []*cdc.Row
	chunks := 0
	lsn, err := db.src.Snapshot(ctx, info, 100, func(c Chunk) error {
		chunks++
		if chunks == 1 {
			close(begun)
		}
		got = append(got, c.Rows...)
		if chunks%5 == 1 { // commit sweeping changes between chunks
			_, err := db.conn.Exec(ctx, fmt.Sprintf(`
				DELETE FROM snap WHERE id > %[1]d - 100 AND id <= %[1]d;
				UPDATE snap SET v = -v WHERE id %% 7 = 0;
				INSERT INTO snap SELECT g, g, 'new' FROM generate_series(%[2]d, %[2]d + 99) g;`, n, 20000+chunks*100))
			return err
		}
		return nil
	})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if lsn < before {
		t.Errorf("snapshot LSN %s before the LSN read before it, %s", FormatLSN(lsn), FormatLSN(before))
	}
	if len(got) != n {
		t.Fatalf("Snapshot read %d rows, want %d", len(got), n)
	}
	for i, r := range got {
		id, v := r.Vals[0].I, r.Vals[1].I
		if id != int64(i+1) || v != id {
			t.Fatalf("row %d: id %d v %d, want the original row %d", i, id, v, i+1)
		}
	}
	var changed int
	if err := db.conn.QueryRow(ctx, `SELECT count(*) FROM snap WHERE v < 0 OR v > 1000000 OR id > 3000`).Scan(&changed); err != nil {
		t.Fatal(err)
	}
	if changed < 500 || commits == 0 {
		t.Fatalf("the writers changed only %d rows (%d background commits): the test proves nothing", changed, commits)
	}
	t.Logf("%d chunks; %d background commits; %d rows differ from the snapshot at the end", chunks, commits, changed)

	// A resumed snapshot is a new, later one: it sees the changes.
	after, err := db.src.CurrentLSN(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after <= lsn {
		t.Errorf("CurrentLSN %s did not advance past the snapshot's %s after writes", FormatLSN(after), FormatLSN(lsn))
	}
	var resumed []*cdc.Row
	lsn2, err := db.src.SnapshotFrom(ctx, info, []cdc.Value{cdc.Int(2000)}, 250, func(c Chunk) error {
		if c.LSN < after {
			t.Errorf("resumed chunk LSN %s below %s", FormatLSN(c.LSN), FormatLSN(after))
		}
		resumed = append(resumed, c.Rows...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if lsn2 <= lsn {
		t.Errorf("resumed snapshot LSN %s not after %s", FormatLSN(lsn2), FormatLSN(lsn))
	}
	var want []int64
	rows, err := db.conn.Query(ctx, `SELECT id FROM snap WHERE id > 2000 ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	if want, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
		t.Fatal(err)
	}
	if got := idsOf(t, info, resumed); !reflect.DeepEqual(got, want) {
		t.Fatalf("resumed ids %v\nwant %v", got, want)
	}
}

// TestSnapshotChunks: chunk sizes around the table size, Final on the
// last chunk only, an empty table, and an error from the callback.
func TestSnapshotChunks(t *testing.T) {
	db := newDB(t)
	ctx := ctxT(t)
	db.exec(t, `CREATE TABLE six (id int PRIMARY KEY); INSERT INTO six SELECT generate_series(1, 6);
	            CREATE TABLE empty (id int PRIMARY KEY);`)
	six, err := db.src.Describe(ctx, "public", "six", nil)
	if err != nil {
		t.Fatal(err)
	}
	for size, want := range map[int][]bool{1: {false, false, false, false, false, true}, 3: {false, true}, 4: {false, true}, 6: {true}, 7: {true}} {
		var finals []bool
		var lasts []int64
		if _, err := db.src.Snapshot(ctx, six, size, func(c Chunk) error {
			finals = append(finals, c.Final)
			lasts = append(lasts, c.Last[0].I)
			if c.LSN == 0 {
				t.Error("chunk without LSN")
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(finals, want) || lasts[len(lasts)-1] != 6 {
			t.Errorf("chunk %d: finals %v lasts %v, want finals %v", size, finals, lasts, want)
		}
	}

	empty, err := db.src.Describe(ctx, "public", "empty", nil)
	if err != nil {
		t.Fatal(err)
	}
	lsn, err := db.src.Snapshot(ctx, empty, 10, func(Chunk) error { t.Error("callback on an empty table"); return nil })
	if err != nil || lsn == 0 {
		t.Errorf("empty table: lsn %d, %v", lsn, err)
	}
	rows, last, err := db.src.ReadChunk(ctx, empty, nil, 10)
	if err != nil || rows != nil || last != nil {
		t.Errorf("empty table: ReadChunk %v %v %v", rows, last, err)
	}

	boom := errors.New("boom")
	calls := 0
	_, err = db.src.Snapshot(ctx, six, 2, func(Chunk) error { calls++; return boom })
	if !errors.Is(err, boom) || calls != 1 {
		t.Errorf("callback error: %v after %d calls", err, calls)
	}
	for _, size := range []int{0, -1} {
		if _, err := db.src.Snapshot(ctx, six, size, func(Chunk) error { return nil }); err == nil {
			t.Errorf("chunk size %d accepted", size)
		}
		if _, _, err := db.src.ReadChunk(ctx, six, nil, size); err == nil {
			t.Errorf("ReadChunk limit %d accepted", size)
		}
	}
	if _, _, err := db.src.ReadChunk(ctx, six, []cdc.Value{cdc.Int(1), cdc.Int(2)}, 1); err == nil {
		t.Error("a resume key of the wrong width accepted")
	}
}

// TestCurrentLSN: the position advances with writes and matches
// pg_current_wal_lsn().
func TestCurrentLSN(t *testing.T) {
	db := newDB(t)
	ctx := ctxT(t)
	db.exec(t, `CREATE TABLE w (id int PRIMARY KEY)`)
	l1, err := db.src.CurrentLSN(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db.exec(t, `INSERT INTO w SELECT generate_series(1, 100)`)
	l2, err := db.src.CurrentLSN(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if l2 <= l1 {
		t.Fatalf("CurrentLSN %s after a write, %s before", FormatLSN(l2), FormatLSN(l1))
	}
	var later bool
	var diff int64
	if err := db.conn.QueryRow(ctx, `SELECT $1::text::pg_lsn > $2::text::pg_lsn, ($1::text::pg_lsn - $2::text::pg_lsn)::int8`,
		FormatLSN(l2), FormatLSN(l1)).Scan(&later, &diff); err != nil || !later || uint64(diff) != l2-l1 {
		t.Errorf("PostgreSQL disagrees with %s - %s = %d: %v %d %v", FormatLSN(l2), FormatLSN(l1), l2-l1, later, diff, err)
	}
}
