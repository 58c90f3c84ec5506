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
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/workflows"
)

// enveloped renders a Debezium PostgreSQL create/update with the Connect
// schema envelope; fields are "name:connect-type" (all optional but id).
func enveloped(op string, lsn int, fields []string, after string) []byte {
	var fs []string
	for _, f := range fields {
		name, typ, _ := strings.Cut(f, ":")
		fs = append(fs, fmt.Sprintf(`{"type":%q,"optional":%v,"field":%q}`, typ, name != "id", name))
	}
	row := fmt.Sprintf(`{"type":"struct","fields":[%s],"optional":true,"name":"s.public.t.Value","field":"%%s"}`, strings.Join(fs, ","))
	schema := fmt.Sprintf(`{"type":"struct","fields":[%s,%s,{"type":"struct","fields":[{"type":"string","optional":false,"field":"version"},{"type":"string","optional":false,"field":"connector"},{"type":"string","optional":false,"field":"name"},{"type":"int64","optional":false,"field":"ts_ms"},{"type":"string","optional":true,"field":"snapshot"},{"type":"string","optional":false,"field":"db"},{"type":"string","optional":true,"field":"sequence"},{"type":"string","optional":false,"field":"schema"},{"type":"string","optional":false,"field":"table"},{"type":"int64","optional":true,"field":"txId"},{"type":"int64","optional":true,"field":"lsn"},{"type":"int64","optional":true,"field":"xmin"}],"optional":false,"name":"io.debezium.connector.postgresql.Source","field":"source"},{"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"}],"optional":false,"name":"s.public.t.Envelope"}`,
		fmt.Sprintf(row, "before"), fmt.Sprintf(row, "after"))
	payload := fmt.Sprintf(`{"before":null,"after":%s,"source":{"version":"2.7.3.Final","connector":"postgresql","name":"s","ts_ms":%d,"snapshot":"false","db":"s","sequence":"[null,\"%d\"]","schema":"public","table":"t","txId":%d,"lsn":%d,"xmin":null},"op":%q,"ts_ms":%d}`,
		after, 1_700_000_000_000+lsn, lsn, lsn, lsn, op, 1_700_000_000_000+lsn)
	return []byte(fmt.Sprintf(`{"schema":%s,"payload":%s}`, schema, payload))
}

