package schemas

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Avro records through an in-process Confluent-compatible schema registry
// (srfake: a real HTTP server): Debezium-shaped schemas as Confluent's
// AvroConverter writes them (connect.name, connect.parameters,
// connect.type, Avro decimal/date/timestamp logical types), registered for
// key and value, events encoded with hamba/avro in the wire format
// (0x00, schema id, body) and decoded to exact values.

// avroPGValue is the row record of a PostgreSQL table with one column of
// each type.
const avroPGValue = `{"type":"record","name":"Value","namespace":"pg.public.t","fields":[
 {"name":"id","type":"int"},
 {"name":"i8","type":["null",{"type":"int","connect.type":"int8"}],"default":null},
 {"name":"i16","type":["null",{"type":"int","connect.type":"int16"}],"default":null},
 {"name":"i64","type":["null","long"],"default":null},
 {"name":"f32","type":["null","float"],"default":null},
 {"name":"f64","type":["null","double"],"default":null},
 {"name":"b","type":["null","boolean"],"default":null},
 {"name":"s","type":["null","string"],"default":null},
 {"name":"raw","type":["null","bytes"],"default":null},
 {"name":"dec","type":["null",{"type":"bytes","scale":2,"precision":10,"connect.version":1,"connect.parameters":{"scale":"2","connect.decimal.precision":"10"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}],"default":null},
 {"name":"bigdec","type":["null",{"type":"bytes","scale":1,"precision":65,"connect.version":1,"connect.parameters":{"scale":"1","connect.decimal.precision":"65"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}],"default":null},
 {"name":"avrodec","type":["null",{"type":"bytes","logicalType":"decimal","precision":20,"scale":0}],"default":null},
 {"name":"d","type":["null",{"type":"int","connect.version":1,"connect.name":"io.debezium.time.Date"}],"default":null},
 {"name":"cd","type":["null",{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Date","logicalType":"date"}],"default":null},
 {"name":"ts","type":["null",{"type":"long","connect.version":1,"connect.name":"io.debezium.time.Timestamp"}],"default":null},
 {"name":"cts","type":["null",{"type":"long","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Timestamp","logicalType":"timestamp-millis"}],"default":null},
 {"name":"uts","type":["null",{"type":"long","connect.version":1,"connect.name":"io.debezium.time.MicroTimestamp"}],"default":null},
 {"name":"nts","type":["null",{"type":"long","connect.version":1,"connect.name":"io.debezium.time.NanoTimestamp"}],"default":null},
 {"name":"zts","type":["null",{"type":"string","connect.version":1,"connect.name":"io.debezium.time.ZonedTimestamp"}],"default":null},
 {"name":"t","type":["null",{"type":"int","connect.version":1,"connect.name":"io.debezium.time.Time"}],"default":null},
 {"name":"ut","type":["null",{"type":"long","connect.version":1,"connect.name":"io.debezium.time.MicroTime"}],"default":null},
 {"name":"nt","type":["null",{"type":"long","connect.version":1,"connect.name":"io.debezium.time.NanoTime"}],"default":null},
 {"name":"zt","type":["null",{"type":"string","connect.version":1,"connect.name":"io.debezium.time.ZonedTime"}],"default":null},
 {"name":"j","type":["null",{"type":"string","connect.version":1,"connect.name":"io.debezium.data.Json"}],"default":null},
 {"name":"e","type":["null",{"type":"string","connect.version":1,"connect.parameters":{"allowed":"a,b"},"connect.name":"io.debezium.data.Enum"}],"default":null},
 {"name":"u","type":["null",{"type":"string","connect.version":1,"connect.name":"io.debezium.data.Uuid"}],"default":null},
 {"name":"y","type":["null",{"type":"int","connect.version":1,"connect.name":"io.debezium.time.Year"}],"default":null},
 {"name":"bits","type":["null",{"type":"bytes","connect.version":1,"connect.parameters":{"length":"16"},"connect.name":"io.debezium.data.Bits"}],"default":null},
 {"name":"vsd","type":["null",{"type":"record","name":"VariableScaleDecimal","namespace":"io.debezium.data","fields":[{"name":"scale","type":"int"},{"name":"value","type":"bytes"}],"connect.doc":"Variable scaled decimal","connect.version":1,"connect.name":"io.debezium.data.VariableScaleDecimal"}],"default":null},
 {"name":"geo","type":["null",{"type":"record","name":"Geometry","namespace":"io.debezium.data.geometry","fields":[{"name":"wkb","type":"bytes"},{"name":"srid","type":["null","int"],"default":null}],"connect.version":1,"connect.name":"io.debezium.data.geometry.Geometry"}],"default":null},
 {"name":"arr","type":["null",{"type":"array","items":["null","string"]}],"default":null},
 {"name":"decarr","type":["null",{"type":"array","items":["null",{"type":"bytes","scale":2,"precision":6,"connect.version":1,"connect.parameters":{"scale":"2","connect.decimal.precision":"6"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}]}],"default":null},
 {"name":"m","type":["null",{"type":"map","values":["null","string"]}],"default":null}
],"connect.name":"pg.public.t.Value"}`

