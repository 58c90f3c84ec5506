package schemas

import (
	"encoding/base64"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// envelopeRecord builds a JsonConverter {"schema","payload"} record of a
// PostgreSQL event whose row struct has the given field schemas.
func envelopeRecord(fields []string, before, after, op string) string {
	row := `{"type":"struct","fields":[` + strings.Join(fields, ",") + `],"optional":true,"name":"pg.public.t.Value","field":"%s"}`
	schema := `{"type":"struct","fields":[` + fmt.Sprintf(row, "before") + `,` + fmt.Sprintf(row, "after") +
		`,{"type":"struct","fields":[{"type":"string","optional":false,"field":"connector"},{"type":"int64","optional":false,"field":"ts_ms"},{"type":"int64","optional":true,"field":"lsn"}],"optional":false,"name":"io.debezium.connector.postgresql.Source","field":"source"},{"type":"string","optional":false,"field":"op"}],"optional":false,"name":"pg.public.t.Envelope","version":1}`
	payload := `{"before":` + before + `,"after":` + after + `,"source":{"version":"2.5.0.Final","connector":"postgresql","ts_ms":1700000000000,"snapshot":"false","txId":5,"lsn":1000,"sequence":"[\"900\",\"1000\"]"},"op":"` + op + `","ts_ms":1700000000001}`
	return `{"schema":` + schema + `,"payload":` + payload + `}`
}

func field(typ, name, extra string) string {
	return `{"type":"` + typ + `","optional":true` + extra + `,"field":"` + name + `"}`
}

func logical(typ, lname, name, extra string) string {
	return field(typ, name, `,"name":"`+lname+`","version":1`+extra)
}

var allTypeFields = []string{
	`{"type":"int32","optional":false,"field":"id"}`,
	field("int8", "i8", ""),
	field("int16", "i16", ""),
	field("int64", "i64", ""),
	field("float", "f32", ""),
	field("double", "f64", ""),
	field("boolean", "b", ""),
	field("string", "s", ""),
	field("bytes", "raw", ""),
	logical("bytes", "org.apache.kafka.connect.data.Decimal", "dec", `,"parameters":{"scale":"2","connect.decimal.precision":"10"}`),
	logical("bytes", "org.apache.kafka.connect.data.Decimal", "decnum", `,"parameters":{"scale":"3"}`),
	logical("int32", "io.debezium.time.Date", "d", ""),
	logical("int32", "org.apache.kafka.connect.data.Date", "cd", ""),
	logical("int64", "io.debezium.time.Timestamp", "ts", ""),
	logical("int64", "org.apache.kafka.connect.data.Timestamp", "cts", ""),
	logical("int64", "io.debezium.time.MicroTimestamp", "uts", ""),
	logical("int64", "io.debezium.time.NanoTimestamp", "nts", ""),
	logical("string", "io.debezium.time.ZonedTimestamp", "zts", ""),
	logical("int32", "io.debezium.time.Time", "t", ""),
	logical("int64", "io.debezium.time.MicroTime", "ut", ""),
	logical("int64", "io.debezium.time.NanoTime", "nt", ""),
	logical("string", "io.debezium.data.Json", "j", ""),
	logical("string", "io.debezium.data.Xml", "x", ""),
	logical("string", "io.debezium.data.Enum", "e", `,"parameters":{"allowed":"a,b"}`),
	logical("string", "io.debezium.data.EnumSet", "es", `,"parameters":{"allowed":"a,b"}`),
	logical("string", "io.debezium.data.Uuid", "u", ""),
	logical("int32", "io.debezium.time.Year", "y", ""),
	`{"type":"struct","fields":[{"type":"int32","optional":false,"field":"scale"},{"type":"bytes","optional":false,"field":"value"}],"optional":true,"name":"io.debezium.data.VariableScaleDecimal","version":1,"field":"vsd"}`,
	`{"type":"array","items":{"type":"string","optional":true},"optional":true,"field":"arr"}`,
}

const allTypeAfter = `{"id":1,"i8":-128,"i16":32767,"i64":9223372036854775807,"f32":123.102,"f64":1,"b":true,"s":"héllo",` +
	`"raw":"AQID","dec":"/zg=","decnum":12.5,"d":-1,"cd":18460,"ts":1595008822123,"cts":-1,"uts":1595008822123456,` +
	`"nts":-1,"zts":"2020-07-17T20:00:22.123456789+02:00","t":64822000,"ut":64822000001,"nt":-1,"j":"{\"a\": 1}","x":"<a/>",` +
	`"e":"a","es":"a,b","u":"651aed08-390f-4893-b2f1-36923e7b7400","y":2021,"vsd":{"scale":2,"value":"AQ=="},"arr":["x",null]}`

func TestConnectTypes(t *testing.T) {
	d := NewDecoder(idKey)
	got, err := d.Decode(Record{Value: []byte(envelopeRecord(allTypeFields, "null", allTypeAfter, "c"))})
	if err != nil {
		t.Fatal(err)
	}
	e := got.Event
	if e.Seq != cdc.PostgresSeq(1000, 1000) || e.TxID != "5" {
		t.Errorf("seq %v tx %q", e.Seq, e.TxID)
	}
	a := e.After
	uuid := []byte{0x65, 0x1a, 0xed, 0x08, 0x39, 0x0f, 0x48, 0x93, 0xb2, 0xf1, 0x36, 0x92, 0x3e, 0x7b, 0x74, 0x00}
	want := map[string]cdc.Value{
		"id":     cdc.Int(1),
		"i8":     cdc.Int(-128),
		"i16":    cdc.Int(32767),
		"i64":    cdc.Int(math.MaxInt64),
		"f32":    cdc.Float(float64(float32(123.102))),
		"f64":    cdc.Float(1),
		"b":      cdc.Bool(true),
		"s":      cdc.String("héllo"),
		"raw":    cdc.Bytes([]byte{1, 2, 3}),
		"dec":    cdc.Decimal(-200, 2), // 0xFF38 = -200
		"decnum": cdc.Decimal(12500, 3),
		"d":      cdc.Date(-1),
		"cd":     cdc.Date(18460),
		"ts":     cdc.Timestamp(1595008822123000),
		"cts":    cdc.Timestamp(-1000),
		"uts":    cdc.Timestamp(1595008822123456),
		"nts":    cdc.Timestamp(-1), // -1 ns floors to -1 µs
		"zts":    cdc.TimestampTZ(1595008822123456),
		"t":      cdc.Time(64822000000),
		"ut":     cdc.Time(64822000001),
		"nt":     cdc.Time(-1),
		"j":      cdc.String(`{"a": 1}`),
		"x":      cdc.String("<a/>"),
		"e":      cdc.String("a"),
		"es":     cdc.String("a,b"),
		"u":      {Kind: cdc.KindUUID, S: string(uuid)},
		"y":      cdc.Int(2021),
		"vsd":    cdc.String("0.01"),                    // VariableScaleDecimal: exact decimal text (unscaled 1, scale 2)
		"arr":    cdc.List(cdc.String("x"), cdc.Null()), // Connect array → list
	}
	for name, w := range want {
		wantValue(t, name, get(t, a, name), w)
	}
	types := map[string]cdc.Column{
		"id":     {Name: "id", Type: cdc.TypeInt, Source: "int32"},
		"i64":    {Name: "i64", Type: cdc.TypeLong, Optional: true, Source: "int64"},
		"f32":    {Name: "f32", Type: cdc.TypeFloat, Optional: true, Source: "float"},
		"dec":    {Name: "dec", Type: cdc.DecimalType(10, 2), Optional: true, Source: "org.apache.kafka.connect.data.Decimal"},
		"decnum": {Name: "decnum", Type: cdc.DecimalType(38, 3), Optional: true, Source: "org.apache.kafka.connect.data.Decimal"},
		"zts":    {Name: "zts", Type: cdc.TypeTimestampTZ, Optional: true, Source: "io.debezium.time.ZonedTimestamp"},
		"u":      {Name: "u", Type: cdc.TypeUUID, Optional: true, Source: "io.debezium.data.Uuid"},
		"y":      {Name: "y", Type: cdc.TypeInt, Optional: true, Source: "io.debezium.time.Year"},
		"vsd":    {Name: "vsd", Type: cdc.TypeString, Optional: true, Source: "io.debezium.data.VariableScaleDecimal"},
		"arr":    {Name: "arr", Type: cdc.ListType(cdc.TypeString), Optional: true, Source: "array"},
	}
	for _, c := range e.Schema {
		if w, ok := types[c.Name]; ok && c != w {
			t.Errorf("column %+v, want %+v", c, w)
		}
	}
	if len(e.Schema) != len(allTypeFields) {
		t.Errorf("%d columns", len(e.Schema))
	}

	// The second event with the same schema bytes shares the schema slice
	// and columns; a re-formatted equal schema shares them too.
	got2, err := d.Decode(Record{Value: []byte(envelopeRecord(allTypeFields, allTypeAfter, allTypeAfter, "u"))})
	if err != nil {
		t.Fatal(err)
	}
	if &got2.Event.Schema[0] != &e.Schema[0] || got2.Event.After.Cols != a.Cols || got2.Event.Before.Cols != a.Cols {
		t.Error("same schema bytes, new schema slice")
	}
	spaced := strings.Replace(envelopeRecord(allTypeFields, "null", allTypeAfter, "c"), `"fields":[`, `"fields" : [ `, -1)
	got3, err := d.Decode(Record{Value: []byte(spaced)})
	if err != nil {
		t.Fatal(err)
	}
	if &got3.Event.Schema[0] != &e.Schema[0] {
		t.Error("equal schema in other formatting, new schema slice")
	}

	// Fields in another order than the schema's are matched by name.
	reordered := `{"i8":-128,"id":1}`
	got4, err := d.Decode(Record{Value: []byte(envelopeRecord(allTypeFields, "null", reordered, "c"))})
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, "reordered i8", get(t, got4.Event.After, "i8"), cdc.Int(-128))
	wantValue(t, "missing optional", get(t, got4.Event.After, "s"), cdc.Null())
}

