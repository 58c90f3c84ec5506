package schemas

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Fixture files 13 and 14 (apache/flink-cdc): a MySQL all-types row as
// JsonConverter writes it with decimal.format=BASE64 (13) and NUMERIC (14),
// wrapped as {"expected_snapshot":…,"expected_binlog":…} without source
// blocks, so only the images are decoded.

type flinkCDCWrapper struct {
	Snapshot struct {
		Before, After json.RawMessage
		Op            string
	} `json:"expected_snapshot"`
	Binlog struct {
		Before, After json.RawMessage
		Op            string
	} `json:"expected_binlog"`
}

func flinkCDCImages(t *testing.T, rel string) (snapshotAfter, binlogBefore, binlogAfter []byte) {
	t.Helper()
	var w flinkCDCWrapper
	if err := json.Unmarshal(readFixture(t, rel), &w); err != nil {
		t.Fatal(err)
	}
	if w.Snapshot.Op != "r" || w.Binlog.Op != "u" || string(w.Snapshot.Before) != "null" {
		t.Fatalf("%s: unexpected wrapper %q %q", rel, w.Snapshot.Op, w.Binlog.Op)
	}
	return w.Snapshot.After, w.Binlog.Before, w.Binlog.After
}

// The DDL of the origin test (MySQL column types → Debezium Connect types).
var flinkCDCDeclared = []cdc.Column{
	{Name: "id", Type: cdc.DecimalType(20, 0)}, // BIGINT UNSIGNED: Decimal(scale 0)
	{Name: "big_un_c", Type: cdc.DecimalType(20, 0)},
	{Name: "big_un_z_c", Type: cdc.DecimalType(20, 0)},
	{Name: "decimal_c", Type: cdc.DecimalType(8, 4)},
	{Name: "decimal_un_c", Type: cdc.DecimalType(8, 4)},
	{Name: "decimal_un_z_c", Type: cdc.DecimalType(8, 4)},
	{Name: "numeric_c", Type: cdc.DecimalType(6, 0)},
	{Name: "big_decimal_c", Type: cdc.DecimalType(65, 1)},
	{Name: "date_c", Type: cdc.TypeDate, Source: "io.debezium.time.Date"},
	{Name: "time_c", Type: cdc.TypeTime, Source: "io.debezium.time.MicroTime"},
	{Name: "datetime3_c", Type: cdc.TypeTimestamp, Source: "io.debezium.time.Timestamp"},
	{Name: "datetime6_c", Type: cdc.TypeTimestamp, Source: "io.debezium.time.MicroTimestamp"},
	{Name: "timestamp_c", Type: cdc.TypeTimestampTZ, Source: "io.debezium.time.ZonedTimestamp"},
	{Name: "file_uuid", Type: cdc.TypeBinary},
	{Name: "float_c", Type: cdc.TypeFloat},
}