// avroPGEnvelope wraps a row record as Debezium's PostgreSQL Envelope.
func avroPGEnvelope(value string) string {
	return `{"type":"record","name":"Envelope","namespace":"pg.public.t","fields":[
 {"name":"before","type":["null",` + value + `],"default":null},
 {"name":"after","type":["null","Value"],"default":null},
 {"name":"source","type":{"type":"record","name":"Source","namespace":"io.debezium.connector.postgresql","fields":[
   {"name":"version","type":"string"},{"name":"connector","type":"string"},{"name":"name","type":"string"},
   {"name":"ts_ms","type":"long"},
   {"name":"snapshot","type":[{"type":"string","connect.version":1,"connect.parameters":{"allowed":"true,last,false,incremental"},"connect.default":"false","connect.name":"io.debezium.data.Enum"},"null"],"default":"false"},
   {"name":"db","type":"string"},{"name":"sequence","type":["null","string"],"default":null},
   {"name":"ts_us","type":["null","long"],"default":null},
   {"name":"schema","type":"string"},{"name":"table","type":"string"},
   {"name":"txId","type":["null","long"],"default":null},{"name":"lsn","type":["null","long"],"default":null},
   {"name":"xmin","type":["null","long"],"default":null}],"connect.name":"io.debezium.connector.postgresql.Source"}},
 {"name":"transaction","type":["null",{"type":"record","name":"block","namespace":"event","fields":[{"name":"id","type":"string"},{"name":"total_order","type":"long"},{"name":"data_collection_order","type":"long"}],"connect.version":1,"connect.name":"event.block"}],"default":null},
 {"name":"op","type":"string"},
 {"name":"ts_ms","type":["null","long"],"default":null}
],"connect.version":1,"connect.name":"pg.public.t.Envelope"}`
}

const avroPGKey = `{"type":"record","name":"Key","namespace":"pg.public.t","fields":[{"name":"id","type":"int"}],"connect.name":"pg.public.t.Key"}`

// testRegistry is an srfake registry with its client and a count of
// schema-by-id fetches.
type testRegistry struct {
	reg     *srfake.Registry
	client  *sr.Client
	fetches atomic.Int64
}

func newTestRegistry(t testing.TB) *testRegistry {
	t.Helper()
	tr := &testRegistry{reg: srfake.New()}
	t.Cleanup(tr.reg.Close)
	tr.reg.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasPrefix(r.URL.Path, "/schemas/ids/") {
			tr.fetches.Add(1)
		}
		return false
	})
	cl, err := sr.NewClient(sr.URLs(tr.reg.URL()))
	if err != nil {
		t.Fatal(err)
	}
	tr.client = cl
	return tr
}

// register registers an Avro schema under subject and returns its id and
// the parsed schema for encoding.
func (tr *testRegistry) register(t testing.TB, subject, schema string) (int, avro.Schema) {
	t.Helper()
	ss, err := tr.client.CreateSchema(context.Background(), subject, sr.Schema{Schema: schema, Type: sr.TypeAvro})
	if err != nil {
		t.Fatalf("register %s: %v", subject, err)
	}
	s, err := avro.ParseWithCache(schema, "", &avro.SchemaCache{})
	if err != nil {
		t.Fatal(err)
	}
	return ss.ID, s
}

