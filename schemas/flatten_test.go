package schemas

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Flattened records (ExtractNewRecordState): the real capture of fixture
// file 8, and the add.fields of each connector, delete rewrite, headers.

func TestFlattenedFixture(t *testing.T) {
	val := splitOne(t, "debezium-server-iceberg/unwrap-with-schema.json")
	d := NewDecoder(DecoderOptions{KeyColumns: []string{"id"}})
	got, err := d.Decode(Record{Topic: "testc.inventory.orders", Offset: 5, Value: val})
	if err != nil {
		t.Fatal(err)
	}
	e := got.Event
	if got.Kind != KindChange || got.RawOp != "r" || e.Op != cdc.OpRead || e.Snapshot != cdc.SnapshotRow {
		t.Fatalf("%+v %+v", got, e)
	}
	// add.fields=op,table,lsn,source.ts_ms: the position is __lsn (no
	// sequence: commit word 0), the commit time __source_ts_ms.
	if e.Seq != cdc.PostgresSeq(0, 33832960) || e.SourceTs != 1596309876678000 || e.Key != mustKey(t, cdc.Int(10003)) {
		t.Errorf("seq %v ts %d key %x", e.Seq, e.SourceTs, e.Key)
	}
	if e.Before != nil || e.After == nil || fmt.Sprint(e.After.Cols.Names) != "[id order_date purchaser quantity product_id]" {
		t.Fatalf("images %+v %+v", e.Before, e.After)
	}
	wantValue(t, "order_date", get(t, e.After, "order_date"), cdc.Date(16850))
	wantValue(t, "purchaser", get(t, e.After, "purchaser"), cdc.Int(1002))
	want := []cdc.Column{
		{Name: "id", Type: cdc.TypeInt, Source: "int32"},
		{Name: "order_date", Type: cdc.TypeDate, Source: "io.debezium.time.Date"},
		{Name: "purchaser", Type: cdc.TypeInt, Source: "int32"},
		{Name: "quantity", Type: cdc.TypeInt, Source: "int32"},
		{Name: "product_id", Type: cdc.TypeInt, Source: "int32"},
	}
	if fmt.Sprint(e.Schema) != fmt.Sprint(want) {
		t.Errorf("schema %+v", e.Schema)
	}
	// The same record without the schema envelope (schemas.enable=false).
	bare := []byte(`{"id":10003,"order_date":16850,"purchaser":1002,"quantity":2,"product_id":106,"__op":"r","__table":"orders","__lsn":33832960,"__source_ts_ms":1596309876678,"__deleted":"false"}`)
	got2, err := NewDecoder(DecoderOptions{KeyColumns: []string{"id"}}).Decode(Record{Value: bare})
	if err != nil {
		t.Fatal(err)
	}
	if got2.Event.Seq != e.Seq || got2.Event.Key != e.Key || got2.Event.After.Cols.Len() != 5 || got2.Event.Schema != nil {
		t.Errorf("bare: %+v", got2.Event)
	}
	wantValue(t, "bare order_date", get(t, got2.Event.After, "order_date"), cdc.Int(16850))
	// With the delete rewritten: the last row state, __deleted "true".
	del := strings.Replace(strings.Replace(string(val), `"__op": "r"`, `"__op": "d"`, 1), `"__deleted": "false"`, `"__deleted": "true"`, 1)
	got3, err := d.Decode(Record{Value: []byte(del)})
	if err != nil {
		t.Fatal(err)
	}
	if got3.Event.Op != cdc.OpDelete || got3.Event.Before == nil || got3.Event.After != nil || got3.Event.Key != e.Key {
		t.Errorf("rewritten delete %+v", got3.Event)
	}
	wantValue(t, "deleted row keeps its values", get(t, got3.Event.Before, "quantity"), cdc.Int(2))
}

// flatRecords: one flattened delete (rewrite mode) per connector with the
// add.fields that carry its position, and the expected Seq.
func TestFlattenedConnectors(t *testing.T) {
	cases := []struct {
		name, value string
		seq         cdc.Seq
		tx          string
	}{
		{"postgres", `{"id":1,"v":"a","__op":"d","__lsn":200,"__source_sequence":"[\"100\",\"200\"]","__source_ts_ms":1700000000000,"__source_txId":42,"__deleted":"true"}`,
			cdc.PostgresSeq(200, 200), "42"},
		{"mysql", `{"id":1,"v":"a","__op":"d","__source_file":"mysql-bin.000012","__source_pos":392,"__source_row":2,"__source_gtid":"3E11FA47-71CA-11E1-9E33-C80AA9429562:23","__source_server_id":1,"__source_ts_ms":1700000000000,"__deleted":true}`,
			cdc.MySQLSeq(12, 392, 2), "3E11FA47-71CA-11E1-9E33-C80AA9429562:23"},
		{"sqlserver", `{"id":1,"v":"a","__op":"d","__source_commit_lsn":"0000002b:00000588:0003","__source_change_lsn":"0000002b:00000580:0002","__source_event_serial_no":1,"__source_ts_ms":1700000000000,"__deleted":"true"}`,
			cdc.SQLServerSeq(cdc.SQLServerLSN{Hi: 0x2b<<32 | 0x588, Lo: 3}, cdc.SQLServerLSN{Hi: 0x2b<<32 | 0x580, Lo: 2}, 1), ""},
		{"oracle", `{"id":1,"v":"a","__op":"d","__source_scn":"2993741","__source_commit_scn":"2993750","__source_rs_id":" 0x00000d.00012a4f.0010 ","__source_ssn":0,"__source_txId":"0a001b00ab0c0000","__source_ts_ms":1700000000000,"__deleted":"true"}`,
			cdc.OracleSeq(2993750, 2993741, cdc.OracleRSID{LogSeq: 0xd, BlockOffset: 0x12a4f<<16 | 0x10}, 0, 0), "0a001b00ab0c0000"},
		// add.fields without the source. prefix (add.fields=lsn,op).
		{"postgres short names", `{"id":1,"v":"a","__op":"d","__lsn":300,"__deleted":"true"}`, cdc.PostgresSeq(300, 300), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := NewDecoder(DecoderOptions{KeyColumns: []string{"id"}}).Decode(Record{Value: []byte(c.value)})
			if err != nil {
				t.Fatal(err)
			}
			e := got.Event
			if e.Op != cdc.OpDelete || e.Seq != c.seq || e.TxID != c.tx || e.Before == nil || e.Before.Cols.Len() != 2 {
				t.Errorf("%+v (seq %v, want %v)", e, e.Seq, c.seq)
			}
			if !strings.Contains(c.name, "short") && e.SourceTs != 1700000000000000 {
				t.Errorf("SourceTs %d", e.SourceTs)
			}
		})
	}
}