func TestFlinkCDCDecimals(t *testing.T) {
	b64Snap, b64Before, b64After := flinkCDCImages(t, "flink-cdc/debezium-data-schema-exclude.json")
	numSnap, numBefore, numAfter := flinkCDCImages(t, "flink-cdc/debezium-data-schema-exclude-with-numeric-decimal.json")
	d := NewDecoder(DecoderOptions{Columns: flinkCDCDeclared})
	decode := func(img []byte) *cdc.Row {
		t.Helper()
		r, err := d.DecodeImage(img)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	rows := map[string]*cdc.Row{
		"base64 snapshot": decode(b64Snap), "base64 before": decode(b64Before), "base64 after": decode(b64After),
		"numeric snapshot": decode(numSnap), "numeric before": decode(numBefore), "numeric after": decode(numAfter),
	}
	maxU64 := cdc.BigDecimal("18446744073709551615", 0)
	if !maxU64.IsBigDecimal() || maxU64.S != "18446744073709551615" {
		t.Fatalf("BigDecimal %+v", maxU64)
	}
	for name, r := range rows {
		// "EtaH" = 0x12D687 = 1234567 at scale 4; the NUMERIC twin is 123.4567.
		wantValue(t, name+" decimal_c", get(t, r, "decimal_c"), cdc.Decimal(1234567, 4))
		wantValue(t, name+" decimal_un_c", get(t, r, "decimal_un_c"), cdc.Decimal(1234568, 4))
		wantValue(t, name+" decimal_un_z_c", get(t, r, "decimal_un_z_c"), cdc.Decimal(1234569, 4))
		wantValue(t, name+" numeric_c", get(t, r, "numeric_c"), cdc.Decimal(346, 0))
		// DECIMAL(65,1): beyond Iceberg's 38 digits, the exact text.
		wantValue(t, name+" big_decimal_c", get(t, r, "big_decimal_c"), cdc.String("34567892.1"))
		wantValue(t, name+" id", get(t, r, "id"), cdc.Decimal(1, 0))
		wantValue(t, name+" big_un_c", get(t, r, "big_un_c"), maxU64)
		wantValue(t, name+" big_un_z_c", get(t, r, "big_un_z_c"), maxU64)
		// Undeclared BIGINT: exact, not via float64.
		wantValue(t, name+" big_c", get(t, r, "big_c"), cdc.Int(9223372036854775807))
		wantValue(t, name+" int_un_c", get(t, r, "int_un_c"), cdc.Int(4294967295))
		wantValue(t, name+" date_c", get(t, r, "date_c"), cdc.Date(18460))
		wantValue(t, name+" time_c", get(t, r, "time_c"), cdc.Time(64822000000))
		wantValue(t, name+" datetime3_c", get(t, r, "datetime3_c"), cdc.Timestamp(1595008822123000))
		wantValue(t, name+" datetime6_c", get(t, r, "datetime6_c"), cdc.Timestamp(1595008822123456))
		wantValue(t, name+" file_uuid", get(t, r, "file_uuid"), cdc.Bytes([]byte{0x65, 0x1a, 0xed, 0x08, 0x39, 0x0f, 0x48, 0x93, 0xb2, 0xf1, 0x36, 0x92, 0x3e, 0x7b, 0x74, 0x00}))
		wantValue(t, name+" float_c", get(t, r, "float_c"), cdc.Float(float64(float32(123.102))))
		wantValue(t, name+" bit1_c", get(t, r, "bit1_c"), cdc.Bool(false))
		wantValue(t, name+" varchar_len0_c", get(t, r, "varchar_len0_c"), cdc.String(""))
		wantValue(t, name+" real_c", get(t, r, "real_c"), cdc.Float(123.102))
		if p := get(t, r, "point_c"); p.Kind != cdc.KindString || !strings.HasPrefix(p.S, `{"x":1.0,"y":1.0,"wkb":"AQEAAAAAAAAAAADwPwAAAAAAAPA/","srid":null}`) {
			t.Errorf("%s point_c %+v", name, p)
		}
	}
	wantValue(t, "snapshot timestamp_c", get(t, rows["base64 snapshot"], "timestamp_c"), cdc.TimestampTZ(1595008822000000))
	wantValue(t, "binlog timestamp_c", get(t, rows["numeric after"], "timestamp_c"), cdc.TimestampTZ(1595010802000000))

	// Without declarations the NUMERIC file still keeps the values exact:
	// the integer beyond int64 becomes a scale-0 decimal, the fractions Floats.
	plain, err := DecodeImage(numSnap, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, "inferred big_un_c", get(t, plain, "big_un_c"), maxU64)
	wantValue(t, "inferred big_c", get(t, plain, "big_c"), cdc.Int(9223372036854775807))
	wantValue(t, "inferred decimal_c", get(t, plain, "decimal_c"), cdc.Float(123.4567))
	cols := InferColumns([]*cdc.Event{{Op: cdc.OpRead, After: plain}})
	for _, c := range cols {
		switch c.Name {
		case "big_un_c":
			if c.Type != cdc.DecimalType(20, 0) {
				t.Errorf("big_un_c inferred %v", c.Type)
			}
		case "big_c", "id":
			if c.Type != cdc.TypeLong {
				t.Errorf("%s inferred %v", c.Name, c.Type)
			}
		case "decimal_c":
			if c.Type != cdc.TypeDouble {
				t.Errorf("decimal_c inferred %v", c.Type)
			}
		}
	}
	// The inferred double Coerces exactly into the declared decimal.
	v, err := Coerce(get(t, plain, "decimal_c"), cdc.DecimalType(8, 4))
	if err != nil || !v.Equal(cdc.Decimal(1234567, 4)) {
		t.Errorf("Coerce decimal_c: %+v %v", v, err)
	}
}

func TestDeclaredDecimalErrors(t *testing.T) {
	cols := []cdc.Column{{Name: "d", Type: cdc.DecimalType(8, 4)}, {Name: "i", Type: cdc.TypeInt}}
	for _, img := range []string{
		`{"d":123.45678}`,      // 5 fraction digits at scale 4
		`{"d":12345.1}`,        // 9 digits > precision 8
		`{"d":"FJqkSQ=="}`,     // 345678921: 9 digits
		`{"d":"not base64!"}`,  // neither base64 nor a number
		`{"d":true}`,           // wrong token
		`{"i":4294967295}`,     // out of int32
		`{"i":1.5}`,            // fraction
		`{"i":"7"}`,            // a string is not an integer
		`{"d":1e999999999999}`, // absurd exponent
		`{"d":123.4567,"d":1}`, // duplicate field
		`{"x":"\u0000\ud800"}`, // a lone surrogate (TestStringEscapes)
	} {
		_, err := DecodeImage([]byte(img), cols)
		if err == nil {
			t.Errorf("%s: no error", img)
		} else {
			t.Logf("%s: %v", img, err)
		}
	}
	r, err := DecodeImage([]byte(`{"d":"-0.5","i":5.0}`), cols)
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, "numeric string", get(t, r, "d"), cdc.Decimal(-5000, 4))
	wantValue(t, "integral 5.0", get(t, r, "i"), cdc.Int(5))
}