// wire encodes v with s in the Confluent wire format.
func wire(t testing.TB, id int, s avro.Schema, v any) []byte {
	t.Helper()
	// A fresh config per call: hamba caches codecs by schema name, and
	// two versions of one record name must not share one.
	body, err := avro.Config{}.Freeze().Marshal(s, v)
	if err != nil {
		t.Fatal(err)
	}
	out := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[1:], uint32(id))
	return append(out, body...)
}

func pgSource(lsn int64, snapshot string) map[string]any {
	return map[string]any{"version": "2.7.0.Final", "connector": "postgresql", "name": "pg", "ts_ms": int64(1700000000123),
		"snapshot": snapshot, "db": "db", "sequence": `["900","` + big.NewInt(lsn).String() + `"]`, "ts_us": int64(1700000000123456),
		"schema": "public", "table": "t", "txId": int64(42), "lsn": lsn, "xmin": nil}
}

// pgRow is an Avro row: id plus the given columns (others null).
func pgRow(id int32, cols map[string]any) map[string]any {
	row := map[string]any{"id": id}
	for _, f := range []string{"i8", "i16", "i64", "f32", "f64", "b", "s", "raw", "dec", "bigdec", "avrodec", "d", "cd", "ts", "cts", "uts", "nts", "zts", "t", "ut", "nt", "zt", "j", "e", "u", "y", "bits", "vsd", "geo", "arr", "decarr", "m"} {
		row[f] = nil
	}
	for k, v := range cols {
		row[k] = v
	}
	return map[string]any{"pg.public.t.Value": row}
}

func pgEnvelope(op string, before, after map[string]any, lsn int64) map[string]any {
	var b, a any
	if before != nil {
		b = before
	}
	if after != nil {
		a = after
	}
	return map[string]any{"before": b, "after": a, "source": pgSource(lsn, "false"),
		"transaction": map[string]any{"event.block": map[string]any{"id": "42:1000", "total_order": int64(3), "data_collection_order": int64(1)}},
		"op":          op, "ts_ms": int64(1700000000200)}
}

type avroFixture struct {
	tr             *testRegistry
	keyID, valueID int
	keyS, valueS   avro.Schema
}

func newAvroFixture(t testing.TB) *avroFixture {
	f := &avroFixture{tr: newTestRegistry(t)}
	f.keyID, f.keyS = f.tr.register(t, "pg.public.t-key", avroPGKey)
	f.valueID, f.valueS = f.tr.register(t, "pg.public.t-value", avroPGEnvelope(avroPGValue))
	return f
}

func (f *avroFixture) key(t testing.TB, id int32) []byte {
	return wire(t, f.keyID, f.keyS, map[string]any{"id": id})
}

func (f *avroFixture) value(t testing.TB, v map[string]any) []byte {
	return wire(t, f.valueID, f.valueS, v)
}

