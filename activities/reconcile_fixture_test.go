//go:build e2e

package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/source"
	"github.com/lakemirror/lakemirror/internal/validate"
	"github.com/lakemirror/lakemirror/schemas"
)

// recFixture is a source table on a real database server, a one-partition
// topic on kfake standing in for Debezium's, and a worker applying
// batches of that topic by hand: a test changes the source, and produces
// (and applies, or not) the change events the connector would send.
type recFixture struct {
	t       *testing.T
	ctx     context.Context
	a       *Activities
	spec    TableSpec
	name    lake.TableName
	exec    func(sql string) // runs SQL on the source
	info    source.TableInfo
	render  *source.Renderer
	offset  int64 // the topic's next offset
	applied int64 // the table's position
	seq     int64
}

// newRecFixture wires the worker to kfake and the source named "src"
// (dsn); the table is shop.orders (source table srcTable).
func newRecFixture(t *testing.T, dsn, srcTable string, exec func(string)) *recFixture {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	kc, err := kafka.NewClient(cluster.ListenAddrs(), kafka.ManualPartitioner())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	f := &recFixture{t: t, ctx: context.Background(), exec: exec,
		spec: TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"},
			Source: "src", SourceTable: srcTable, MaxQuarantine: 1000}.Defaults(),
		name: lake.TableName{Namespace: "shop", Name: "orders"}}
	if err := kc.CreateTopic(f.ctx, f.spec.Topic, 1); err != nil {
		t.Fatal(err)
	}
	f.a = New(mustCatalog(t), kc)
	f.a.StateDir = t.TempDir()
	f.a.Sources = map[string]string{"src": dsn}
	return f
}

// describe reads the source table's definition (after it was created).
func (f *recFixture) describe() {
	f.t.Helper()
	src, info, err := f.a.openSource(f.ctx, f.spec, "src", f.spec.SourceTable)
	if err != nil {
		f.t.Fatal(err)
	}
	src.Close()
	f.info = info
	if f.render, err = source.NewRenderer(info, "shop"); err != nil {
		f.t.Fatal(err)
	}
}