func TestFlattenedRules(t *testing.T) {
	d := NewDecoder(DecoderOptions{KeyColumns: []string{"id"}})
	// An upsert without __op is an update; with __op "c" a create.
	got, err := d.Decode(Record{Value: []byte(`{"id":1,"__lsn":5,"__deleted":"false"}`)})
	if err != nil || got.Event.Op != cdc.OpUpdate || got.RawOp != "u" {
		t.Errorf("no __op: %v %+v", err, got)
	}
	// rewrite-with-tombstone: the rewritten delete, then a tombstone.
	got, err = d.Decode(Record{Value: []byte(`{"id":1,"__op":"d","__lsn":6,"__deleted":"true"}`)})
	if err != nil || got.Event.Op != cdc.OpDelete {
		t.Errorf("delete: %v %+v", err, got)
	}
	if got, err = d.Decode(Record{Key: []byte(`{"id":1}`)}); err != nil || got.Kind != KindTombstone {
		t.Errorf("tombstone: %v %+v", err, got)
	}
	// add.headers carry the same fields as Kafka headers.
	got, err = d.Decode(Record{Value: []byte(`{"id":1,"__deleted":"false"}`),
		Headers: []Header{{Key: "__op", Value: []byte("c")}, {Key: "__lsn", Value: []byte("77")}, {Key: "__source_ts_ms", Value: []byte("1000")}}})
	if err != nil || got.Event.Op != cdc.OpCreate || got.Event.Seq != cdc.PostgresSeq(77, 77) || got.Event.SourceTs != 1_000_000 {
		t.Errorf("headers: %v %+v", err, got.Event)
	}
	// A custom add.fields.prefix, and FlattenAlways for records without
	// op/deleted fields.
	d2 := NewDecoder(DecoderOptions{KeyColumns: []string{"id"}, AddFieldsPrefix: "cdc_", Flattened: FlattenAlways, Connector: "mysql"})
	got, err = d2.Decode(Record{Value: []byte(`{"id":1,"__x":2,"cdc_file":"binlog.000002","cdc_pos":10,"cdc_row":0}`)})
	if err != nil || got.Event.Seq != cdc.MySQLSeq(2, 10, 0) || fmt.Sprint(got.Event.After.Cols.Names) != "[id __x]" {
		t.Errorf("custom prefix: %v %+v", err, got.Event)
	}
	// Errors: no position (naming the add.fields), a missing field of a
	// known connector, a bad __deleted.
	for _, c := range []struct {
		value, want string
		opts        DecoderOptions
	}{
		{`{"id":1,"__op":"u","__table":"t","__deleted":"false"}`, "flattened record has no position", DecoderOptions{KeyColumns: []string{"id"}}},
		{`{"id":1,"__op":"u","__source_file":"mysql-bin.000001","__source_pos":4}`, "__source_row (or __row) is missing", DecoderOptions{KeyColumns: []string{"id"}}},
		{`{"id":1,"__op":"u","__source_file":"mysql-bin.000001","__source_pos":4}`, "add.fields for mysql must include source.file,source.pos,source.row", DecoderOptions{KeyColumns: []string{"id"}}},
		{`{"id":1,"__op":"u","__lsn":1,"__deleted":"maybe"}`, `__deleted "maybe"`, DecoderOptions{KeyColumns: []string{"id"}}},
		{`{"id":1,"__op":"x","__lsn":1}`, `__op: unknown op "x"`, DecoderOptions{KeyColumns: []string{"id"}}},
		{`{"id":1,"__op":"u"}`, "scn", DecoderOptions{KeyColumns: []string{"id"}, Connector: "oracle"}},
		{`{"v":1,"__op":"u","__lsn":1}`, `key column "id" is missing`, DecoderOptions{KeyColumns: []string{"id"}}},
	} {
		_, err := NewDecoder(c.opts).Decode(Record{Topic: "t", Partition: 2, Offset: 9, Value: []byte(c.value)})
		de := asDecodeError(t, err)
		if !strings.Contains(de.Reason, c.want) || de.Offset != 9 || de.Partition != 2 {
			t.Errorf("%s: %q, want %q", c.value, de.Reason, c.want)
		}
	}
}
