//go:build e2e

package source

import (
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/source/mysqltest"
)

// RESET MASTER on a real MariaDB (issue 34 item 2): the binlog starts over
// at mysql-bin.000001 and its positions fall below the ones the server
// wrote before, under the same server id. Each change's position is the
// binlog position after its transaction (SHOW MASTER STATUS), as the
// server gives it; the changes are delivered in their order through one
// Kafka partition, as Debezium would, with a redelivery of the changes
// before the reset. The GTID sequence starts over too (25, then 1).
// merge.FindBinlogRestart finds the first change after
// the reset below its key's earlier position, and nothing in the
// redelivery.
func TestMariaDBResetMasterRestartsPositions(t *testing.T) {
	srv := mysqltest.Start(t)
	db, err := sql.Open("mysql", srv.CreateDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var serverID uint64
	if err := db.QueryRow("SELECT @@server_id").Scan(&serverID); err != nil {
		t.Fatal(err)
	}
	var offset int64
	var events []*cdc.Event
	change := func(op cdc.Op, key int, stmt string) *cdc.Event {
		t.Helper()
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		var file, doDB, ignoreDB string
		var pos uint64
		if err := db.QueryRow("SHOW MASTER STATUS").Scan(&file, &pos, &doDB, &ignoreDB); err != nil {
			t.Fatal(err)
		}
		idx, err := strconv.ParseUint(file[strings.LastIndexByte(file, '.')+1:], 10, 64)
		if err != nil {
			t.Fatalf("binlog file %q: %v", file, err)
		}
		var gtid string
		if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&gtid); err != nil {
			t.Fatal(err)
		}
		e := &cdc.Event{Op: op, Key: cdc.Key(fmt.Sprint(key)), Seq: cdc.MySQLSeq(idx, pos, 0), TxID: gtid,
			SourceServer: fmt.Sprint(serverID), Origin: cdc.Origin{Topic: "maria.shop.orders", Offset: offset}}
		offset++
		events = append(events, e)
		return e
	}
	if _, err := db.Exec("CREATE TABLE orders (id INT PRIMARY KEY, status VARCHAR(10))"); err != nil {
		t.Fatal(err)
	}
	change(cdc.OpCreate, 1, "INSERT INTO orders VALUES (1, 'new')")
	change(cdc.OpCreate, 2, "INSERT INTO orders VALUES (2, 'new')")
	var last1 *cdc.Event
	for i := range 20 { // move the binlog on
		last1 = change(cdc.OpUpdate, 1, fmt.Sprintf("UPDATE orders SET status = 'n%d' WHERE id = 1", i))
	}
	paid := change(cdc.OpUpdate, 2, "UPDATE orders SET status = 'paid' WHERE id = 2")
	n := len(events)
	for _, e := range events[:n] { // a redelivery (the connector restarted from offset 0)
		cp := *e
		cp.Origin.Offset = offset
		offset++
		events = append(events, &cp)
	}
	if r, ok := merge.FindBinlogRestart(events); ok {
		t.Fatalf("one binlog with a redelivery reported restarted: %+v above %+v", r.Change, r.Above)
	}
	if _, err := db.Exec("RESET MASTER"); err != nil {
		t.Fatal(err)
	}
	sent := change(cdc.OpUpdate, 2, "UPDATE orders SET status = 'sent' WHERE id = 2")
	del := change(cdc.OpDelete, 1, "DELETE FROM orders WHERE id = 1")
	if w := sent.Seq.Words(); w[0] != 1 || sent.Seq >= paid.Seq {
		t.Fatalf("after RESET MASTER the update is at %v, the one before at %v: want mysql-bin.000001, below", sent.Seq, paid.Seq)
	}
	t.Logf("before RESET MASTER: %v (GTID %s); after: %v (GTID %s)", paid.Seq, paid.TxID, sent.Seq, sent.TxID)
	// MariaDB GTIDs (domain-server-seq) start over too: no order across it
	gtidSeq := func(g string) uint64 {
		n, err := strconv.ParseUint(g[strings.LastIndexByte(g, '-')+1:], 10, 64)
		if err != nil {
			t.Fatalf("GTID %q: %v", g, err)
		}
		return n
	}
	if gtidSeq(sent.TxID) != 1 || gtidSeq(paid.TxID) != 25 {
		t.Fatalf("GTIDs %s before RESET MASTER, %s after: want seq 25, then 1", paid.TxID, sent.TxID)
	}
	// the first by key: key 1's delete below its last update
	r, ok := merge.FindBinlogRestart(events)
	if !ok || r.Change != del || r.Above != last1 {
		t.Fatalf("RESET MASTER not found: %v, %+v above %+v", ok, r.Change, r.Above)
	}
	if r, ok := merge.FindBinlogRestart(events[:len(events)-1]); !ok || r.Change != sent || r.Above != paid {
		t.Fatalf("RESET MASTER (the update) not found: %v, %+v above %+v", ok, r.Change, r.Above)
	}
}