// pos reads the source's current position (a keyed read of no key).
func (f *recFixture) pos() source.Position {
	f.t.Helper()
	src, _, err := f.a.openSource(f.ctx, f.spec, "src", f.spec.SourceTable)
	if err != nil {
		f.t.Fatal(err)
	}
	defer src.Close()
	_, pos, err := src.ReadKeys(f.ctx, f.info, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return pos
}

// row is an orders row.
func (f *recFixture) row(id int64, status string, qty int64) *cdc.Row {
	return &cdc.Row{Cols: cdc.NewColumns([]string{"order_id", "status", "qty"}),
		Vals: []cdc.Value{cdc.Int(id), cdc.String(status), cdc.Int(qty)}}
}

// event renders a Debezium change event of row at the source position
// pos: op c, u or d (d: row is the before image), committed now.
func (f *recFixture) event(op string, row *cdc.Row, pos source.Position) schemas.Record {
	f.t.Helper()
	v, err := f.render.RepairValue(row, pos, map[bool]string{true: "d", false: "r"}[op == "d"], time.Now().UnixMicro())
	if err != nil {
		f.t.Fatal(err)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		f.t.Fatal(err)
	}
	p := m["payload"].(map[string]any)
	p["op"] = op
	src := p["source"].(map[string]any)
	src["version"], src["snapshot"] = "3.0.0.Final", "false"
	if pos.File != "" {
		src["pos"] = pos.Pos
	} else {
		src["sequence"] = fmt.Sprintf(`["%d","%d"]`, pos.LSN, pos.LSN)
		src["lsn"] = pos.LSN
	}
	v, err = json.Marshal(m)
	if err != nil {
		f.t.Fatal(err)
	}
	k, err := f.render.Key(row)
	if err != nil {
		f.t.Fatal(err)
	}
	return schemas.Record{Topic: f.spec.Topic, Key: k, Value: v}
}

// change runs sql on the source, then produces the event of op on row
// to the topic, and returns it. The event's position is the one read
// just before the change: the change is written at or after it.
func (f *recFixture) change(sql, op string, row *cdc.Row) schemas.Record {
	f.t.Helper()
	pos := f.pos()
	f.exec(sql)
	r := f.event(op, row, pos)
	if err := f.a.Kafka.Produce(f.ctx, &kgo.Record{Topic: f.spec.Topic, Partition: 0, Key: r.Key, Value: r.Value}); err != nil {
		f.t.Fatal(err)
	}
	r.Offset = f.offset
	f.offset++
	return r
}

// apply applies the produced records not applied yet, as one batch.
func (f *recFixture) apply(recs ...schemas.Record) {
	f.t.Helper()
	st, name, err := f.a.state(f.spec)
	if err != nil {
		f.t.Fatal(err)
	}
	f.seq++
	b := lake.Batch{ID: fmt.Sprintf("b%d", f.seq), Seq: f.seq, Topic: f.spec.Topic,
		Ranges: []lake.Range{{Partition: 0, From: f.applied, To: f.offset}}, EndOffsets: lake.Offsets{0: f.offset}}
	f.applied = f.offset
	st.mu.Lock()
	defer st.mu.Unlock()
	stage := ""
	if _, _, err := f.a.applyRecords(f.ctx, st, name, f.spec, b, recs, nil, "", &stage); err != nil {
		f.t.Fatalf("batch %d (%s): %v", f.seq, stage, err)
	}
}

// load loads the mirror from the source (the direct initial load).
func (f *recFixture) load() {
	f.t.Helper()
	if _, err := f.a.LoadTable(f.ctx, LoadRequest{Spec: f.spec, LoadID: InitialLoadID, Position: lake.Offsets{0: 0}}); err != nil {
		f.t.Fatal(err)
	}
}

// reconcile runs one reconciliation (no pauses, no settling floor).
func (f *recFixture) reconcile(repair bool) (ReconcileResult, map[string]validate.Result) {
	f.t.Helper()
	res, err := f.a.Reconcile(f.ctx, ReconcileRequest{Spec: f.spec, RunID: fmt.Sprintf("run-%d", time.Now().UnixNano()),
		Chunk: 2, Pause: -1, SettleFloor: -1, SettleCeiling: time.Minute, CatchUpTimeout: time.Minute, Repair: repair})
	if err != nil {
		f.t.Fatal(err)
	}
	by := map[string]validate.Result{}
	for _, c := range res.Checks {
		by[c.Check] = c
	}
	return res, by
}

// onlyFailing asserts that exactly check failed, with these details
// (check "" : none failed).
func onlyFailing(t *testing.T, res ReconcileResult, by map[string]validate.Result, check, details string) {
	t.Helper()
	if len(res.Skipped) > 0 {
		t.Errorf("checks skipped: %v; want every check run", res.Skipped)
	}
	for _, c := range res.Checks {
		if c.Check != check && c.Verdict != validate.Pass {
			t.Errorf("check %s: %s, want pass (%s)", c.Check, c.Verdict, c.Details())
		}
	}
	if check == "" {
		if res.Failed != 0 {
			t.Fatalf("%d checks failed, want none", res.Failed)
		}
		return
	}
	c := by[check]
	if c.Verdict != validate.Fail || res.Failed != 1 {
		t.Fatalf("check %s: %s, %d failed; want it alone failing", check, c.Verdict, res.Failed)
	}
	if got := c.Details(); got != details {
		t.Fatalf("check %s details:\n%s\nwant:\n%s", check, got, details)
	}
}

// checkNames lists the checks of a run in order.
func checkNames(res ReconcileResult) string {
	var n []string
	for _, c := range res.Checks {
		n = append(n, c.Check)
	}
	return strings.Join(n, ",")
}
