package schemas

import (
	"fmt"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// The decoder names each event's data collection (cdc.Event.Collection)
// the way SourceCollection does, on the real captures, through both the
// direct and the general JSON decode.
func TestEventCollectionOnRealCaptures(t *testing.T) {
	for _, c := range []struct {
		file string
		want map[string]int
	}{
		{"flink/debezium-postgres-data-schema-include.txt", map[string]int{"inventory.products": 16}},
		{"flink/debezium-postgres-data-schema-exclude.txt", map[string]int{"inventory.products": 16}},
		{"flink/debezium-data-schema-include.txt", map[string]int{"inventory.products": 16}},
		{"risingwave/debezium_log.1", map[string]int{"inventory.customers": 10}},
	} {
		for _, direct := range []bool{true, false} {
			d := NewDecoder(DecoderOptions{KeyColumns: []string{"id"}})
			d.noDirect = !direct
			got := map[string]int{}
			for i, r := range fixtureLines(t, c.file) {
				out, err := d.Decode(Record{Topic: c.file, Offset: int64(i), Key: r.key, Value: r.value})
				if err != nil {
					t.Fatalf("%s line %d: %v", c.file, i+1, err)
				}
				if out.Event == nil {
					continue
				}
				want, err := SourceCollection(r.value)
				if err != nil || out.Event.Collection != want {
					t.Fatalf("%s line %d (direct %v): Collection %q, SourceCollection %q, %v", c.file, i+1, direct, out.Event.Collection, want, err)
				}
				got[out.Event.Collection]++
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("%s (direct %v): collections %v, want %v", c.file, direct, got, c.want)
			}
		}
	}
}

// Each connector's form, a change of collection between records (the
// decoder's cache), a truncate, and the forms left unknown: a flattened
// record without db/schema add.fields (the real capture), a connector
// whose form is not verified.
func TestEventCollectionForms(t *testing.T) {
	d := NewDecoder(DecoderOptions{KeyColumns: []string{"id"}})
	for i, c := range []struct {
		value, want string
		op          cdc.Op
	}{
		{`{"before":null,"after":{"id":1},"source":{"connector":"sqlserver","db":"testDB","schema":"dbo","table":"tablea","ts_ms":1,"change_lsn":"00000025:00000d98:0002","commit_lsn":"00000025:00000d98:0003","event_serial_no":1},"op":"c"}`, "testDB.dbo.tablea", cdc.OpCreate},
		{`{"before":null,"after":{"id":2},"source":{"connector":"sqlserver","db":"testDB","schema":"dbo","table":"tableb","ts_ms":1,"change_lsn":"00000025:00000d98:0004","commit_lsn":"00000025:00000d98:0005","event_serial_no":1},"op":"c"}`, "testDB.dbo.tableb", cdc.OpCreate},
		{`{"before":null,"after":{"id":3},"source":{"connector":"mysql","db":"inventory","table":"orders","ts_ms":1,"file":"binlog.000003","pos":154,"row":0,"server_id":1},"op":"c"}`, "inventory.orders", cdc.OpCreate},
		{`{"before":null,"after":{"id":4},"source":{"connector":"mysql","db":"inventory","table":"orders","ts_ms":1,"file":"binlog.000003","pos":155,"row":0,"server_id":1},"op":"c"}`, "inventory.orders", cdc.OpCreate},
		{`{"before":null,"after":null,"source":{"connector":"postgresql","db":"postgres","schema":"sales","table":"orders","ts_ms":1,"lsn":100,"txId":7},"op":"t"}`, "sales.orders", cdc.OpTruncate},
		{`{"before":null,"after":{"id":5},"source":{"connector":"postgresql","db":"postgres","table":"orders","ts_ms":1,"lsn":101,"txId":7},"op":"c"}`, "", cdc.OpCreate},
		{`{"before":null,"after":{"id":6},"source":{"connector":"oracle","db":"ORCLPDB1","schema":"DEBEZIUM","table":"ORDERS","ts_ms":1,"scn":"100","commit_scn":"101"},"op":"c"}`, "", cdc.OpCreate},
	} {
		out, err := d.Decode(Record{Offset: int64(i), Value: []byte(c.value)})
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if out.Event.Op != c.op || out.Event.Collection != c.want {
			t.Errorf("record %d: op %v, Collection %q; want %v, %q", i, out.Event.Op, out.Event.Collection, c.op, c.want)
		}
	}
	unwrapped, err := NewDecoder(DecoderOptions{KeyColumns: []string{"id"}}).Decode(Record{Value: splitOne(t, "debezium-server-iceberg/unwrap-with-schema.json")})
	if err != nil || unwrapped.Event.Collection != "" {
		t.Errorf("flattened without __db/__schema (add.fields=op,table,lsn,source.ts_ms): %v, Collection %q", err, unwrapped.Event.Collection)
	}
	flat := NewDecoder(DecoderOptions{KeyColumns: []string{"id"}})
	out, err := flat.Decode(Record{Value: []byte(`{"id":1,"__op":"c","__db":"inventory","__table":"orders","__source_connector":"mysql","__file":"binlog.000003","__pos":154,"__row":0,"__source_ts_ms":1}`)})
	if err != nil || out.Event.Collection != "inventory.orders" {
		t.Errorf("flattened with __db and __table: %v, %+v", err, out.Event)
	}
}

// An Avro envelope's source block names the collection too.
func TestEventCollectionAvro(t *testing.T) {
	f := newAvroFixture(t)
	d := NewDecoder(DecoderOptions{Registry: f.tr.client, KeyColumns: []string{"id"}})
	got, err := d.Decode(Record{Key: f.key(t, 7), Value: f.value(t, pgEnvelope("c", nil, pgRow(7, nil), 2000))})
	if err != nil || got.Event.Collection != "public.t" {
		t.Fatalf("%v, %+v", err, got.Event)
	}
}