// A declared decimal's JSON string: base64 unscaled bytes
// (decimal.handling.mode=precise) or the number's text (string), by
// whichever the text can only be; a text that is both ("1234": 1234, or
// -2658824 from bytes d7 6d f8) is an error unless the definition names
// the mode in the column's source. The placeholder is unavailable.
func TestDeclaredDecimalText(t *testing.T) {
	dec := func(src string) []cdc.Column {
		return []cdc.Column{{Name: "d", Type: cdc.DecimalType(10, 0), Source: src}}
	}
	for _, c := range []struct {
		img, src string
		want     cdc.Value
		err      string
	}{
		{`{"d":"12.5"}`, "", cdc.Value{}, "has more fraction digits than the scale"},
		{`{"d":"-5"}`, "", cdc.Decimal(-5, 0), ""},
		{`{"d":"BOI="}`, "", cdc.Decimal(1250, 0), ""},
		{`{"d":"1234"}`, "", cdc.Value{}, `decimal "1234" reads both as a number`},
		{`{"d":"+100"}`, "", cdc.Value{}, `decimal "+100" reads both as a number`},
		{`{"d":"1234"}`, "string", cdc.Decimal(1234, 0), ""},
		{`{"d":"BOI="}`, "string", cdc.Value{}, `"BOI=" is not a number`},
		{`{"d":"1234"}`, "org.apache.kafka.connect.data.Decimal", cdc.Decimal(-2658824, 0), ""},
		{`{"d":"__debezium_unavailable_value"}`, "", cdc.Unavailable(), ""},
		{`{"d":"+100"}`, "string", cdc.Decimal(100, 0), ""},
		{`{"d":"+12"}`, "", cdc.Decimal(12, 0), ""},
		{`{"d":"0012"}`, "", cdc.Value{}, `decimal "0012" reads both as a number`},
		{`{"d":"Infinity"}`, "", cdc.Value{}, `"Infinity" is not a finite decimal`},
		{`{"d":"NaN"}`, "string", cdc.Value{}, `"NaN" is not a finite decimal`},
	} {
		r, err := DecodeImage([]byte(c.img), dec(c.src))
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s source %q: error %v, want %q", c.img, c.src, err, c.err)
			}
		case err != nil:
			t.Errorf("%s source %q: %v", c.img, c.src, err)
		default:
			wantValue(t, c.img+" "+c.src, get(t, r, "d"), c.want)
		}
	}
}
