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

// Changes of another MySQL server than the table's (a failover to a
// replica: its binlog files and positions start over) stop the table
// instead of sorting below everything applied and being dropped as stale
// (a breaker's finding, 2026-12-04: the update and delete after a failover
// were lost, and the history got a version closed before it opened).
// Snapshot reads (server_id 0) and late changes of the table's server
// apply as before.
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
	if !errors.As(err, &sc) || sc.Recorded != "1" || !slices.Equal(sc.Seen, []string{"2"}) {
		t.Fatalf("changes of server 2 after server 1: %v", err)
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

	// two servers in the batch that creates the table
	w2 := newWrun(t, TableSpec{})
	_, err = w2.apply([]wev{
		myw("c", "null", `{"order_id":1,"status":"new"}`, 1, 42, 1000),
		myw("u", `{"order_id":1,"status":"new"}`, `{"order_id":1,"status":"paid"}`, 2, 3, 500),
	}, true)
	if !errors.As(err, &sc) || sc.Recorded != "" || !slices.Equal(sc.Seen, []string{"1", "2"}) {
		t.Fatalf("two servers in one batch: %v", err)
	}
}
