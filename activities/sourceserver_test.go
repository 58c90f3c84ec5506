package activities

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// myw is a Debezium MySQL change of server serverID at binlog
// mysql-bin.<file>:pos (serverID 0: a snapshot read's source).
func myw(op, before, after string, serverID, file, pos int) wev {
	snap := "false"
	if op == "r" {
		snap = "true"
	}
	src := fmt.Sprintf(`{"version":"2.7.3.Final","connector":"mysql","name":"my","ts_ms":%d,"snapshot":%q,"db":"shop","sequence":null,"table":"orders","server_id":%d,"gtid":null,"file":"mysql-bin.%06d","pos":%d,"row":0,"thread":7,"query":null}`,
		1767258000000+pos, snap, serverID, file, pos)
	v := fmt.Sprintf(`{"before":%s,"after":%s,"source":%s,"op":%q,"ts_ms":%d,"transaction":null}`, before, after, src, op, 1767258000000+pos)
	return wev{m: sample.Message{Value: []byte(v), Op: op[0]}}
}

// A change of a MySQL server the table has not seen, at a binlog position
// below what the table applied (a failover to a replica: its binlog files
// and positions start over), stops the table instead of sorting below
// everything applied and being dropped as stale (a breaker's finding,
// 2026-12-04: the update and delete after a failover were lost, and the
// history got a version closed before it opened). A new server whose
// positions continue above is recorded and applies: a connector reading a
// replica whose upstream primary changed, or several ids interleaved in
// one binlog by multi-source replication (a second breaker's finding: an
// earlier version stopped on any new server_id). Snapshot reads
// (server_id 0) and late changes of known servers apply as before.
func TestMySQLServerChangeStops(t *testing.T) {
	w := newWrun(t, TableSpec{})
	w.apply([]wev{
		myw("r", "null", `{"order_id":1,"status":"new"}`, 0, 42, 500),
		myw("c", "null", `{"order_id":2,"status":"new"}`, 1, 42, 2000),
	}, false)
	w.apply([]wev{myw("u", `{"order_id":1,"status":"new"}`, `{"order_id":1,"status":"paid"}`, 1, 42, 1000)}, false) // late, same server
	failover := []wev{
		myw("u", `{"order_id":1,"status":"paid"}`, `{"order_id":1,"status":"sent"}`, 2, 3, 500),
		myw("d", `{"order_id":2,"status":"new"}`, "null", 2, 3, 900),
	}
	mirror, history := w.colTables("order_id", "status")
	_, err := w.apply(failover, true)
	var sc *lake.SourceServerChangedError
	if !errors.As(err, &sc) || sc.Server != "2" || !slices.Equal(sc.Known, []string{"1"}) || sc.Applied.Hex() != "000000000000002a00000000000007d00000000000000000" {
		t.Fatalf("a change of server 2 below server 1's: %v", err)
	}
	if m, h := w.colTables("order_id", "status"); m != mirror || h != history {
		t.Fatalf("the stopped batch changed the tables:\nmirror:\n%s\nhistory:\n%s", m, h)
	}
	if want := "1 paid 000000000000002a00000000000003e80000000000000000 false\n2 new 000000000000002a00000000000007d00000000000000000 false"; mirror != want {
		t.Fatalf("mirror:\n%s\nwant:\n%s", mirror, want)
	}
	var ae *temporal.ApplicationError
	if !errors.As(classify(err), &ae) || ae.Type() != ErrTypeSourceServerChanged || !ae.NonRetryable() {
		t.Fatalf("classified as %v", classify(err))
	}

	// a replica's upstream primary changes: server 3's changes continue
	// the binlog above; then a late change of server 1 and changes of
	// servers 1 and 3 interleaved (multi-source replication)
	w.apply([]wev{myw("u", `{"order_id":1,"status":"paid"}`, `{"order_id":1,"status":"sent"}`, 3, 42, 3000)}, false)
	w.restart() // the known servers come from the mirror's properties
	w.apply([]wev{
		myw("c", "null", `{"order_id":3,"status":"new"}`, 1, 42, 2500),
		myw("c", "null", `{"order_id":4,"status":"new"}`, 1, 42, 3100),
		myw("u", `{"order_id":4,"status":"new"}`, `{"order_id":4,"status":"paid"}`, 3, 42, 3200),
	}, false)
	if m, _ := w.colTables("order_id", "status"); m != "1 sent 000000000000002a0000000000000bb80000000000000000 false\n"+
		"2 new 000000000000002a00000000000007d00000000000000000 false\n"+
		"3 new 000000000000002a00000000000009c40000000000000000 false\n"+
		"4 paid 000000000000002a0000000000000c800000000000000000 false" {
		t.Fatalf("mirror with servers 1 and 3:\n%s", m)
	}

	// in the batch that creates the table: server 2's change below server 1's
	w2 := newWrun(t, TableSpec{})
	_, err = w2.apply([]wev{
		myw("c", "null", `{"order_id":1,"status":"new"}`, 1, 42, 1000),
		myw("u", `{"order_id":1,"status":"new"}`, `{"order_id":1,"status":"paid"}`, 2, 3, 500),
	}, true)
	if !errors.As(err, &sc) || sc.Server != "2" || !slices.Equal(sc.Known, []string{"1"}) {
		t.Fatalf("two servers in one batch: %v", err)
	}
}
