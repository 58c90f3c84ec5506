package schemas

import (
	"fmt"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Fixture files 1–7 of fixtures/debezium/PROVENANCE.md: real Debezium
// captures, one record per line.

type wantEvent struct {
	op       cdc.Op
	seq      cdc.Seq
	ts       int64 // µs
	snap     cdc.SnapshotMark
	tx       string
	id       int64 // key column value
	before   bool
	after    bool
	keyField string
}

func checkEvents(t *testing.T, name string, evs []*cdc.Event, want []wantEvent) {
	t.Helper()
	if len(evs) != len(want) {
		t.Fatalf("%s: %d events, want %d", name, len(evs), len(want))
	}
	for i, w := range want {
		e := evs[i]
		at := fmt.Sprintf("%s event %d", name, i+1)
		if e.Op != w.op {
			t.Errorf("%s: op %v, want %v", at, e.Op, w.op)
		}
		if e.Seq != w.seq {
			t.Errorf("%s: seq %v, want %v", at, e.Seq, w.seq)
		}
		if e.SourceTs != w.ts {
			t.Errorf("%s: SourceTs %d, want %d", at, e.SourceTs, w.ts)
		}
		if e.Snapshot != w.snap {
			t.Errorf("%s: Snapshot %d, want %d", at, e.Snapshot, w.snap)
		}
		if e.TxID != w.tx {
			t.Errorf("%s: TxID %q, want %q", at, e.TxID, w.tx)
		}
		if e.Key != mustKey(t, cdc.Int(w.id)) {
			t.Errorf("%s: key %x, want the key of %d", at, e.Key, w.id)
		}
		if (e.Before != nil) != w.before || (e.After != nil) != w.after {
			t.Errorf("%s: before %v after %v, want %v %v", at, e.Before != nil, e.After != nil, w.before, w.after)
		}
		if got := get(t, e.Image(), w.keyField); !got.Equal(cdc.Int(w.id)) {
			t.Errorf("%s: image %s = %+v, want %d", at, w.keyField, got, w.id)
		}
	}
}

// flink MySQL 1.1.1.Final products: old-style snapshot rows with op "c",
// snapshot "true" and source.ts_ms 0 (unknown: the time is the envelope's
// ts_ms); binlog mysql-bin.000003.
func flinkMySQLWant() []wantEvent {
	var w []wantEvent
	for id := int64(101); id <= 109; id++ {
		ts := int64(1589355606101000)
		if id == 101 {
			ts = 1589355606100000
		}
		w = append(w, wantEvent{op: cdc.OpCreate, seq: cdc.MySQLSeq(3, 154, 0), ts: ts, snap: cdc.SnapshotRow, id: id, after: true})
	}
	stream := []struct {
		op  cdc.Op
		pos uint64
		ms  int64
		id  int64
	}{
		{cdc.OpUpdate, 362, 1589361987000, 106},
		{cdc.OpUpdate, 717, 1589362099000, 107},
		{cdc.OpCreate, 1068, 1589362210000, 110},
		{cdc.OpCreate, 1394, 1589362243000, 111},
		{cdc.OpUpdate, 1707, 1589362293000, 110},
		{cdc.OpUpdate, 2090, 1589362330000, 111},
		{cdc.OpDelete, 2443, 1589362344000, 111},
	}
	for _, s := range stream {
		w = append(w, wantEvent{op: s.op, seq: cdc.MySQLSeq(3, s.pos, 0), ts: s.ms * 1000, id: s.id,
			before: s.op != cdc.OpCreate, after: s.op != cdc.OpDelete})
	}
	for i := range w {
		w[i].keyField = "id"
	}
	return w
}

func TestFlinkMySQL(t *testing.T) {
	opts := DecoderOptions{KeyColumns: []string{"id"}}
	with := decodeAll(t, "flink/debezium-data-schema-include.txt", opts)
	without := decodeAll(t, "flink/debezium-data-schema-exclude.txt", opts)
	checkEvents(t, "with schema", with, flinkMySQLWant())
	checkEvents(t, "without schema", without, flinkMySQLWant())

	// Values of the first snapshot row.
	for name, evs := range map[string][]*cdc.Event{"with": with, "without": without} {
		a := evs[0].After
		wantValue(t, name+" id", get(t, a, "id"), cdc.Int(101))
		wantValue(t, name+" name", get(t, a, "name"), cdc.String("scooter"))
		wantValue(t, name+" description", get(t, a, "description"), cdc.String("Small 2-wheel scooter"))
		wantValue(t, name+" weight", get(t, a, "weight"), cdc.Float(3.140000104904175))
		// The update of 107: before and after weights.
		wantValue(t, name+" 107 before weight", get(t, evs[10].Before, "weight"), cdc.Float(5.300000190734863))
		wantValue(t, name+" 107 after weight", get(t, evs[10].After, "weight"), cdc.Float(5.099999904632568))
		wantValue(t, name+" 106 after description", get(t, evs[9].After, "description"), cdc.String("18oz carpenter hammer"))
		wantValue(t, name+" 111 description", get(t, evs[12].After, "description"), cdc.String("Big 2-wheel scooter "))
		wantValue(t, name+" delete before name", get(t, evs[15].Before, "name"), cdc.String("scooter"))
	}
	// "weight":1 in a double column: the schema makes it the double 1; without
	// the schema it is the integer 1 (the inference rule), which Coerces to 1.0.
	wantValue(t, "with schema: weight 1", get(t, with[9].After, "weight"), cdc.Float(1))
	wantValue(t, "without schema: weight 1", get(t, without[9].After, "weight"), cdc.Int(1))

	// The Connect schema becomes Event.Schema, one shared slice.
	wantSchema := []cdc.Column{
		{Name: "id", Type: cdc.TypeInt, Optional: false, Source: "int32"},
		{Name: "name", Type: cdc.TypeString, Optional: false, Source: "string"},
		{Name: "description", Type: cdc.TypeString, Optional: true, Source: "string"},
		{Name: "weight", Type: cdc.TypeDouble, Optional: true, Source: "double"},
	}
	if fmt.Sprint(with[0].Schema) != fmt.Sprint(wantSchema) {
		t.Errorf("schema %+v, want %+v", with[0].Schema, wantSchema)
	}
	for i, e := range with {
		if &e.Schema[0] != &with[0].Schema[0] {
			t.Errorf("event %d has its own schema slice", i+1)
		}
		if e.Image().Cols != with[0].After.Cols {
			t.Errorf("event %d has its own *Columns", i+1)
		}
	}
	for i, e := range without {
		if e.Schema != nil {
			t.Errorf("schema-less event %d has Schema %v", i+1, e.Schema)
		}
		if e.Image().Cols != without[0].After.Cols {
			t.Errorf("schema-less event %d has its own *Columns", i+1)
		}
	}
	checkTwins(t, with, without)
}

// flink PostgreSQL 1.2.1.Final products: REPLICA IDENTITY FULL, no
// source.sequence, so the commit LSN word is 0.
func TestFlinkPostgres(t *testing.T) {
	opts := DecoderOptions{KeyColumns: []string{"id"}}
	with := decodeAll(t, "flink/debezium-postgres-data-schema-include.txt", opts)
	without := decodeAll(t, "flink/debezium-postgres-data-schema-exclude.txt", opts)
	snapMs := []int64{1596001099434, 1596001099435, 1596001099435, 1596001099436, 1596001099436, 1596001099436, 1596001099437, 1596001099437, 1596001099437}
	var want []wantEvent
	for i, ms := range snapMs {
		want = append(want, wantEvent{op: cdc.OpRead, seq: cdc.PostgresSeq(0, 34078720), ts: ms * 1000, snap: cdc.SnapshotRow, tx: "601", id: int64(101 + i), after: true})
	}
	stream := []struct {
		op  cdc.Op
		lsn uint64
		ms  int64
		tx  string
		id  int64
	}{
		{cdc.OpUpdate, 34131104, 1596010889629, "602", 106},
		{cdc.OpUpdate, 34132200, 1596010930407, "603", 107},
		{cdc.OpCreate, 34132560, 1596010946488, "604", 110},
		{cdc.OpCreate, 34133072, 1596010976756, "605", 111},
		{cdc.OpUpdate, 34133344, 1596010982228, "606", 110},
		{cdc.OpUpdate, 34133584, 1596010985627, "607", 111},
		{cdc.OpDelete, 34133800, 1596010988168, "608", 111},
	}
	for _, s := range stream {
		want = append(want, wantEvent{op: s.op, seq: cdc.PostgresSeq(s.lsn, s.lsn), // no source.sequence (Debezium 1.2): streamed changes order by lsn
			ts: s.ms * 1000, tx: s.tx, id: s.id,
			before: s.op != cdc.OpCreate, after: s.op != cdc.OpDelete})
	}
	for i := range want {
		want[i].keyField = "id"
	}
	checkEvents(t, "with schema", with, want)
	checkEvents(t, "without schema", without, want)
	for name, evs := range map[string][]*cdc.Event{"with": with, "without": without} {
		wantValue(t, name+" weight", get(t, evs[0].After, "weight"), cdc.Float(3.14))
		wantValue(t, name+" 106 before weight", get(t, evs[9].Before, "weight"), cdc.Float(1))
		wantValue(t, name+" 110 after", get(t, evs[13].After, "description"), cdc.String("new water resistent white wind breaker"))
		wantValue(t, name+" delete weight", get(t, evs[15].Before, "weight"), cdc.Float(5.17))
	}
	checkTwins(t, with, without)
}

// risingwave MySQL 1.9.5.Final customers: one UPDATE statement hit two rows,
// which share file and pos and differ in row.
func TestRisingwaveMySQL(t *testing.T) {
	with := decodeAll(t, "risingwave/debezium_log.1", DecoderOptions{KeyColumns: []string{"id"}})
	without := decodeAll(t, "risingwave/debezium_log_no_schema_field.1", DecoderOptions{KeyColumns: []string{"id"}})
	snapMs := []int64{1661327688868, 1661327688868, 1661327688869, 1661327688869}
	var want []wantEvent
	for i, ms := range snapMs {
		want = append(want, wantEvent{op: cdc.OpRead, seq: cdc.MySQLSeq(3, 157, 0), ts: ms * 1000, snap: cdc.SnapshotRow, id: int64(1001 + i), after: true})
	}
	stream := []struct {
		op       cdc.Op
		pos, row uint64
		ms       int64
		id       int64
	}{
		{cdc.OpCreate, 392, 0, 1661328018000, 1005},
		{cdc.OpUpdate, 722, 0, 1661328309000, 1004},
		{cdc.OpCreate, 1109, 0, 1661328391000, 1006},
		{cdc.OpUpdate, 1442, 0, 1661328502000, 1005},
		{cdc.OpUpdate, 1442, 1, 1661328502000, 1006},
		{cdc.OpDelete, 1831, 0, 1661328550000, 1006},
	}
	for _, s := range stream {
		want = append(want, wantEvent{op: s.op, seq: cdc.MySQLSeq(3, s.pos, s.row), ts: s.ms * 1000, id: s.id,
			before: s.op != cdc.OpCreate, after: s.op != cdc.OpDelete})
	}
	for i := range want {
		want[i].keyField = "id"
	}
	checkEvents(t, "with schema", with, want)
	checkEvents(t, "without schema", without, want)
	if with[7].Seq.Compare(with[8].Seq) >= 0 {
		t.Errorf("row 0 of pos 1442 must sort before row 1")
	}
	for name, evs := range map[string][]*cdc.Event{"with": with, "without": without} {
		wantValue(t, name+" first_name", get(t, evs[5].After, "first_name"), cdc.String("Anne1"))
		wantValue(t, name+" last_name", get(t, evs[8].After, "last_name"), cdc.String("add2"))
		wantValue(t, name+" email", get(t, evs[0].After, "email"), cdc.String("sally.thomas@acme.com"))
	}
	checkTwins(t, with, without)

	// Without KeyColumns and without a Kafka key, a change cannot be keyed.
	_, err := NewDecoder(DecoderOptions{}).Decode(Record{Topic: "t", Value: fixtureLines(t, "risingwave/debezium_log.1")[0].value})
	if de := asDecodeError(t, err); de.Topic != "t" {
		t.Errorf("error coordinates %+v", de)
	}
}

// risingwave PostgreSQL 1.9.7.Final orders, keyed by the junk "****": the
// configured key column is used and the junk key ignored.
func TestRisingwaveMessKey(t *testing.T) {
	evs := decodeAll(t, "risingwave/debezium_mess_key.1", DecoderOptions{KeyColumns: []string{"order_id"}})
	want := []wantEvent{
		{op: cdc.OpRead, seq: cdc.PostgresSeq(0, 23911624), ts: 1685975423896000, snap: cdc.SnapshotRow, tx: "490", id: 1, after: true},
		{op: cdc.OpRead, seq: cdc.PostgresSeq(0, 23911624), ts: 1685975423896000, snap: cdc.SnapshotRow, tx: "490", id: 2, after: true},
		{op: cdc.OpRead, seq: cdc.PostgresSeq(0, 23911624), ts: 1685975423896000, snap: cdc.SnapshotLast, tx: "490", id: 3, after: true},
		// The update has no before image (default replica identity). Its
		// sequence is [null,"23911952"], the first transaction after the
		// connector started: the commit word is its own lsn.
		{op: cdc.OpUpdate, seq: cdc.PostgresSeq(23911952, 23911952), ts: 1686029203809000, snap: cdc.SnapshotNone, tx: "491", id: 1, after: true},
	}
	for i := range want {
		want[i].keyField = "order_id"
	}
	checkEvents(t, "mess key", evs, want)
	a := evs[0].After
	wantValue(t, "order_date", get(t, a, "order_date"), cdc.Int(1558430840000))
	wantValue(t, "customer_name", get(t, a, "customer_name"), cdc.String("Bob"))
	wantValue(t, "price", get(t, a, "price"), cdc.Null())
	wantValue(t, "product_id after update", get(t, evs[3].After, "product_id"), cdc.Int(3))
	if evs[3].Schema != nil {
		t.Errorf("Schema %v, want nil", evs[3].Schema)
	}

	// Without key columns the junk key is the only source of them: an error.
	r := fixtureLines(t, "risingwave/debezium_mess_key.1")[0]
	_, err := NewDecoder(DecoderOptions{}).Decode(Record{Topic: "orders", Offset: 7, Key: r.key, Value: r.value})
	de := asDecodeError(t, err)
	if de.Offset != 7 || de.Topic != "orders" {
		t.Errorf("coordinates %+v", de)
	}
	t.Logf("junk key without key columns: %v", err)

	inferred := InferColumns(evs)
	wantCols := []cdc.Column{
		{Name: "order_id", Type: cdc.TypeLong, Optional: true, Source: "json:integer"},
		{Name: "order_date", Type: cdc.TypeLong, Optional: true, Source: "json:integer"},
		{Name: "customer_name", Type: cdc.TypeString, Optional: true, Source: "json:string"},
		{Name: "price", Type: cdc.TypeString, Optional: true, Source: "json:null"},
		{Name: "product_id", Type: cdc.TypeLong, Optional: true, Source: "json:integer"},
		{Name: "order_status", Type: cdc.TypeLong, Optional: true, Source: "json:integer"},
	}
	if fmt.Sprint(inferred) != fmt.Sprint(wantCols) {
		t.Errorf("InferColumns = %+v\nwant %+v", inferred, wantCols)
	}
}

// checkTwins compares the with- and without-schema decodings of the same
// events: same position, op, key, times, and the same values where the
// kinds agree; where they differ (an integer literal in a double column),
// the schema-less value must Coerce to the typed one.
func checkTwins(t *testing.T, with, without []*cdc.Event) {
	t.Helper()
	for i := range with {
		a, b := with[i], without[i]
		if a.Seq != b.Seq || a.Op != b.Op || a.Key != b.Key || a.SourceTs != b.SourceTs || a.Snapshot != b.Snapshot || a.TxID != b.TxID {
			t.Errorf("twin %d differs: %+v vs %+v", i+1, a, b)
		}
		for _, pair := range [][2]*cdc.Row{{a.Before, b.Before}, {a.After, b.After}} {
			ra, rb := pair[0], pair[1]
			if (ra == nil) != (rb == nil) {
				t.Fatalf("twin %d: image presence differs", i+1)
			}
			if ra == nil {
				continue
			}
			if fmt.Sprint(ra.Cols.Names) != fmt.Sprint(rb.Cols.Names) {
				t.Errorf("twin %d: columns %v vs %v", i+1, ra.Cols.Names, rb.Cols.Names)
			}
			for j, name := range ra.Cols.Names {
				va, vb := ra.Vals[j], get(t, rb, name)
				if va.Kind == vb.Kind {
					wantValue(t, fmt.Sprintf("twin %d %s", i+1, name), vb, va)
					continue
				}
				c, err := Coerce(vb, a.Schema[j].Type)
				if err != nil || !c.Equal(va) {
					t.Errorf("twin %d %s: %+v does not coerce to %+v (%v)", i+1, name, vb, va, err)
				}
			}
		}
	}
}

func TestInferColumnsFlink(t *testing.T) {
	evs := decodeAll(t, "flink/debezium-data-schema-exclude.txt", DecoderOptions{KeyColumns: []string{"id"}})
	got := InferColumns(evs)
	want := []cdc.Column{
		{Name: "id", Type: cdc.TypeLong, Optional: true, Source: "json:integer"},
		{Name: "name", Type: cdc.TypeString, Optional: true, Source: "json:string"},
		{Name: "description", Type: cdc.TypeString, Optional: true, Source: "json:string"},
		// Floats and the integer literal 1: double.
		{Name: "weight", Type: cdc.TypeDouble, Optional: true, Source: "json:number"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("InferColumns = %+v\nwant %+v", got, want)
	}
	// Every value coerces to its inferred type.
	for _, e := range evs {
		for _, r := range []*cdc.Row{e.Before, e.After} {
			if r == nil {
				continue
			}
			for j, v := range r.Vals {
				c, err := Coerce(v, got[j].Type)
				if err != nil {
					t.Errorf("%s %+v: %v", r.Cols.Names[j], v, err)
				}
				if got[j].Type.Kind == cdc.KindFloat && c.Kind != cdc.KindFloat {
					t.Errorf("%s: coerced to %+v", r.Cols.Names[j], c)
				}
			}
		}
	}
}
