package activities

// Written from a breaker's run (2026-12-04): TOAST / unavailable-value
// placeholders (`__debezium_unavailable_value`) with deletes, late
// delivery, key changes and tracked history columns.

import (
	"fmt"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/internal/telemetry"
)

func sampleMsg(op, v string, key int) sample.Message {
	return sample.Message{Value: []byte(v), Op: op[0]}
}

// A delete whose before image carries values and a placeholder for an
// unchanged large column (Oracle LOBs with lob.enabled; any connector's
// unavailable.value.placeholder): the soft-deleted row keeps the last
// known value of that column (rule 4: "the last known values (the
// delete's before image where it carries values, else the stored
// values)"). In source order the last known note is n2, set by the
// update at 200; the batch split must not matter.
func TestDeletePlaceholderBefore(t *testing.T) {
	c := pgw("c", "null", `{"order_id":1,"status":"a","note":"n1"}`, 100)
	u := pgw("u", "null", `{"order_id":1,"status":"b","note":"n2"}`, 200)
	d := pgw("d", `{"order_id":1,"status":"b","note":`+toast+`}`, "null", 300)
	other := pgw("c", "null", `{"order_id":2,"status":"a","note":"x"}`, 110)
	wantM := "1 b n2 " + pgs(300, 300) + " true\n2 a x " + pgs(110, 110) + " false"
	for _, opts := range []TableSpec{{}, {WithoutHistory: true}} {
		for name, batches := range map[string][][]wev{
			"one batch":          {{c, other, u, d}},
			"each alone":         {{c, other}, {u}, {d}},
			"update with delete": {{c, other}, {u, d}},
			"update late":        {{c, other}, {d}, {u}},
			"create late":        {{other}, {u, d}, {c}},
		} {
			for _, restart := range []bool{false, true} {
				w := newWrun(t, opts)
				for i, b := range batches {
					if restart && i == len(batches)-1 && i > 0 {
						w.restart()
					}
					w.apply(b, false)
				}
				m, _ := w.tables()
				if m != wantM {
					t.Errorf("%s %v restart %v: mirror\n%s\nwant:\n%s", name, opts.Tables(), restart, m, wantM)
				}
			}
		}
	}
}

// Tracked history columns with placeholders: a placeholder in a tracked
// column never opens a version, and the open version's untracked value
// follows the last change, whatever the batches.
func TestTrackedPlaceholdersLate(t *testing.T) {
	opts := TableSpec{HistoryColumns: []string{"order_id", "note"}}
	src := []wev{
		pgw("c", "null", `{"order_id":1,"status":"a","note":"n1"}`, 100),
		pgw("u", "null", `{"order_id":1,"status":"b","note":`+toast+`}`, 200), // untracked change only
		pgw("u", "null", `{"order_id":1,"status":"c","note":"n2"}`, 300),
		pgw("u", "null", `{"order_id":1,"status":"d","note":`+toast+`}`, 400),
		pgw("d", `{"order_id":1}`, "null", 500),
		pgw("c", "null", `{"order_id":1,"status":"e","note":"n3"}`, 600),
	}
	wantH := lines(
		"1 b n1 "+pgs(100, 100)+" "+pgs(300, 300)+" false",
		"1 d n2 "+pgs(300, 300)+" "+pgs(500, 500)+" false",
		"1 e n3 "+pgs(600, 600)+" <nil> true")
	wantM := "1 e n3 " + pgs(600, 600) + " false"
	clean := newWrun(t, opts)
	clean.apply(src, false)
	cm, ch := clean.tables()
	wantTables(t, "clean", cm, ch, wantM, wantH)
	perms := [][]int{{0, 2, 4, 1, 3, 5}, {5, 4, 3, 2, 1, 0}, {3, 0, 1, 5, 2, 4}, {1, 3, 0, 2, 4, 5}}
	for pi, p := range perms {
		for _, restart := range []bool{false, true} {
			w := newWrun(t, opts)
			for i, j := range p {
				if restart && i > 0 {
					w.restart()
				}
				w.apply([]wev{src[j]}, false)
			}
			m, h := w.tables()
			wantTables(t, fmt.Sprintf("perm %v restart %v", perms[pi], restart), m, h, wantM, wantH)
		}
	}
}

