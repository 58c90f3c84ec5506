//go:build e2e

package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// pgValue is a Debezium PostgreSQL change event value (no schema envelope).
func pgValue(op string, lsn int, before, after string) []byte {
	if before == "" {
		before = "null"
	}
	if after == "" {
		after = "null"
	}
	return []byte(fmt.Sprintf(`{"before":%s,"after":%s,"source":{"version":"2.7.3.Final","connector":"postgresql","name":"shop","ts_ms":%d,"snapshot":"false","db":"shop","sequence":"[null,\"%d\"]","schema":"public","table":"items","txId":%d,"lsn":%d,"xmin":null},"op":"%s","ts_ms":%d,"transaction":null}`,
		before, after, 1_700_000_000_000+lsn, lsn, 500+lsn, lsn, op, 1_700_000_000_000+lsn))
}

// Bad input loses nothing and stops nothing: a malformed value, an unknown
// op and a value that does not fit its column go to the quarantine table
// with their reason while the batch goes on; a truncate soft-deletes the
// live rows at its position (a row deleted before keeps its position) and
// a later insert revives a key.
func TestQuarantineAndTruncate(t *testing.T) {
	r := startRunner(t)
	defer r.Stop()
	msgs := []sample.Message{
		{Key: []byte(`{"id":1}`), Value: pgValue("c", 100, "", `{"id":1,"name":"a","qty":10}`)},
		{Key: []byte(`{"id":2}`), Value: pgValue("c", 110, "", `{"id":2,"name":"b","qty":20}`)},
		{Key: []byte(`{"id":9}`), Value: []byte(`{not json`)},
		{Key: []byte(`{"id":1}`), Value: pgValue("u", 120, "", `{"id":1,"name":"a","qty":"x12"}`)},
		{Key: []byte(`{"id":2}`), Value: pgValue("d", 130, `{"id":2,"name":null,"qty":null}`, "")},
		{Key: []byte(`{"id":2}`), Value: nil},
		{Value: pgValue("t", 140, "", "")},
		{Key: []byte(`{"id":3}`), Value: pgValue("c", 150, "", `{"id":3,"name":"c","qty":30}`)},
		{Key: []byte(`{"id":1}`), Value: pgValue("c", 160, "", `{"id":1,"name":"a2","qty":11}`)},
		{Key: []byte(`{"id":4}`), Value: pgValue("z", 170, "", `{"id":4,"name":"d","qty":40}`)},
	}
	spec := activities.TableSpec{Table: "e2e.items", Topic: "e2e.public.items", KeyColumns: []string{"id"}, MaxEvents: 3, MaxWait: 200 * time.Millisecond}
	ends := produce(t, r, spec.Topic, 1, msgs)
	startWorkflow(t, r.Client, spec)
	st := waitCaughtUp(t, r.Client, spec.Table, ends)
	ctx := context.Background()
	name, _ := lake.ParseTableName(spec.Table)
	read := func(ident []string, sortCols ...string) []lake.Row {
		tbl, err := r.Catalog.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		rows, _, err := lake.ReadRows(ctx, tbl, sortCols)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	var got []string
	for _, row := range read(name.Mirror(), "id") {
		got = append(got, fmt.Sprintf("%v %v %v %s %v", row["id"], row["name"], row["qty"], row["_seq"].(string)[16:], row["_is_deleted"]))
	}
	want := []string{
		"1 a2 11 00000000000000a0 false", // truncated at 140, revived at 160
		"2 b 20 0000000000000082 true",   // deleted at 130 before the truncate: keeps its position and values
		"3 c 30 0000000000000096 false",  // inserted after the truncate
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("mirror:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var q []string
	for _, row := range read(name.Quarantine(), lakecat.BronzePartition, lake.BronzeOffset) {
		q = append(q, fmt.Sprintf("%v %v %v", row[lake.BronzeOffset], row[lake.ColStage], row[lakecat.BronzeValue] != nil))
		if !strings.Contains(fmt.Sprint(row[lake.ColReason]), map[string]string{"decode": "", "conform": "qty"}[fmt.Sprint(row[lake.ColStage])]) {
			t.Errorf("quarantine reason %q", row[lake.ColReason])
		}
	}
	if strings.Join(q, ",") != "2 decode true,3 conform true,9 decode true" {
		t.Fatalf("quarantine rows %v", q)
	}
	if st.Totals.Records != 10 || st.Totals.Tombstones != 1 {
		t.Fatalf("totals %+v", st.Totals)
	}
	checkBronze(t, r, spec.Table, ends)
	// history: id 1 closed by the truncate, reopened at 160
	var h []string
	for _, row := range read(name.History(), "id", lake.ColSeq) {
		to := "now"
		if s, ok := row[lake.ColValidToSeq].(string); ok {
			to = s[16:]
		}
		h = append(h, fmt.Sprintf("%v %s..%s", row["id"], row[lake.ColSeq].(string)[16:], to))
	}
	wantH := "1 0000000000000064..000000000000008c,1 00000000000000a0..now,2 000000000000006e..0000000000000082,3 0000000000000096..now"
	if strings.Join(h, ",") != wantH {
		t.Fatalf("history %v\nwant %s", h, wantH)
	}
	stopWorkflow(t, r.Client, spec.Table)
}