func TestAvroEnvelopeAllTypes(t *testing.T) {
	f := newAvroFixture(t)
	geo := []byte{1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f}
	uuid := []byte{0x65, 0x1a, 0xed, 0x08, 0x39, 0x0f, 0x48, 0x93, 0xb2, 0xf1, 0x36, 0x92, 0x3e, 0x7b, 0x74, 0x00}
	after := pgRow(1, map[string]any{
		"i8": int32(-128), "i16": int32(32767), "i64": int64(math.MaxInt64), "f32": float32(123.102), "f64": 0.1,
		"b": true, "s": "héllo", "raw": []byte{1, 2, 3},
		"dec":     big.NewRat(-200, 100),                                       // -2.00 at scale 2: unscaled 0xFF38
		"bigdec":  new(big.Rat).SetFrac64(345678921, 10),                       // 34567892.1, precision 65
		"avrodec": new(big.Rat).SetInt(new(big.Int).SetUint64(math.MaxUint64)), // BIGINT UNSIGNED
		"d":       int32(-1), "cd": time.Unix(-719162*86400, 0).UTC(),          // 1969-12-31; 0001-01-01 (Avro date)
		"ts": int64(-1), "cts": time.UnixMilli(-1).UTC(), "uts": int64(-1), "nts": int64(-1), // pre-1970 instants
		"zts": "1969-12-31T23:59:59.999999-01:00", "t": int32(64822000), "ut": int64(64822000001), "nt": int64(86399999999999),
		"zt": "01:00:00.5+02:00", "j": `{"a": 1}`, "e": "a", "u": "651aed08-390f-4893-b2f1-36923e7b7400", "y": int32(2021),
		// BIT(16) 5, least significant byte first: stored 00 05 (TestBitsDatabaseOrder)
		"bits":   []byte{0x05, 0x00},
		"vsd":    map[string]any{"io.debezium.data.VariableScaleDecimal": map[string]any{"scale": int32(3), "value": []byte{0xfe, 0x0c}}}, // -500 at scale 3
		"geo":    map[string]any{"io.debezium.data.geometry.Geometry": map[string]any{"wkb": geo, "srid": int32(4326)}},
		"arr":    []any{"x", nil, ""},
		"decarr": []any{big.NewRat(150, 100), nil},
		"m":      map[string]any{"map": map[string]any{"k": "v"}},
	})
	d := NewDecoder(DecoderOptions{Registry: f.tr.client}) // key columns from the Avro key
	f.tr.fetches.Store(0)
	got, err := d.Decode(Record{Topic: "pg.public.t", Partition: 3, Offset: 7, Key: f.key(t, 1), Value: f.value(t, pgEnvelope("c", nil, after, 1000))})
	if err != nil {
		t.Fatal(err)
	}
	e := got.Event
	if got.Kind != KindChange || got.RawOp != "c" || e.Op != cdc.OpCreate || e.Before != nil {
		t.Fatalf("%+v %+v", got, e)
	}
	if e.Seq != cdc.PostgresSeq(1000, 1000) || e.TxID != "42" || e.SourceTs != 1700000000123456 || e.Snapshot != cdc.SnapshotNone {
		t.Errorf("seq %v tx %q ts %d snap %d", e.Seq, e.TxID, e.SourceTs, e.Snapshot)
	}
	if e.Key != mustKey(t, cdc.Int(1)) || e.Origin != (cdc.Origin{Topic: "pg.public.t", Partition: 3, Offset: 7}) {
		t.Errorf("key %x origin %+v", e.Key, e.Origin)
	}
	if kc := d.KeyColumns(); len(kc) != 1 || kc[0] != "id" {
		t.Errorf("key columns %v", kc)
	}
	want := map[string]cdc.Value{
		"id": cdc.Int(1), "i8": cdc.Int(-128), "i16": cdc.Int(32767), "i64": cdc.Int(math.MaxInt64),
		"f32": cdc.Float(float64(float32(123.102))), "f64": cdc.Float(0.1), "b": cdc.Bool(true), "s": cdc.String("héllo"),
		"raw": cdc.Bytes([]byte{1, 2, 3}), "dec": cdc.Decimal(-200, 2), "bigdec": cdc.String("34567892.1"),
		"avrodec": cdc.BigDecimal("18446744073709551615", 0),
		"d":       cdc.Date(-1), "cd": cdc.Date(-719162),
		"ts": cdc.Timestamp(-1000), "cts": cdc.Timestamp(-1000), "uts": cdc.Timestamp(-1), "nts": cdc.Timestamp(-1),
		"zts": cdc.TimestampTZ(3600_000_000 - 1), // 1969-12-31T23:59:59.999999-01:00 = 1970-01-01T00:59:59.999999Z
		"t":   cdc.Time(64822000000), "ut": cdc.Time(64822000001), "nt": cdc.Time(86399999999),
		"zt": cdc.Time(23*3600_000_000 + 500_000), // 01:00:00.5+02:00 = 23:00:00.5 UTC
		"j":  cdc.String(`{"a": 1}`), "e": cdc.String("a"), "u": {Kind: cdc.KindUUID, S: string(uuid)}, "y": cdc.Int(2021),
		"bits": cdc.Bytes([]byte{0, 5}), "vsd": cdc.String("-0.500"), "geo": cdc.Bytes(geo),
		"arr": cdc.List(cdc.String("x"), cdc.Null(), cdc.String("")), "decarr": cdc.List(cdc.Decimal(150, 2), cdc.Null()),
		"m": cdc.String(`{"k":"v"}`),
	}
	for name, w := range want {
		wantValue(t, name, get(t, e.After, name), w)
	}
	if len(e.After.Vals) != len(want) {
		t.Errorf("%d columns, want %d", len(e.After.Vals), len(want))
	}
	types := map[string]cdc.Type{
		"id": cdc.TypeInt, "i8": cdc.TypeInt, "i64": cdc.TypeLong, "f32": cdc.TypeFloat, "dec": cdc.DecimalType(10, 2),
		"bigdec": cdc.TypeString, "avrodec": cdc.DecimalType(20, 0), "d": cdc.TypeDate, "cts": cdc.TypeTimestamp,
		"zts": cdc.TypeTimestampTZ, "zt": cdc.TypeTime, "u": cdc.TypeUUID, "y": cdc.TypeInt, "bits": cdc.TypeBinary,
		"vsd": cdc.TypeString, "geo": cdc.TypeBinary, "arr": cdc.ListType(cdc.TypeString), "decarr": cdc.ListType(cdc.DecimalType(6, 2)),
		"m": cdc.TypeString,
	}
	for _, c := range e.Schema {
		if w, ok := types[c.Name]; ok && c.Type != w {
			t.Errorf("column %s type %v, want %v", c.Name, c.Type, w)
		}
		if c.Name == "id" && c.Optional || c.Name == "s" && !c.Optional {
			t.Errorf("column %+v optionality", c)
		}
	}
	if e.Schema[9].Source != logicalDecimal || e.Schema[12].Source != logicalDate {
		t.Errorf("sources %q %q", e.Schema[9].Source, e.Schema[12].Source)
	}

	// The schema was fetched once per id (key and value), and later
	// records use the cache; they share the schema slice.
	got2, err := d.Decode(Record{Key: f.key(t, 1), Value: f.value(t, pgEnvelope("u", after, after, 1001))})
	if err != nil {
		t.Fatal(err)
	}
	if got2.Event.Before == nil || &got2.Event.Schema[0] != &e.Schema[0] || got2.Event.After.Cols != e.After.Cols {
		t.Error("second record: before image or shared schema missing")
	}
	if n := f.tr.fetches.Load(); n != 2 {
		t.Errorf("%d schema fetches, want 2 (key and value, once each)", n)
	}
}

