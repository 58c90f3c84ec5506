package schemas

import (
	"strings"
	"testing"

	"github.com/valyala/fastjson"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// A realistic Debezium 2.5 PostgreSQL update of an orders row (default
// replica identity: no before image), JsonConverter schemas.enable=false.
const benchPGUpdate = `{"before":null,"after":{"id":1001,"customer_id":4711,"status":"SHIPPED","amount":129.95,"currency":"EUR",` +
	`"created_at":1700000000123456,"updated_at":1700000300654321,"note":"leave at the door","priority":false},` +
	`"source":{"version":"2.5.0.Final","connector":"postgresql","name":"pgserver1","ts_ms":1700000300654,"snapshot":"false",` +
	`"db":"shop","sequence":"[\"24023128\",\"24023184\"]","ts_us":1700000300654321,"ts_ns":1700000300654321000,` +
	`"schema":"public","table":"orders","txId":7791,"lsn":24023184,"xmin":null},"op":"u","ts_ms":1700000300999,` +
	`"transaction":null}`

// benchRowSchema is the orders row struct as the PostgreSQL connector
// describes it (numeric(10,2) amount, timestamptz as MicroTimestamp).
const benchRowSchema = `{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"int64","optional":false,"field":"customer_id"},` +
	`{"type":"string","optional":false,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"NEW,PAID,SHIPPED"},"field":"status"},` +
	`{"type":"double","optional":true,"field":"amount"},{"type":"string","optional":false,"field":"currency"},` +
	`{"type":"int64","optional":false,"name":"io.debezium.time.MicroTimestamp","version":1,"field":"created_at"},` +
	`{"type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp","version":1,"field":"updated_at"},` +
	`{"type":"string","optional":true,"field":"note"},{"type":"boolean","optional":false,"default":false,"field":"priority"}],` +
	`"optional":true,"name":"pgserver1.public.orders.Value","field":"%s"}`

const benchSourceSchema = `{"type":"struct","fields":[{"type":"string","optional":false,"field":"version"},{"type":"string","optional":false,"field":"connector"},` +
	`{"type":"string","optional":false,"field":"name"},{"type":"int64","optional":false,"field":"ts_ms"},` +
	`{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"true,last,false,incremental"},"default":"false","field":"snapshot"},` +
	`{"type":"string","optional":false,"field":"db"},{"type":"string","optional":true,"field":"sequence"},{"type":"int64","optional":true,"field":"ts_us"},` +
	`{"type":"int64","optional":true,"field":"ts_ns"},{"type":"string","optional":false,"field":"schema"},{"type":"string","optional":false,"field":"table"},` +
	`{"type":"int64","optional":true,"field":"txId"},{"type":"int64","optional":true,"field":"lsn"},{"type":"int64","optional":true,"field":"xmin"}],` +
	`"optional":false,"name":"io.debezium.connector.postgresql.Source","field":"source"}`

func benchEnvelope() string {
	schema := `{"type":"struct","fields":[` + strings.Replace(benchRowSchema, "%s", "before", 1) + `,` + strings.Replace(benchRowSchema, "%s", "after", 1) + `,` +
		benchSourceSchema + `,{"type":"struct","fields":[{"type":"string","optional":false,"field":"id"},{"type":"int64","optional":false,"field":"total_order"},` +
		`{"type":"int64","optional":false,"field":"data_collection_order"}],"optional":true,"name":"event.block","version":1,"field":"transaction"},` +
		`{"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"},{"type":"int64","optional":true,"field":"ts_us"},` +
		`{"type":"int64","optional":true,"field":"ts_ns"}],"optional":false,"name":"pgserver1.public.orders.Envelope","version":2}`
	return `{"schema":` + schema + `,"payload":` + benchPGUpdate + `}`
}

func TestBenchRecords(t *testing.T) {
	for _, v := range []string{benchPGUpdate, benchEnvelope()} {
		got, err := NewDecoder(idKey).Decode(Record{Value: []byte(v)})
		if err != nil {
			t.Fatal(err)
		}
		e := got.Event
		if e.Seq != cdc.PostgresSeq(24023184, 24023184) || e.TxID != "7791" || e.SourceTs != 1700000300654321 || e.Key != mustKey(t, cdc.Int(1001)) {
			t.Errorf("%+v", e)
		}
		wantValue(t, "note", get(t, e.After, "note"), cdc.String("leave at the door"))
		wantValue(t, "amount", get(t, e.After, "amount"), cdc.Float(129.95))
	}
	t.Logf("no envelope: %d bytes; envelope: %d bytes", len(benchPGUpdate), len(benchEnvelope()))
}

func benchDecode(b *testing.B, value string) {
	d := NewDecoder(idKey)
	rec := Record{Topic: "pgserver1.public.orders", Value: []byte(value)}
	b.SetBytes(int64(len(value)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Decode(rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodePostgresUpdate decodes a ~560-byte PostgreSQL update
// without the schema envelope.
func BenchmarkDecodePostgresUpdate(b *testing.B) { benchDecode(b, benchPGUpdate) }

// BenchmarkDecodePostgresUpdateEnvelope decodes the same update wrapped in
// the JsonConverter {"schema","payload"} envelope (schema cached).
func BenchmarkDecodePostgresUpdateEnvelope(b *testing.B) { benchDecode(b, benchEnvelope()) }

// BenchmarkFastjsonParseBaseline is the floor under
// BenchmarkDecodePostgresUpdate: fastjson parsing the same record, with no
// decoding, allocation or GC.
func BenchmarkFastjsonParseBaseline(b *testing.B) {
	var p fastjson.Parser
	v := []byte(benchPGUpdate)
	b.SetBytes(int64(len(v)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.ParseBytes(v); err != nil {
			b.Fatal(err)
		}
	}
}

// benchWorkloadUpdate is an update of the benchmark workload
// (scripts/bench: benchctl gen), decoded as the mirror-only worker does:
// declared columns, DropUpsertBefore.
const benchWorkloadUpdate = `{"before":{"order_id":518674,"customer_id":144371,"status":"on_hold","amount":"6401.73","note":"invoice call wrap split attempt express","updated_at":1793485610307000},` +
	`"after":{"order_id":518674,"customer_id":144371,"status":"paid","amount":"802.99","note":"invoice call wrap split attempt express","updated_at":1793491200001000},` +
	`"source":{"version":"2.7.3.Final","connector":"postgresql","name":"shop","ts_ms":1793491200001,"snapshot":"false","db":"shop","sequence":"[\"23000224\",\"23000379\"]",` +
	`"schema":"public","table":"orders","txId":5001,"lsn":23000379,"xmin":null},"op":"u","ts_ms":1793491200008,"transaction":null}`

var benchWorkloadOptions = DecoderOptions{KeyColumns: []string{"order_id"}, DropUpsertBefore: true, Columns: []cdc.Column{
	{Name: "order_id", Type: cdc.TypeLong}, {Name: "customer_id", Type: cdc.TypeLong, Optional: true},
	{Name: "status", Type: cdc.TypeString, Optional: true}, {Name: "amount", Type: cdc.DecimalType(12, 2), Optional: true},
	{Name: "note", Type: cdc.TypeString, Optional: true}, {Name: "updated_at", Type: cdc.TypeTimestamp, Optional: true},
}}

// BenchmarkDecodePaths decodes the records above by the direct path and
// by the general one (the fastjson tree; Decoder.noDirect), to compare
// them in one binary.
func BenchmarkDecodePaths(b *testing.B) {
	for _, c := range []struct {
		name, value string
		opts        DecoderOptions
	}{
		{"pg-update", benchPGUpdate, idKey},
		{"pg-update-envelope", benchEnvelope(), idKey},
		{"workload-update", benchWorkloadUpdate, benchWorkloadOptions},
	} {
		for _, general := range []bool{false, true} {
			name := c.name + "/direct"
			if general {
				name = c.name + "/general"
			}
			b.Run(name, func(b *testing.B) {
				d := NewDecoder(c.opts)
				d.noDirect = general
				rec := Record{Topic: "pgserver1.public.orders", Value: []byte(c.value)}
				b.SetBytes(int64(len(c.value)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := d.Decode(rec); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
