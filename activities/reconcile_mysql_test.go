//go:build e2e

package activities

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/source/mysqltest"
	"github.com/lakemirror/lakemirror/schemas"
)

// Reconciliation against a real MariaDB (a private mariadbd of
// mysqltest, binary logging on): the mirror is loaded from snapshot-read
// events of the source's rows at its binlog position, then the same
// faults as on PostgreSQL (reconcileFaults) each make exactly their
// check fail.
func TestReconcileMariaDB(t *testing.T) {
	srv := mysqltest.Start(t)
	setup := func(t *testing.T) *recFixture {
		dsn := srv.CreateDatabase(t)
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		exec := func(q string) {
			t.Helper()
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%v\n%s", err, q)
			}
		}
		exec(`CREATE TABLE orders (order_id INT PRIMARY KEY, status VARCHAR(20) NOT NULL, qty INT);
			INSERT INTO orders VALUES (1, 'new', 10), (2, 'new', 20), (3, 'new', 30), (4, 'new', 40), (5, 'new', 50)`)
		var dbName string
		if err := db.QueryRow("SELECT DATABASE()").Scan(&dbName); err != nil {
			t.Fatal(err)
		}
		f := newRecFixture(t, dsn, dbName+".orders", exec)
		f.describe()
		f.loadEvents()
		return f
	}
	reconcileFaults(t, setup)
}

// loadEvents loads the mirror the way a direct load does, from snapshot
// reads of every source row at one source position (a load batch of the
// topic "<topic>#initial"): for sources LoadTable does not read.
func (f *recFixture) loadEvents() {
	f.t.Helper()
	src, _, err := f.a.openSource(f.ctx, f.spec, "src", f.spec.SourceTable)
	if err != nil {
		f.t.Fatal(err)
	}
	defer src.Close()
	rows, _, pos, err := src.ReadChunkAt(f.ctx, f.info, nil, 10_000)
	if err != nil {
		f.t.Fatal(err)
	}
	topic := f.spec.Topic + "#" + InitialLoadID
	var recs []schemas.Record
	for i, row := range rows {
		v, err := f.render.RepairValue(row, pos, "r", time.Now().UnixMicro())
		if err != nil {
			f.t.Fatal(err)
		}
		k, err := f.render.Key(row)
		if err != nil {
			f.t.Fatal(err)
		}
		recs = append(recs, schemas.Record{Topic: topic, Offset: int64(i), Key: k, Value: v})
	}
	st, name, err := f.a.state(f.spec)
	if err != nil {
		f.t.Fatal(err)
	}
	b := lake.Batch{ID: fmt.Sprintf("%s#%s", f.spec.Table, InitialLoadID), Topic: topic, Ranges: []lake.Range{{From: 0, To: int64(len(recs))}},
		EndOffsets: lake.Offsets{0: 0}, Load: &lake.LoadCursor{ID: InitialLoadID, Read: int64(len(recs)), Done: true}}
	st.mu.Lock()
	defer st.mu.Unlock()
	stage := ""
	if _, _, err := f.a.applyRecords(f.ctx, st, name, f.spec, b, recs, nil, "", &stage); err != nil {
		f.t.Fatalf("load (%s): %v", stage, err)
	}
}