// oraW is a Debezium Oracle (LogMiner) change of the orders table,
// committed alone at SCN n (commit_scn n, scn n-1), at 2026-01-01T09:00Z +
// n ms. Oracle supplies a LOB column's value only when the statement sets
// it: unchanged LOBs, and every LOB in a before image, are the
// unavailable-value placeholder.
func oraW(op, before, after string, n int) wev {
	v := fmt.Sprintf(`{"before":%s,"after":%s,"source":{"version":"2.7.3.Final","connector":"oracle","name":"or","ts_ms":%d,"snapshot":"false","db":"ORCL","sequence":null,"schema":"SHOP","table":"ORDERS","txId":"0a.%d.1","scn":"%d","commit_scn":"%d","lcr_position":null,"rs_id":" 0x00000d.%08x.0010 ","ssn":0,"redo_thread":1,"user_name":"SHOP"},"op":%q,"ts_ms":%d,"transaction":null}`,
		before, after, 1767258000000+n, n, n-1, n, n, op, 1767258000000+n)
	return wev{m: sampleMsg(op, v, 1), lsn: n}
}

// The same as TestDeletePlaceholderBefore with Oracle events as the
// connector writes them for a CLOB column note: the update sets note (its
// before image holds the placeholder), the delete's before image holds
// the placeholder. The deleted row must keep note n2 in every split.
func TestOracleLobDelete(t *testing.T) {
	c := oraW("c", "null", `{"order_id":1,"status":"a","note":"n1"}`, 100)
	other := oraW("c", "null", `{"order_id":2,"status":"a","note":"x"}`, 110)
	u := oraW("u", `{"order_id":1,"status":"a","note":`+toast+`}`, `{"order_id":1,"status":"b","note":"n2"}`, 200)
	d := oraW("d", `{"order_id":1,"status":"b","note":`+toast+`}`, "null", 300)
	at := func(n int) string {
		return cdc.OracleSeq(uint64(n), uint64(n-1), cdc.OracleRSID{LogSeq: 0xd, BlockOffset: uint64(n)<<16 | 0x10}, 0, 0).Hex()
	}
	wantM := lines("1 b n2 "+at(300)+" true", "2 a x "+at(110)+" false")
	wantH := lines("1 a n1 "+at(100)+" "+at(200)+" false", "1 b n2 "+at(200)+" "+at(300)+" false", "2 a x "+at(110)+" <nil> true")
	for name, batches := range map[string][][]wev{
		"one batch":          {{c, other, u, d}},
		"each alone":         {{c, other}, {u}, {d}},
		"update with delete": {{c, other}, {u, d}},
		"update late":        {{c, other}, {d}, {u}},
	} {
		w := newWrun(t, TableSpec{})
		for _, b := range batches {
			w.apply(b, false)
		}
		m, h := w.tables()
		wantTables(t, name, m, h, wantM, wantH)
	}
}

// A placeholder on a key the table has never held (the stream started
// without a source snapshot) has no value to take: the column is NULL and
// the batch result counts it, instead of a silent NULL.
func TestUnknownPlaceholderCounted(t *testing.T) {
	w := newWrun(t, TableSpec{})
	w.a.Metrics = telemetry.New()
	w.apply([]wev{pgw("c", "null", `{"order_id":2,"status":"a","note":"x"}`, 100)}, false)
	res, _ := w.apply([]wev{
		pgw("u", "null", `{"order_id":1,"status":"b","note":`+toast+`}`, 200), // key 1 never seen
		pgw("u", "null", `{"order_id":2,"status":"b","note":`+toast+`}`, 210), // key 2 keeps x
	}, false)
	m, _ := w.tables()
	want := "1 b <nil> " + pgs(200, 200) + " false\n2 b x " + pgs(210, 210) + " false"
	if m != want || res.Mirror.UnknownPlaceholders != 1 {
		t.Errorf("unknown placeholders %d (want 1), mirror:\n%s\nwant:\n%s", res.Mirror.UnknownPlaceholders, m, want)
	}
	w.a.observeBatch(w.spec.Table, &res, 0) // what ApplyBatch reports of the batch
	if got := counterValue(t, w.a.Metrics, telemetry.MetricUnknownValues, w.spec.Table); got != 1 {
		t.Errorf("%s = %v, want 1", telemetry.MetricUnknownValues, got)
	}
}