func TestAvroDeleteTruncateTombstone(t *testing.T) {
	f := newAvroFixture(t)
	d := NewDecoder(DecoderOptions{Registry: f.tr.client, KeyColumns: []string{"id"}})
	// A delete with a key-only before image (default replica identity).
	got, err := d.Decode(Record{Key: f.key(t, 7), Value: f.value(t, pgEnvelope("d", pgRow(7, nil), nil, 2000))})
	if err != nil {
		t.Fatal(err)
	}
	if got.Event.Op != cdc.OpDelete || got.Event.Key != mustKey(t, cdc.Int(7)) || got.Event.After != nil || got.Event.Seq != cdc.PostgresSeq(2000, 2000) {
		t.Errorf("%+v", got.Event)
	}
	// A delete without a before image takes its key from the Avro key.
	got, err = d.Decode(Record{Key: f.key(t, 8), Value: f.value(t, pgEnvelope("d", nil, nil, 2001))})
	if err != nil || got.Event.Key != mustKey(t, cdc.Int(8)) || got.Event.Before != nil {
		t.Fatalf("%v %+v", err, got.Event)
	}
	// Truncate: no images.
	tr := pgEnvelope("t", nil, nil, 2002)
	got, err = d.Decode(Record{Value: f.value(t, tr)})
	if err != nil || got.Kind != KindTruncate || got.Event.Seq != cdc.PostgresSeq(2002, 2002) || got.Event.TxID != "42" {
		t.Fatalf("truncate: %v %+v", err, got)
	}
	// A Kafka tombstone (null value) after a delete.
	if got, err = d.Decode(Record{Key: f.key(t, 7)}); err != nil || got.Kind != KindTombstone {
		t.Errorf("tombstone: %v %+v", err, got)
	}
	// A snapshot read.
	snap := pgEnvelope("r", nil, pgRow(9, nil), 3000)
	snap["source"].(map[string]any)["snapshot"] = "last"
	got, err = d.Decode(Record{Value: f.value(t, snap)})
	if err != nil || got.Event.Op != cdc.OpRead || got.Event.Snapshot != cdc.SnapshotLast {
		t.Errorf("snapshot: %v %+v", err, got.Event)
	}
}