func TestConnectTypeErrors(t *testing.T) {
	for _, c := range []struct{ after, reason string }{
		{`{"id":1,"i8":128}`, "after.i8: 128 out of range [-128, 127]"},
		{`{"id":2147483648}`, "after.id: 2147483648 out of range"},
		{`{"id":1,"i64":9223372036854775808}`, "after.i64: 9223372036854775808 out of int64 range"},
		{`{"id":1,"b":1}`, "after.b: want a boolean, got a number"},
		{`{"id":1,"dec":12.345}`, "after.dec: 12.345 does not fit decimal(10,2)"},
		{`{"id":1,"dec":"!!"}`, "after.dec: invalid base64"},
		{`{"id":1,"raw":"%%%"}`, "after.raw: invalid base64"},
		{`{"id":1,"zts":"2020-07-17 25:00"}`, "after.zts: \"2020-07-17 25:00\" is not an ISO-8601 timestamp"},
		{`{"id":1,"u":"nope"}`, "after.u: \"nope\" is not a UUID"},
		{`{"id":1,"s":5}`, "after.s: want a string, got a number"},
		{`{"id":1,"f64":"x"}`, "after.f64: want a number, got a string"},
		{`{"id":1,"f64":1e999}`, "after.f64: 1e999 out of float64 range"},
		{`{"id":1,"f64":1e-400}`, "after.f64: 1e-400 underflows float64 (it would become 0)"},
		{`{"id":1,"f64":-2.5E-999}`, "after.f64: -2.5E-999 underflows float64 (it would become 0)"},
		{`{"id":1,"nope":1}`, `after.field "nope" is not in the schema`},
		{`{"i8":1}`, `after.required field "id" is missing`},
		{`{"id":1,"ts":9223372036854775807}`, "overflows µs"},
	} {
		_, err := NewDecoder(idKey).Decode(Record{Value: []byte(envelopeRecord(allTypeFields, "null", c.after, "c"))})
		if err == nil {
			t.Errorf("%s: no error", c.after)
			continue
		}
		if de := asDecodeError(t, err); !strings.Contains(de.Reason, c.reason) {
			t.Errorf("%s: reason %q, want %q", c.after, de.Reason, c.reason)
		}
	}
	// Non-finite doubles as Jackson quotes them.
	got, err := NewDecoder(idKey).Decode(Record{Value: []byte(envelopeRecord(allTypeFields, "null", `{"id":1,"f64":"NaN","f32":"-Infinity"}`, "c"))})
	if err != nil {
		t.Fatal(err)
	}
	if f := get(t, got.Event.After, "f64"); !math.IsNaN(f.Float64()) {
		t.Errorf("NaN: %+v", f)
	}
	wantValue(t, "-Infinity", get(t, got.Event.After, "f32"), cdc.Float(math.Inf(-1)))
}

