package activities

// Written from a breaker's run (2026-12-04): positions of connectors
// other than PostgreSQL as the apply path meets them.

import (
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// oraXW is a Debezium Oracle change as the XStream adapter writes it:
// the change's SCN and the transaction's commit SCN, no rs_id (LogMiner
// only), ssn 0, and lcr_position, the LCR's position in the stream,
// which orders the changes of one transaction.
func oraXW(op, before, after string, scn, commit int, lcr string, ts int) wev {
	v := fmt.Sprintf(`{"before":%s,"after":%s,"source":{"version":"2.7.3.Final","connector":"oracle","name":"or","ts_ms":%d,"snapshot":"false","db":"ORCL","sequence":null,"schema":"SHOP","table":"ORDERS","txId":"0a.%d.1","scn":"%d","commit_scn":"%d","lcr_position":%q,"rs_id":null,"ssn":0,"redo_thread":null,"user_name":null},"op":%q,"ts_ms":%d,"transaction":null}`,
		before, after, 1767258000000+ts, commit, scn, commit, lcr, op, 1767258000000+ts)
	return wev{m: sampleMsg(op, v, 1), lsn: scn}
}

// One Oracle transaction (commit SCN 205) updates row 1 twice within one
// SCN (204), as UPDATE ... SET status='b'; UPDATE ... SET status='c' can.
// The XStream adapter's events carry no rs_id or ssn; their LCR positions
// order them (cdc.OracleLCRSeq). Before, both got the same position and
// the second was dropped as a duplicate (or the first, whichever was
// delivered first). The source's row is 'c', in every delivery.
func TestOracleXStreamSameSCN(t *testing.T) {
	lcr := func(commit, scn uint64, h string) string {
		raw, err := hex.DecodeString(h)
		if err != nil {
			t.Fatal(err)
		}
		s, err := cdc.OracleLCRSeq(commit, scn, 0, raw)
		if err != nil {
			t.Fatal(err)
		}
		return s.Hex()
	}
	const lc, l1, l2 = "00000000000000650000000000000064000000000000006501", "00000000000000cd00000000000000cc00000000000000cc01", "00000000000000cd00000000000000cc00000000000000cc02"
	c := oraXW("c", "null", `{"order_id":1,"status":"a","note":"n"}`, 100, 101, lc, 100)
	u1 := oraXW("u", `{"order_id":1,"status":"a","note":"n"}`, `{"order_id":1,"status":"b","note":"n"}`, 204, 205, l1, 200)
	u2 := oraXW("u", `{"order_id":1,"status":"b","note":"n"}`, `{"order_id":1,"status":"c","note":"n"}`, 204, 205, l2, 200)
	sc, s1, s2 := lcr(101, 100, lc), lcr(205, 204, l1), lcr(205, 204, l2)
	wantM := "1 c n " + s2 + " false"
	wantH := lines("1 a n "+sc+" "+s1+" false", "1 b n "+s1+" "+s2+" false", "1 c n "+s2+" <nil> true")
	for name, batches := range map[string][][]wev{
		"one batch": {{c, u1, u2}},
		"split":     {{c, u1}, {u2}},
		"swapped":   {{c, u2, u1}},
		"late":      {{c, u2}, {u1}},
	} {
		w := newWrun(t, TableSpec{})
		for _, b := range batches {
			w.apply(b, false)
		}
		m, h := w.tables()
		wantTables(t, name, m, h, wantM, wantH)
	}
}