func TestAvroSchemaEvolution(t *testing.T) {
	f := newAvroFixture(t)
	v2 := strings.Replace(avroPGValue, `{"name":"m",`, `{"name":"added","type":["null","string"],"default":null},{"name":"m",`, 1)
	id2, s2 := f.tr.register(t, "pg.public.t-value", avroPGEnvelope(v2))
	if id2 == f.valueID {
		t.Fatal("same id for a new schema")
	}
	d := NewDecoder(DecoderOptions{Registry: f.tr.client, KeyColumns: []string{"id"}})
	old, err := d.Decode(Record{Value: f.value(t, pgEnvelope("c", nil, pgRow(1, map[string]any{"s": "v1"}), 10))})
	if err != nil {
		t.Fatal(err)
	}
	row2 := pgRow(2, map[string]any{"s": "v2", "added": "new"})
	nw, err := d.Decode(Record{Value: wire(t, id2, s2, pgEnvelope("c", nil, row2, 11))})
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, "v1 s", get(t, old.Event.After, "s"), cdc.String("v1"))
	wantValue(t, "v2 added", get(t, nw.Event.After, "added"), cdc.String("new"))
	if len(nw.Event.Schema) != len(old.Event.Schema)+1 || nw.Event.Schema[len(nw.Event.Schema)-2].Name != "added" {
		t.Errorf("evolved schema %v", nw.Event.Schema)
	}
}

