package activities

// Written from a breaker's run (2026-12-04): the source times a history
// version is valid between.

import (
	"fmt"
	"testing"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
)

// myW is a Debezium MySQL change at binlog (file 3, pos, row 0) with
// source.ts_ms ts (ms after 2026-01-01T09:00Z) and snapshot mark snap.
func myW(op, before, after string, pos int, ts int, snap string) wev {
	v := fmt.Sprintf(`{"before":%s,"after":%s,"source":{"version":"2.7.3.Final","connector":"mysql","name":"my","ts_ms":%d,"snapshot":%q,"db":"shop","sequence":null,"table":"orders","server_id":1,"gtid":null,"file":"mysql-bin.000003","pos":%d,"row":0,"thread":7,"query":null},"op":%q,"ts_ms":%d,"transaction":null}`,
		before, after, 1767258000000+ts, snap, pos, op, 1767258000000+ts+5)
	return wev{m: sampleMsg(op, v, 1), lsn: pos}
}

// A MySQL initial snapshot starts at binlog position 154 (t = 0) and
// reads row 1 at t = 3,000 s (Debezium stamps a snapshot read with the
// time it reads the row); an update of row 1 committed at t = 600 s,
// written at pos 500 after the snapshot's position, is streamed after
// the snapshot. The update closes the read's version at 600 s, before
// the read's time: the version's _valid_from is lowered to its _valid_to
// (merge.Replay's closeAt), an empty interval instead of an inverted one.
func TestSnapshotReadClosedBeforeItsTime(t *testing.T) {
	r := myW("r", "null", `{"order_id":1,"status":"a","note":"n"}`, 154, 3_000_000, "last")
	u := myW("u", `{"order_id":1,"status":"a","note":"n"}`, `{"order_id":1,"status":"b","note":"n"}`, 500, 600_000, "false")
	late := r
	late.part = 1 // a key's MySQL changes in one partition come in binlog order: late through another (merge.FindBinlogRestart)
	for name, batches := range map[string][][]wev{"one batch": {{r, u}}, "split": {{r}, {u}}, "late": {{u}, {late}}} {
		w := newWrun(t, TableSpec{})
		for _, b := range batches {
			w.apply(b, false)
		}
		h := tableText(t, w.cat, lake.TableName{Namespace: "shop", Name: "orders"}, true,
			"order_id", "status", lake.ColIsCurrent, lakecat.ColValidFrom, lakecat.ColValidTo)
		want := lines("1 a false 2026-01-01T09:10:00.000000Z 2026-01-01T09:10:00.000000Z", "1 b true 2026-01-01T09:10:00.000000Z <nil>")
		if h != want {
			t.Errorf("%s: history\n%s\nwant:\n%s", name, h, want)
		}
	}
}
