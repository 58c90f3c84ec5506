package activities

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// mywg is myw with a commit time of its own (ms after 2026-01-01) and a
// GTID ("" for null).
func mywg(op, before, after string, serverID, file, pos int, tsMs int64, gtid string) wev {
	w := myw(op, before, after, serverID, file, pos)
	g := "null"
	if gtid != "" {
		g = fmt.Sprintf("%q", gtid)
	}
	v := strings.Replace(string(w.m.Value), fmt.Sprintf(`"ts_ms":%d,"snapshot"`, 1767258000000+pos), fmt.Sprintf(`"ts_ms":%d,"snapshot"`, 1767258000000+tsMs), 1)
	w.m.Value = []byte(strings.Replace(v, `"gtid":null`, `"gtid":`+g, 1))
	return w
}

// Positions restarted under a server id the table has seen (issue 34
// item 2): RESET MASTER on the server, a server rebuilt under the same
// id, the connector moved to another replica of the same primary, and a
// new server's source snapshot reads (server id 0). On main the update
// and the delete after the restart sorted below the keys' positions and
// were dropped as stale ("2 stale" in the totals, the history woven as if
// they were late). Now the table stops with BinlogRestarted before
// anything of the batch commits (ambiguous without bronze on a worker
// whose state was built from the tables); a redelivery of the changes
// before the restart still applies as duplicates, also on a restarted
// worker. A restarted worker with bronze commits the batch (the changes
// are late to its state: the mirror keeps its rows, the history lists the
// keys as pending) and RebuildKeys, reading the keys' past from bronze,
// stops.
func TestMySQLBinlogRestartStops(t *testing.T) {
	o1 := `{"order_id":1,"status":"new"}`
	o1paid := `{"order_id":1,"status":"paid"}`
	o2 := `{"order_id":2,"status":"new"}`
	before := []wev{
		mywg("c", "null", o1, 1, 42, 1000, 1000, ""),
		mywg("c", "null", o2, 1, 42, 2000, 2000, ""),
		mywg("u", o1, o1paid, 1, 42, 3000, 3000, ""),
	}
	wantMirror := "1 paid 000000000000002a0000000000000bb80000000000000000 false\n2 new 000000000000002a00000000000007d00000000000000000 false"
	reset := []wev{ // RESET MASTER: mysql-bin.000001 again, same server id
		mywg("u", o1paid, `{"order_id":1,"status":"sent"}`, 1, 1, 500, 90000, ""),
		mywg("d", o2, "null", 1, 1, 900, 90001, ""),
	}
	replica := []wev{ // another replica of the same primary: its own binlog, the primary's server id
		mywg("u", o1paid, `{"order_id":1,"status":"sent"}`, 1, 7, 4400, 90000, ""),
	}
	reads := []wev{ // a new server's source snapshot (snapshot.mode=when_needed after RESET MASTER)
		mywg("r", "null", `{"order_id":1,"status":"sent"}`, 0, 1, 157, 90000, ""),
		mywg("r", "null", o2, 0, 1, 157, 90000, ""),
	}
	cases := []struct {
		name      string
		spec      TableSpec
		restart   bool // the worker restarts before the restarted binlog's batch
		batch     []wev
		committed bool // the batch commits and RebuildKeys stops
		ambiguous bool
		pos       string // the reported change's position
	}{
		{"RESET MASTER", TableSpec{}, false, reset, false, false, "000000000000000100000000000001f40000000000000000"},
		{"replica switch", TableSpec{}, false, replica, false, false, "000000000000000700000000000011300000000000000000"},
		{"new server's snapshot reads", TableSpec{}, false, reads, false, false, "0000000000000001000000000000009d0000000000000000"},
		{"RESET MASTER, mirror only", TableSpec{WithoutHistory: true}, false, reset, false, false, "000000000000000100000000000001f40000000000000000"},
		{"RESET MASTER, no bronze", TableSpec{WithoutBronze: true}, false, reset, false, false, "000000000000000100000000000001f40000000000000000"},
		{"RESET MASTER, restarted worker, no bronze", TableSpec{WithoutBronze: true}, true, reset, false, true, "000000000000000100000000000001f40000000000000000"},
		{"RESET MASTER, restarted worker, mirror only, no bronze", TableSpec{WithoutBronze: true, WithoutHistory: true}, true, reset, false, true, "000000000000000100000000000001f40000000000000000"},
		// a worker whose state was built from the tables, with bronze: the
		// batch's changes are late to it and go to RebuildKeys, which reads
		// the keys' past from bronze and stops (before 2026-12-05: applied
		// nothing and passed, the changes dropped as stale)
		{"RESET MASTER, restarted worker", TableSpec{}, true, reset, true, false, "000000000000000100000000000001f40000000000000000"},
		{"RESET MASTER, restarted worker, mirror only", TableSpec{WithoutHistory: true}, true, reset, true, false, "000000000000000100000000000001f40000000000000000"},
		{"replica switch, restarted worker", TableSpec{}, true, replica, true, false, "000000000000000700000000000011300000000000000000"},
	}
	for _, tc := range cases {
		w := newWrun(t, tc.spec)
		w.apply(before[:2], false)
		// a redelivery (the connector restarted from an earlier offset)
		// after a later change of the key in the same batch, its original
		// in the batch before: duplicates, no stop
		w.apply([]wev{before[2], before[0], before[1]}, false)
		if tc.restart {
			w.restart()
		}
		mirror, history := w.colTables("order_id", "status")
		if mirror != wantMirror {
			t.Fatalf("%s: mirror before the restart:\n%s", tc.name, mirror)
		}
		_, err := w.apply(tc.batch, true)
		var br *lake.BinlogRestartedError
		if !errors.As(err, &br) || br.Change.Seq.Hex() != tc.pos || br.Ambiguous != tc.ambiguous || br.Key == "" {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var ae *temporal.ApplicationError
		if !errors.As(classify(err), &ae) || ae.Type() != ErrTypeBinlogRestarted || !ae.NonRetryable() || strings.Contains(ae.Error(), "paid") || strings.Contains(ae.Error(), "sent") {
			t.Fatalf("%s: classified as %v", tc.name, classify(err))
		}
		m, h := w.colTables("order_id", "status")
		if m != mirror || (!tc.committed && h != history) {
			t.Fatalf("%s: the stopped batch changed the tables:\nmirror:\n%s\nhistory:\n%s\nwas:\n%s", tc.name, m, h, history)
		}
		if !strings.Contains(err.Error(), "a new source snapshot") {
			t.Fatalf("%s: the error says nothing of how to go on: %v", tc.name, err)
		}
	}

	// the same redelivery on a worker restarted in between (its state
	// built from the tables: the key goes to RebuildKeys, which finds the
	// original in bronze)
	for _, spec := range []TableSpec{{}, {WithoutHistory: true}} {
		w := newWrun(t, spec)
		w.apply(before[:2], false)
		w.restart()
		w.apply([]wev{before[2], before[0], before[1]}, false)
		if m, _ := w.colTables("order_id", "status"); m != wantMirror {
			t.Fatalf("redelivery on a restarted worker (%+v): mirror\n%s", spec, m)
		}
	}

	// in one batch: the restart of key 1 comes with its changes before
	w := newWrun(t, TableSpec{})
	_, err := w.apply(append(append([]wev(nil), before...), reset...), true)
	var br *lake.BinlogRestartedError
	if !errors.As(err, &br) || br.Change.Seq.Hex() != "000000000000000100000000000001f40000000000000000" || br.Above.Seq.Hex() != "000000000000002a0000000000000bb80000000000000000" {
		t.Fatalf("in one batch: %v", err)
	}
	// a change at a position the key held before, with another commit
	// time and GTID (a restarted binlog reaching the same coordinates)
	w = newWrun(t, TableSpec{})
	w.apply([]wev{mywg("c", "null", o1, 1, 1, 500, 1000, "3E11FA47-71CA-11E1-9E33-C80AA9429562:5")}, false)
	_, err = w.apply([]wev{mywg("u", o1, o1paid, 1, 1, 500, 90000, "3E11FA47-71CA-11E1-9E33-C80AA9429562:1")}, true)
	if !errors.As(err, &br) || br.Above.Seq != br.Change.Seq {
		t.Fatalf("a reused position: %v", err)
	}
}

// The real MySQL captures (testdata/debezium, PROVENANCE.md files 2 and
// 6: Debezium 1.1.1 and 1.9.5) apply as they are and again as a whole
// redelivery (duplicates, no stop). Then the same connector after RESET
// MASTER, crafted from the captured bytes with mysql-bin.000003 renamed
// mysql-bin.000001: its source snapshot again (snapshot.mode=when_needed,
// server id 0), and its streamed changes again, each stop the table at
// the first key whose position they fall below, and change nothing; on a
// worker restarted before them too (RebuildKeys stops). On main both
// were dropped as stale.
func TestMySQLBinlogRestartRealCaptures(t *testing.T) {
	for _, fx := range []struct {
		file           string
		readAt, liveAt int64  // offsets of the first stopped change: the re-read, the streamed change
		readSeq        string // its position
	}{
		{"risingwave/debezium_log_no_schema_field.1", 20, 21, "0000000000000001000000000000009d0000000000000000"},
		{"flink/debezium-data-schema-exclude.txt", 32, 32, "0000000000000001000000000000009a0000000000000000"},
	} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "debezium", fx.file))
		if err != nil {
			t.Fatal(err)
		}
		var all, reads, streamed []wev
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			all = append(all, wev{m: sample.Message{Value: []byte(l)}})
			again := wev{m: sample.Message{Value: []byte(strings.Replace(l, `"mysql-bin.000003"`, `"mysql-bin.000001"`, 1))}}
			if strings.Contains(l, `"snapshot":"true"`) {
				reads = append(reads, again)
			} else {
				streamed = append(streamed, again)
			}
		}
		spec := TableSpec{Table: "inventory.customers", Topic: "dbserver1.inventory.customers", KeyColumns: []string{"id"}, MaxQuarantine: 1000}.Defaults()
		w := &wrun{t: t, cat: mustCatalog(t), spec: spec}
		w.restart()
		w.apply(all, false)
		res, _ := w.apply(all, false)
		if res.Mirror.Duplicates+res.Mirror.Stale != len(all) || res.Mirror.Applied != 0 {
			t.Fatalf("%s: the redelivery: %+v", fx.file, res.Mirror)
		}
		name := lake.TableName{Namespace: "inventory", Name: "customers"}
		mirror := tableText(t, w.cat, name, false, "id", lake.ColSeq, lake.ColDeleted)
		for _, c := range []struct {
			batch []wev
			at    int64
			seq   string
		}{{reads, fx.readAt, fx.readSeq}, {streamed, fx.liveAt, ""}} {
			_, err := w.apply(c.batch, true)
			var br *lake.BinlogRestartedError
			if !errors.As(err, &br) || br.Change.Origin.Offset != c.at || (c.seq != "" && br.Change.Seq.Hex() != c.seq) || br.Change.Seq.Words()[0] != 1 || br.Above.Seq.Words()[0] != 3 {
				t.Fatalf("%s: after RESET MASTER: %v", fx.file, err)
			}
			if m := tableText(t, w.cat, name, false, "id", lake.ColSeq, lake.ColDeleted); m != mirror {
				t.Fatalf("%s: the stopped batch changed the mirror:\n%s\nwas:\n%s", fx.file, m, mirror)
			}
		}
		// the same on a worker restarted before the batch (state built from
		// the tables): the batch commits as late changes and the rebuild,
		// reading the keys' past from bronze, stops
		for _, batch := range [][]wev{reads, streamed} {
			w := &wrun{t: t, cat: mustCatalog(t), spec: spec}
			w.restart()
			w.apply(all, false)
			w.restart()
			_, err := w.apply(batch, true)
			var br *lake.BinlogRestartedError
			if !errors.As(err, &br) || br.Change.Seq.Words()[0] != 1 || br.Above.Seq.Words()[0] != 3 || br.Ambiguous {
				t.Fatalf("%s: after RESET MASTER, restarted worker: %v", fx.file, err)
			}
			if m := tableText(t, w.cat, name, false, "id", lake.ColSeq, lake.ColDeleted); m != mirror {
				t.Fatalf("%s: restarted worker: the stopped rebuild changed the mirror:\n%s\nwas:\n%s", fx.file, m, mirror)
			}
		}
	}
}