func TestAvroErrors(t *testing.T) {
	f := newAvroFixture(t)
	rec := func(v []byte) Record { return Record{Topic: "pg.public.t", Partition: 1, Offset: 42, Value: v} }
	good := f.value(t, pgEnvelope("c", nil, pgRow(1, nil), 10))
	unknown := append([]byte{}, good...)
	binary.BigEndian.PutUint32(unknown[1:5], 9999)
	otherType := []byte{0, 0, 0, 0, 0}
	pid, err := f.tr.client.CreateSchema(context.Background(), "json-value", sr.Schema{Schema: `{"type":"object"}`, Type: sr.TypeJSON})
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint32(otherType[1:5], uint32(pid.ID))
	badUnion := append([]byte{}, good[:5]...)
	badUnion = append(badUnion, 0x08) // before: union branch 4 of 2
	cases := []struct {
		name  string
		value []byte
		opts  DecoderOptions
		want  string
	}{
		{"unknown schema id", unknown, DecoderOptions{Registry: f.tr.client, KeyColumns: []string{"id"}}, "schema id 9999 is not registered"},
		{"no registry", good, DecoderOptions{KeyColumns: []string{"id"}}, "no schema registry is configured"},
		{"short frame", []byte{0, 0, 0}, DecoderOptions{Registry: f.tr.client}, "Confluent wire format"},
		{"truncated body", good[:len(good)-3], DecoderOptions{Registry: f.tr.client, KeyColumns: []string{"id"}}, "malformed Avro"},
		{"trailing bytes", append(append([]byte{}, good...), 1, 2), DecoderOptions{Registry: f.tr.client, KeyColumns: []string{"id"}}, "trailing bytes"},
		{"bad union branch", badUnion, DecoderOptions{Registry: f.tr.client, KeyColumns: []string{"id"}}, "union branch 4 of 2"},
		{"not an Avro schema", append(otherType, 2), DecoderOptions{Registry: f.tr.client}, "not Avro"},
		{"missing key column", good, DecoderOptions{Registry: f.tr.client, KeyColumns: []string{"nope"}}, `key column "nope" is missing`},
	}
	// An unknown id is asked for once a minute, not once per record.
	d := NewDecoder(DecoderOptions{Registry: f.tr.client, KeyColumns: []string{"id"}})
	f.tr.fetches.Store(0)
	for range 3 {
		_, err := d.Decode(rec(unknown))
		asDecodeError(t, err)
	}
	if n := f.tr.fetches.Load(); n != 1 {
		t.Errorf("%d fetches of an unknown id, want 1", n)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewDecoder(c.opts).Decode(rec(c.value))
			de := asDecodeError(t, err)
			if de.Topic != "pg.public.t" || de.Partition != 1 || de.Offset != 42 || !strings.Contains(de.Reason, c.want) {
				t.Errorf("%+v, want reason %q", de, c.want)
			}
		})
	}
	// A registry that cannot be reached is not the record's fault: a
	// *RegistryError (retry), not a *DecodeError (quarantine).
	dead := srfake.New()
	cl, _ := sr.NewClient(sr.URLs(dead.URL()), sr.HTTPClient(&http.Client{}))
	dead.Close()
	_, err = NewDecoder(DecoderOptions{Registry: cl}).Decode(rec(good))
	var re *RegistryError
	if !errors.As(err, &re) || re.SchemaID != f.valueID || re.Offset != 42 {
		t.Fatalf("unreachable registry: %v (%T)", err, err)
	}
	var de *DecodeError
	if errors.As(err, &de) {
		t.Error("a registry outage must not be a DecodeError")
	}
	t.Log(err)
}

// Flattened (ExtractNewRecordState) Avro values and transaction metadata.
func TestAvroFlattenedAndTxMetadata(t *testing.T) {
	tr := newTestRegistry(t)
	flat := `{"type":"record","name":"Value","namespace":"my.inventory.customers","fields":[
	 {"name":"id","type":"int"},{"name":"email","type":["null","string"],"default":null},
	 {"name":"__op","type":["null","string"],"default":null},{"name":"__source_file","type":["null","string"],"default":null},
	 {"name":"__source_pos","type":["null","long"],"default":null},{"name":"__source_row","type":["null","int"],"default":null},
	 {"name":"__source_ts_ms","type":["null","long"],"default":null},{"name":"__table","type":["null","string"],"default":null},
	 {"name":"__deleted","type":["null","string"],"default":null}]}`
	id, s := tr.register(t, "my.inventory.customers-value", flat)
	d := NewDecoder(DecoderOptions{Registry: tr.client, KeyColumns: []string{"id"}})
	row := func(op, deleted string, pos int64) map[string]any {
		return map[string]any{"id": int32(1004), "email": "a@b.c", "__op": op, "__source_file": "mysql-bin.000003", "__source_pos": pos,
			"__source_row": int32(0), "__source_ts_ms": int64(1718486007000), "__table": "customers", "__deleted": deleted}
	}
	got, err := d.Decode(Record{Value: wire(t, id, s, row("u", "false", 500))})
	if err != nil {
		t.Fatal(err)
	}
	e := got.Event
	if e.Op != cdc.OpUpdate || e.Seq != cdc.MySQLSeq(3, 500, 0) || e.SourceTs != 1718486007000000 || e.After == nil || e.After.Cols.Len() != 2 {
		t.Fatalf("%+v", e)
	}
	wantValue(t, "email", get(t, e.After, "email"), cdc.String("a@b.c"))
	got, err = d.Decode(Record{Value: wire(t, id, s, row("d", "true", 632))})
	if err != nil || got.Event.Op != cdc.OpDelete || got.Event.Before == nil || got.Event.After != nil || got.Event.Key != mustKey(t, cdc.Int(1004)) {
		t.Fatalf("%v %+v", err, got.Event)
	}

	txs := `{"type":"record","name":"TransactionMetadataValue","namespace":"io.debezium.connector.common","fields":[
	 {"name":"status","type":"string"},{"name":"id","type":"string"},{"name":"event_count","type":["null","long"],"default":null},
	 {"name":"ts_ms","type":"long"}]}`
	tid, ts := tr.register(t, "pg.transaction-value", txs)
	got, err = d.Decode(Record{Value: wire(t, tid, ts, map[string]any{"status": "END", "id": "571:53195829", "event_count": int64(2), "ts_ms": int64(1)})})
	if err != nil || got.Kind != KindTxMetadata || got.Event != nil {
		t.Errorf("tx metadata: %v %+v", err, got)
	}
}

