package schemas

import (
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Connect and Debezium logical types beyond the first slice, through the
// JSON schema envelope: exact values and Iceberg types.

var moreTypeFields = []string{
	`{"type":"int32","optional":false,"field":"id"}`,
	logical("string", "io.debezium.time.ZonedTime", "zt", ""),
	logical("string", "io.debezium.time.ZonedTimestamp", "zts", ""),
	logical("int32", "io.debezium.time.Date", "d", ""),
	logical("int64", "io.debezium.time.Timestamp", "ts", ""),
	logical("int64", "io.debezium.time.MicroTimestamp", "uts", ""),
	logical("int64", "io.debezium.time.NanoTimestamp", "nts", ""),
	logical("int64", "io.debezium.time.NanoTime", "nt", ""),
	logical("int64", "io.debezium.time.MicroDuration", "dur", ""),
	logical("string", "io.debezium.time.Interval", "iv", ""),
	logical("bytes", "io.debezium.data.Bits", "bits", `,"parameters":{"length":"3"}`),
	logical("string", "io.debezium.data.Ltree", "lt", ""),
	logical("bytes", "org.apache.kafka.connect.data.Decimal", "wide", `,"parameters":{"scale":"4","connect.decimal.precision":"39"}`),
	logical("bytes", "org.apache.kafka.connect.data.Decimal", "u64", `,"parameters":{"scale":"0","connect.decimal.precision":"20"}`),
	`{"type":"struct","fields":[{"type":"int32","optional":false,"field":"scale"},{"type":"bytes","optional":false,"field":"value"}],"optional":true,"name":"io.debezium.data.VariableScaleDecimal","version":1,"field":"vsd"}`,
	`{"type":"struct","fields":[{"type":"int32","optional":false,"field":"scale"},{"type":"bytes","optional":false,"field":"value"}],"optional":true,"name":"io.debezium.data.VariableScaleDecimal","version":1,"field":"vsd_declared"}`,
	`{"type":"struct","fields":[{"type":"bytes","optional":false,"field":"wkb"},{"type":"int32","optional":true,"field":"srid"}],"optional":true,"name":"io.debezium.data.geometry.Geography","version":1,"field":"geog"}`,
	`{"type":"struct","fields":[{"type":"double","optional":false,"field":"x"},{"type":"double","optional":false,"field":"y"},{"type":"bytes","optional":true,"field":"wkb"},{"type":"int32","optional":true,"field":"srid"}],"optional":true,"name":"io.debezium.data.geometry.Point","version":1,"field":"pt"}`,
	`{"type":"array","items":{"type":"int32","optional":true},"optional":true,"field":"ints"}`,
	`{"type":"array","items":{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"}},"optional":true,"field":"decs"}`,
	`{"type":"array","items":{"type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp","version":1},"optional":true,"field":"tss"}`,
	`{"type":"array","items":{"type":"string","optional":true,"name":"io.debezium.data.Uuid","version":1},"optional":true,"field":"uuids"}`,
	`{"type":"array","items":{"type":"array","items":{"type":"int32"}},"optional":true,"field":"nested"}`,
	`{"type":"map","keys":{"type":"string"},"values":{"type":"string"},"optional":true,"field":"hstore"}`,
	`{"type":"struct","fields":[{"type":"int32","field":"a"}],"optional":true,"name":"some.Struct","field":"st"}`,
}

func TestMoreConnectTypes(t *testing.T) {
	geog, _ := base64.StdEncoding.DecodeString("AQEAAAAAAAAAAADwPwAAAAAAAPA/")
	after := `{"id":1,"zt":"23:30:00.25-01:00","zts":"1969-12-31T23:59:59.9999995Z","d":-719162,"ts":-1,"uts":-1,"nts":-1001,"nt":1999,` +
		`"dur":-86400000000,"iv":"P1DT2H","bits":"BQ==","lt":"a.b","wide":"AQ==","u64":"AP//////////",` +
		`"vsd":{"scale":3,"value":"/gw="},"vsd_declared":{"scale":1,"value":"DA=="},` +
		`"geog":{"wkb":"AQEAAAAAAAAAAADwPwAAAAAAAPA/","srid":4326},"pt":{"x":1.0,"y":1.0,"wkb":"AQEAAAAAAAAAAADwPwAAAAAAAPA/","srid":null},` +
		`"ints":[1,null,-2147483648],"decs":["AJY=",null],"tss":[-1,0],"uuids":["651aed08-390f-4893-b2f1-36923e7b7400"],` +
		`"nested":[[1],[2,3]],"hstore":{"k":"v"},"st":{"a":1}}`
	d := NewDecoder(DecoderOptions{KeyColumns: []string{"id"}, Columns: []cdc.Column{{Name: "vsd_declared", Type: cdc.DecimalType(10, 2)}}})
	got, err := d.Decode(Record{Value: []byte(envelopeRecord(moreTypeFields, "null", after, "c"))})
	if err != nil {
		t.Fatal(err)
	}
	a := got.Event.After
	uuid := string([]byte{0x65, 0x1a, 0xed, 0x08, 0x39, 0x0f, 0x48, 0x93, 0xb2, 0xf1, 0x36, 0x92, 0x3e, 0x7b, 0x74, 0x00})
	want := map[string]cdc.Value{
		"zt":           cdc.Time(30*60*1_000_000 + 250_000), // 23:30:00.25-01:00 = 00:30:00.25 UTC
		"zts":          cdc.TimestampTZ(-1),                 // 0.5 µs before the epoch floors to -1 µs
		"d":            cdc.Date(-719162),                   // 0001-01-01
		"ts":           cdc.Timestamp(-1000),                // -1 ms
		"uts":          cdc.Timestamp(-1),                   // -1 µs
		"nts":          cdc.Timestamp(-2),                   // -1001 ns floors to -2 µs
		"nt":           cdc.Time(1),                         // 1999 ns floors to 1 µs
		"dur":          cdc.Int(-86400000000),               // MicroDuration: µs as a long
		"iv":           cdc.String("P1DT2H"),                // Interval: ISO text
		"bits":         cdc.Bytes([]byte{5}),                // Bits: bytes as sent
		"lt":           cdc.String("a.b"),                   // Ltree: text
		"wide":         cdc.String("0.0001"),                // precision 39 > 38: exact text
		"u64":          cdc.BigDecimal("18446744073709551615", 0),
		"vsd":          cdc.String("-0.500"), // VariableScaleDecimal: text at its own scale
		"vsd_declared": cdc.Decimal(120, 2),  // declared decimal(10,2): 1.2 rescaled
		"geog":         cdc.Bytes(geog),      // WKB, srid dropped
		"pt":           cdc.Bytes(geog),
		"ints":         cdc.List(cdc.Int(1), cdc.Null(), cdc.Int(-2147483648)),
		"decs":         cdc.List(cdc.Decimal(150, 2), cdc.Null()),
		"tss":          cdc.List(cdc.Timestamp(-1), cdc.Timestamp(0)),
		"uuids":        cdc.List(cdc.Value{Kind: cdc.KindUUID, S: uuid}),
		"nested":       cdc.String(`[[1],[2,3]]`), // arrays of arrays: JSON text
		"hstore":       cdc.String(`{"k":"v"}`),   // maps: JSON text
		"st":           cdc.String(`{"a":1}`),     // other structs: JSON text
	}
	for name, w := range want {
		wantValue(t, name, get(t, a, name), w)
	}
	types := map[string]cdc.Type{
		"zt": cdc.TypeTime, "dur": cdc.TypeLong, "iv": cdc.TypeString, "bits": cdc.TypeBinary, "wide": cdc.TypeString,
		"u64": cdc.DecimalType(20, 0), "vsd": cdc.TypeString, "vsd_declared": cdc.DecimalType(10, 2), "geog": cdc.TypeBinary,
		"pt": cdc.TypeBinary, "ints": cdc.ListType(cdc.TypeInt), "decs": cdc.ListType(cdc.DecimalType(38, 2)),
		"tss": cdc.ListType(cdc.TypeTimestamp), "uuids": cdc.ListType(cdc.TypeUUID), "nested": cdc.TypeString,
		"hstore": cdc.TypeString, "st": cdc.TypeString,
	}
	for _, c := range got.Event.Schema {
		if w, ok := types[c.Name]; ok && c.Type != w {
			t.Errorf("%s: type %v, want %v", c.Name, c.Type, w)
		}
	}
	// Every value is of its column's type.
	for i, c := range got.Event.Schema {
		if v, err := Coerce(a.Vals[i], c.Type); err != nil || !v.Equal(a.Vals[i]) {
			t.Errorf("%s: %+v is not a %v (%v)", c.Name, a.Vals[i], c.Type, err)
		}
	}
	for _, bad := range []struct{ after, reason string }{
		{`{"id":1,"zt":"25:00:00Z"}`, `"25:00:00Z" is not an ISO-8601 time with offset`},
		{`{"id":1,"vsd":{"scale":1}}`, "VariableScaleDecimal without"},
		{`{"id":1,"vsd_declared":{"scale":3,"value":"BNI="}}`, "more than 2 fraction digits"},
		{`{"id":1,"geog":{"srid":4326}}`, `geometry without "wkb"`},
		{`{"id":1,"ints":[1,"x"]}`, "ints: [1]: want an integer"},
		{`{"id":1,"ints":[2147483648]}`, "out of range"},
		{`{"id":1,"ints":{"a":1}}`, "want an array"},
	} {
		_, err := NewDecoder(DecoderOptions{KeyColumns: []string{"id"}, Columns: []cdc.Column{{Name: "vsd_declared", Type: cdc.DecimalType(10, 2)}}}).
			Decode(Record{Value: []byte(envelopeRecord(moreTypeFields, "null", bad.after, "c"))})
		if err == nil || !strings.Contains(err.Error(), bad.reason) {
			t.Errorf("%s: %v, want %q", bad.after, err, bad.reason)
		}
	}
}

// Declared columns (no schema) of the new kinds, and the example table
// definition.
func TestDeclaredNewKinds(t *testing.T) {
	def, err := LoadTableDefinition(filepath.Join("examples", "orders.table.json"))
	if err != nil {
		t.Fatal(err)
	}
	if def.Table != "inventory.orders" || len(def.KeyColumns) != 1 || def.KeyColumns[0] != "order_id" || len(def.Columns) != 16 {
		t.Fatalf("%+v", def)
	}
	img := `{"order_id":1,"customer_id":7,"status":"paid","amount":"AQ==","exact_total":12.5,"weight_kg":1,` +
		`"order_date":-1,"placed_at":-1,"shipped_at":"1969-12-31T23:59:59Z","legacy_ts":-1,"pickup_window":3600000000,` +
		`"tracking_id":"651aed08-390f-4893-b2f1-36923e7b7400","label_pdf":"JVBERg==","delivery_point":{"x":1.0,"y":1.0,"wkb":"AQEAAAAAAAAAAADwPwAAAAAAAPA/","srid":null},` +
		`"line_totals":[1.5,"AJY=",null]}`
	d := NewDecoder(def.Options())
	r, err := d.DecodeImage([]byte(img))
	if err != nil {
		t.Fatal(err)
	}
	wkb, _ := base64.StdEncoding.DecodeString("AQEAAAAAAAAAAADwPwAAAAAAAPA/")
	want := map[string]cdc.Value{
		"order_id": cdc.Int(1), "customer_id": cdc.Int(7), "status": cdc.String("paid"), "amount": cdc.Decimal(1, 2),
		"exact_total": cdc.String("12.5000"), "weight_kg": cdc.Float(1), "order_date": cdc.Date(-1), "placed_at": cdc.Timestamp(-1),
		"shipped_at": cdc.TimestampTZ(-1_000_000), "legacy_ts": cdc.Timestamp(-1000), "pickup_window": cdc.Time(3600000000),
		"label_pdf": cdc.Bytes([]byte("%PDF")), "delivery_point": cdc.Bytes(wkb),
		"line_totals": cdc.List(cdc.Decimal(150, 2), cdc.Decimal(150, 2), cdc.Null()),
	}
	for name, w := range want {
		wantValue(t, name, get(t, r, name), w)
	}
	// "tags" holds a placeholder inside a longer array: not a TOAST marker.
	if _, err := d.DecodeImage([]byte(`{"order_id":1,"tags":["a","__debezium_unavailable_value"]}`)); err == nil {
		t.Error("a TOAST placeholder inside an array must be an error")
	}
	r, err = d.DecodeImage([]byte(`{"order_id":1,"tags":["__debezium_unavailable_value"]}`))
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, "TOASTed tags", get(t, r, "tags"), cdc.Unavailable())
	// Event.Schema is the declaration, with decimal(65,4) as string.
	for _, c := range d.declared {
		if c.Name == "exact_total" && c.Type != cdc.TypeString {
			t.Errorf("exact_total reported as %v", c.Type)
		}
	}
	for _, bad := range []string{
		`{"columns":[]}`,
		`{"columns":[{"name":"a","type":"varchar"}]}`,
		`{"columns":[{"name":"a","type":"decimal(5,6)"}]}`,
		`{"columns":[{"name":"a","type":"list<list<int>>"}]}`,
		`{"columns":[{"name":"a","type":"int"},{"name":"a","type":"int"}]}`,
		`{"key":["b"],"columns":[{"name":"a","type":"int"}]}`,
		`{"columns":[{"name":"a","type":"int","extra":1}]}`,
	} {
		if _, err := ParseTableDefinition([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	for _, s := range []string{"boolean", "int", "long", "float", "double", "string", "binary", "decimal(10,2)", "date", "time", "timestamp", "timestamptz", "uuid", "list<decimal(6,2)>"} {
		typ, err := ParseType(s)
		if err != nil || typ.String() != s {
			t.Errorf("ParseType(%q) = %v, %v", s, typ, err)
		}
	}
}

// TOAST placeholders: the default and a configured one, in text, bytes,
// json, uuid and array columns; a placeholder followed by a real NULL
// stays distinguishable.
func TestToastPlaceholders(t *testing.T) {
	fields := []string{
		`{"type":"int32","optional":false,"field":"id"}`,
		field("string", "s", ""), field("bytes", "raw", ""), logical("string", "io.debezium.data.Json", "j", ""),
		logical("string", "io.debezium.data.Uuid", "u", ""),
		`{"type":"array","items":{"type":"string","optional":true},"optional":true,"field":"arr"}`,
		`{"type":"array","items":{"type":"bytes","optional":true},"optional":true,"field":"barr"}`,
	}
	for _, c := range []struct {
		opt, text string
		bytes     []byte
	}{
		{"", unavailablePlaceholder, []byte(unavailablePlaceholder)},
		{"<toasted>", "<toasted>", []byte("<toasted>")},
		{"hex:DEADBEEF", string([]byte{0xde, 0xad, 0xbe, 0xef}), []byte{0xde, 0xad, 0xbe, 0xef}},
	} {
		b64 := base64.StdEncoding.EncodeToString(c.bytes)
		after := `{"id":1,"s":"` + c.text + `","raw":"` + b64 + `","j":"` + c.text + `","u":"` + c.text + `","arr":["` + c.text + `"],"barr":["` + b64 + `"]}`
		if !isASCII(c.text) { // hex: bytes that are not UTF-8 text: only binary columns can hold them
			after = `{"id":1,"s":"x","raw":"` + b64 + `","j":"{}","u":"651aed08-390f-4893-b2f1-36923e7b7400","arr":["x"],"barr":["` + b64 + `"]}`
		}
		d := NewDecoder(DecoderOptions{KeyColumns: []string{"id"}, UnavailablePlaceholder: c.opt})
		got, err := d.Decode(Record{Value: []byte(envelopeRecord(fields, "null", after, "u"))})
		if err != nil {
			t.Fatalf("%q: %v", c.opt, err)
		}
		cols := []string{"raw", "barr"}
		if isASCII(c.text) {
			cols = append(cols, "s", "j", "u", "arr")
		}
		for _, col := range cols {
			wantValue(t, c.opt+" "+col, get(t, got.Event.After, col), cdc.Unavailable())
		}
		// The next update sets the column to a real NULL.
		got, err = d.Decode(Record{Value: []byte(envelopeRecord(fields, "null", `{"id":1,"s":null,"raw":null,"j":null,"u":null,"arr":null,"barr":null}`, "u"))})
		if err != nil {
			t.Fatal(err)
		}
		for _, col := range []string{"s", "raw", "j", "u", "arr", "barr"} {
			wantValue(t, c.opt+" then NULL "+col, get(t, got.Event.After, col), cdc.Null())
		}
	}
	// With a configured placeholder the default text is an ordinary value.
	d := NewDecoder(DecoderOptions{KeyColumns: []string{"id"}, UnavailablePlaceholder: "<toasted>"})
	got, err := d.Decode(Record{Value: []byte(envelopeRecord(fields, "null", `{"id":1,"s":"__debezium_unavailable_value"}`, "u"))})
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, "default text under a custom placeholder", get(t, got.Event.After, "s"), cdc.String(unavailablePlaceholder))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// maybeBase64 is false only for strings that padded standard base64 can
// never decode, so a declared decimal's numeric string skips the base64
// attempt without changing which strings are read as base64.
func TestMaybeBase64(t *testing.T) {
	for s, want := range map[string]bool{"AeI=": true, "1234": true, "1e10": true, "5285.06": false, "-12": false, "123": false, "": true, "12.5": false, "AQ==": true} {
		if got := maybeBase64([]byte(s)); got != want {
			t.Errorf("maybeBase64(%q) = %v, want %v", s, got, want)
		}
		if _, err := base64.StdEncoding.DecodeString(s); err == nil && !maybeBase64([]byte(s)) {
			t.Errorf("%q decodes as base64 but maybeBase64 says it cannot", s)
		}
	}
}