// A schema change mid-stream: a new column and a widening (int → long)
// apply by themselves; a type change to string blocks the table with
// nothing of the batch written until an operator decides; skip
// quarantines that batch's changes, evolve accepts the schema for good.
func TestSchemaChangeMidStream(t *testing.T) {
	ctx := context.Background()
	r := startRunner(t)
	defer r.Stop()
	v1 := []string{"id:int32", "name:string", "qty:int32"}
	v2 := []string{"id:int32", "name:string", "qty:int64", "note:string"}
	v3 := []string{"id:int32", "name:string", "qty:string", "note:string"}
	msgs := []sample.Message{
		{Key: []byte(`{"id":1}`), Value: enveloped("c", 100, v1, `{"id":1,"name":"a","qty":10}`)},
		{Key: []byte(`{"id":2}`), Value: enveloped("c", 110, v1, `{"id":2,"name":"b","qty":20}`)},
		{Key: []byte(`{"id":1}`), Value: enveloped("u", 120, v2, `{"id":1,"name":"a","qty":5000000000,"note":"big"}`)},
		{Key: []byte(`{"id":2}`), Value: enveloped("u", 130, v3, `{"id":2,"name":"b","qty":"many","note":null}`)},
	}
	spec := activities.TableSpec{Table: "e2e.schema", Topic: "e2e.public.schema", KeyColumns: []string{"id"}, MaxEvents: 1, MaxWait: 200 * time.Millisecond}
	ends := produce(t, r, spec.Topic, 1, msgs)
	startWorkflow(t, r.Client, spec)
	var st workflows.Status
	waitFor(t, "schema-blocked", func() bool {
		st = status(t, r.Client, spec.Table)
		return st.Phase == workflows.PhaseSchemaBlocked
	})
	if !strings.Contains(st.LastError, `column "qty" type-changed from long to string`) || st.Offsets[0] != 3 {
		t.Fatalf("blocked status: phase %s, offsets %v, error %q", st.Phase, st.Offsets, st.LastError)
	}
	name, _ := lake.ParseTableName(spec.Table)
	tbl, _ := r.Catalog.LoadTable(ctx, name.Mirror())
	if f, _ := tbl.Schema().FindFieldByName("qty"); f.Type.String() != "long" {
		t.Fatalf("qty is %s after the widening, want long", f.Type)
	}
	if _, ok := tbl.Schema().FindFieldByName("note"); !ok {
		t.Fatal("the new column note was not added")
	}
	if err := r.Client.SignalWorkflow(ctx, workflows.WorkflowID(spec.Table), "", workflows.SignalSchema, lake.DecisionSkip); err != nil {
		t.Fatal(err)
	}
	waitCaughtUp(t, r.Client, spec.Table, ends)
	rows := func(ident []string, col string) []lake.Row {
		tbl, err := r.Catalog.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		out, _, err := lake.ReadRows(ctx, tbl, []string{col})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	var got []string
	for _, row := range rows(name.Mirror(), "id") {
		got = append(got, fmt.Sprintf("%v %v %v %v", row["id"], row["name"], row["qty"], row["note"]))
	}
	if strings.Join(got, ",") != "1 a 5000000000 big,2 b 20 <nil>" {
		t.Fatalf("mirror %v", got)
	}
	q := rows(name.Quarantine(), lake.BronzeOffset)
	if len(q) != 1 || q[0][lake.ColStage] != lake.StageSchema || q[0][lake.BronzeOffset] != int64(3) {
		t.Fatalf("quarantine %v", q)
	}
	// columns dropped at the source while the table holds values: blocks;
	// evolve accepts the schema for good (the columns stay, new rows hold NULL)
	v4 := []string{"id:int32", "name:string"}
	more := []sample.Message{
		{Key: []byte(`{"id":2}`), Value: enveloped("u", 140, v4, `{"id":2,"name":"b2"}`)},
		{Key: []byte(`{"id":3}`), Value: enveloped("c", 150, v4, `{"id":3,"name":"c"}`)},
	}
	produce(t, r, spec.Topic, 1, more)
	waitFor(t, "schema-blocked again", func() bool {
		st = status(t, r.Client, spec.Table)
		return st.Phase == workflows.PhaseSchemaBlocked && strings.Contains(st.LastError, `column "qty" dropped`)
	})
	if err := r.Client.SignalWorkflow(ctx, workflows.WorkflowID(spec.Table), "", workflows.SignalSchema, lake.DecisionEvolve); err != nil {
		t.Fatal(err)
	}
	ends2 := produce(t, r, spec.Topic, 1, []sample.Message{ // the accepted schema does not block again
		{Key: []byte(`{"id":1}`), Value: enveloped("u", 160, v4, `{"id":1,"name":"a2"}`)}})
	waitCaughtUp(t, r.Client, spec.Table, ends2)
	got = nil
	for _, row := range rows(name.Mirror(), "id") {
		got = append(got, fmt.Sprintf("%v %v %v %v", row["id"], row["name"], row["qty"], row["note"]))
	}
	if strings.Join(got, ",") != "1 a2 <nil> <nil>,2 b2 <nil> <nil>,3 c <nil> <nil>" {
		t.Fatalf("mirror after evolve %v", got)
	}
	if st := status(t, r.Client, spec.Table); st.Phase != workflows.PhaseStream {
		t.Fatalf("phase %s after the accepted schema", st.Phase)
	}
	stopWorkflow(t, r.Client, spec.Table)
}