// The same change as Avro and as JSON (JsonConverter with schemas)
// decodes to the same event: position, key, times, values and types.
func TestAvroJSONTwins(t *testing.T) {
	f := newAvroFixture(t)
	jsonFields := []string{
		`{"type":"int32","optional":false,"field":"id"}`,
		logical("bytes", "org.apache.kafka.connect.data.Decimal", "dec", `,"parameters":{"scale":"2","connect.decimal.precision":"10"}`),
		logical("int32", "io.debezium.time.Date", "d", ""),
		logical("int64", "io.debezium.time.MicroTimestamp", "uts", ""),
		logical("string", "io.debezium.time.ZonedTimestamp", "zts", ""),
		`{"type":"struct","fields":[{"type":"int32","optional":false,"field":"scale"},{"type":"bytes","optional":false,"field":"value"}],"optional":true,"name":"io.debezium.data.VariableScaleDecimal","version":1,"field":"vsd"}`,
		`{"type":"array","items":{"type":"string","optional":true},"optional":true,"field":"arr"}`,
		field("string", "s", ""),
	}
	jsonAfter := `{"id":5,"dec":"/zg=","d":-3,"uts":-5,"zts":"1960-01-01T00:00:00Z","vsd":{"scale":3,"value":"/gw="},"arr":["x",null],"s":"__debezium_unavailable_value"}`
	jsonEvent, err := NewDecoder(idKey).Decode(Record{Value: []byte(envelopeRecord(jsonFields, "null", jsonAfter, "c"))})
	if err != nil {
		t.Fatal(err)
	}
	src := pgSource(1000, "false")
	src["ts_ms"], src["ts_us"], src["txId"] = int64(1700000000000), nil, int64(5)
	env := pgEnvelope("c", nil, pgRow(5, map[string]any{
		"dec": big.NewRat(-200, 100), "d": int32(-3), "uts": int64(-5), "zts": "1960-01-01T00:00:00Z",
		"vsd": map[string]any{"io.debezium.data.VariableScaleDecimal": map[string]any{"scale": int32(3), "value": []byte{0xfe, 0x0c}}},
		"arr": []any{"x", nil}, "s": "__debezium_unavailable_value",
	}), 1000)
	env["source"] = src
	avroEvent, err := NewDecoder(DecoderOptions{Registry: f.tr.client, KeyColumns: []string{"id"}}).Decode(Record{Value: f.value(t, env)})
	if err != nil {
		t.Fatal(err)
	}
	a, j := avroEvent.Event, jsonEvent.Event
	if a.Seq != j.Seq || a.Key != j.Key || a.SourceTs != j.SourceTs || a.TxID != j.TxID || a.Op != j.Op || a.Snapshot != j.Snapshot {
		t.Fatalf("avro %+v\njson %+v", a, j)
	}
	for i, name := range j.After.Cols.Names {
		wantValue(t, "twin "+name, get(t, a.After, name), j.After.Vals[i])
		for _, c := range a.Schema {
			if c.Name == name && c.Type != j.Schema[i].Type {
				t.Errorf("twin %s: avro type %v, json type %v", name, c.Type, j.Schema[i].Type)
			}
		}
	}
	wantValue(t, "zts before 1970", get(t, a.After, "zts"), cdc.TimestampTZ(-315619200000000))
	wantValue(t, "TOAST in Avro", get(t, a.After, "s"), cdc.Unavailable())
}