func TestConnectTOASTBytes(t *testing.T) {
	ph := base64.StdEncoding.EncodeToString([]byte(unavailablePlaceholder))
	got, err := NewDecoder(idKey).Decode(Record{Value: []byte(envelopeRecord(allTypeFields, "null",
		`{"id":1,"raw":"`+ph+`","s":"__debezium_unavailable_value","j":"__debezium_unavailable_value","arr":["__debezium_unavailable_value"]}`, "u"))})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"raw", "s", "j", "arr"} {
		wantValue(t, c, get(t, got.Event.After, c), cdc.Unavailable())
	}
}

func TestBigBase64Decimal(t *testing.T) {
	// 20 bytes: beyond int64, negative.
	b := make([]byte, 20)
	for i := range b {
		b[i] = 0xFF
	}
	b[0] = 0x80 // -2^159
	fields := []string{`{"type":"int32","optional":false,"field":"id"}`, logical("bytes", "org.apache.kafka.connect.data.Decimal", "dec", `,"parameters":{"scale":"5","connect.decimal.precision":"60"}`)}
	after := `{"id":1,"dec":"` + base64.StdEncoding.EncodeToString(b) + `"}`
	got, err := NewDecoder(idKey).Decode(Record{Value: []byte(envelopeRecord(fields, "null", after, "c"))})
	if err != nil {
		t.Fatal(err)
	}
	v := get(t, got.Event.After, "dec")
	// 0x80FF…FF = -2^159 + 2^152 - 1; precision 60 exceeds Iceberg's 38:
	// a string column holding the exact text at scale 5.
	if v != cdc.String("-7250418278946276195776092724803435292824352.84993") {
		t.Errorf("%+v", v)
	}
	if c := got.Event.Schema[1]; c.Type != cdc.TypeString || c.Source != "org.apache.kafka.connect.data.Decimal" {
		t.Errorf("column %+v", c)
	}
}
