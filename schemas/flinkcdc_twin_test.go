package schemas

import (
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// The MySQL all-types row of apache/flink-cdc (fixture files 13 and 14,
// PROVENANCE.md) decoded with every column declared from the origin
// test's DDL (flink-cdc column_type_test.sql, full_types), mapped the way
// the Debezium MySQL connector types them (bigint.unsigned.handling.mode
// =precise, time.precision.mode=adaptive_time_microseconds): the BASE64
// file (13) and the NUMERIC-decimal file (14) must decode to the same
// values, every column, and to the exact values below.

// flinkCDCFullTypes: column, declared type, Debezium logical type.
var flinkCDCFullTypes = []cdc.Column{
	{Name: "id", Type: cdc.DecimalType(20, 0), Source: logicalDecimal}, // SERIAL = BIGINT UNSIGNED
	{Name: "tiny_c", Type: cdc.TypeInt, Source: "int16"},               // TINYINT
	{Name: "tiny_un_c", Type: cdc.TypeInt, Source: "int16"},            // TINYINT UNSIGNED
	{Name: "tiny_un_z_c", Type: cdc.TypeInt, Source: "int16"},
	{Name: "small_c", Type: cdc.TypeInt, Source: "int16"},    // SMALLINT
	{Name: "small_un_c", Type: cdc.TypeInt, Source: "int32"}, // SMALLINT UNSIGNED
	{Name: "small_un_z_c", Type: cdc.TypeInt, Source: "int32"},
	{Name: "medium_c", Type: cdc.TypeInt, Source: "int32"},
	{Name: "medium_un_c", Type: cdc.TypeInt, Source: "int32"},
	{Name: "medium_un_z_c", Type: cdc.TypeInt, Source: "int32"},
	{Name: "int_c", Type: cdc.TypeInt, Source: "int32"},
	{Name: "int_un_c", Type: cdc.TypeLong, Source: "int64"}, // INT UNSIGNED
	{Name: "int_un_z_c", Type: cdc.TypeLong, Source: "int64"},
	{Name: "int11_c", Type: cdc.TypeInt, Source: "int32"},
	{Name: "big_c", Type: cdc.TypeLong, Source: "int64"},
	{Name: "big_un_c", Type: cdc.DecimalType(20, 0), Source: logicalDecimal}, // BIGINT UNSIGNED beyond int64
	{Name: "big_un_z_c", Type: cdc.DecimalType(20, 0), Source: logicalDecimal},
	{Name: "varchar_c", Type: cdc.TypeString},
	{Name: "char_c", Type: cdc.TypeString},
	{Name: "real_c", Type: cdc.TypeDouble},    // REAL = DOUBLE
	{Name: "float_c", Type: cdc.TypeFloat},    // FLOAT → FLOAT32
	{Name: "float_un_c", Type: cdc.TypeFloat}, // FLOAT UNSIGNED
	{Name: "float_un_z_c", Type: cdc.TypeFloat},
	{Name: "double_c", Type: cdc.TypeDouble},
	{Name: "double_un_c", Type: cdc.TypeDouble},
	{Name: "double_un_z_c", Type: cdc.TypeDouble},
	{Name: "decimal_c", Type: cdc.DecimalType(8, 4), Source: logicalDecimal},
	{Name: "decimal_un_c", Type: cdc.DecimalType(8, 4), Source: logicalDecimal},
	{Name: "decimal_un_z_c", Type: cdc.DecimalType(8, 4), Source: logicalDecimal},
	{Name: "numeric_c", Type: cdc.DecimalType(6, 0), Source: logicalDecimal},
	{Name: "big_decimal_c", Type: cdc.DecimalType(65, 1), Source: logicalDecimal}, // > 38 digits: string
	{Name: "bit1_c", Type: cdc.TypeBool},                                          // BIT(1)
	{Name: "tiny1_c", Type: cdc.TypeInt, Source: "int16"},                         // TINYINT(1)
	{Name: "boolean_c", Type: cdc.TypeInt, Source: "int16"},                       // BOOLEAN = TINYINT(1)
	{Name: "date_c", Type: cdc.TypeDate, Source: logicalDate},
	{Name: "time_c", Type: cdc.TypeTime, Source: logicalMicroTime}, // TIME(0)
	{Name: "datetime3_c", Type: cdc.TypeTimestamp, Source: logicalTimestamp},
	{Name: "datetime6_c", Type: cdc.TypeTimestamp, Source: logicalMicroTimestamp},
	{Name: "timestamp_c", Type: cdc.TypeTimestampTZ, Source: logicalZonedTimestamp},
	{Name: "file_uuid", Type: cdc.TypeBinary},                  // BINARY(16)
	{Name: "bit_c", Type: cdc.TypeBinary, Source: logicalBits}, // BIT(64)
	{Name: "text_c", Type: cdc.TypeString},
	{Name: "tiny_blob_c", Type: cdc.TypeBinary},
	{Name: "blob_c", Type: cdc.TypeBinary},
	{Name: "medium_blob_c", Type: cdc.TypeBinary},
	{Name: "long_blob_c", Type: cdc.TypeBinary},
	{Name: "year_c", Type: cdc.TypeInt, Source: logicalYear},
	{Name: "enum_c", Type: cdc.TypeString, Source: logicalEnum},
	{Name: "set_c", Type: cdc.TypeString, Source: logicalEnumSet},
	{Name: "json_c", Type: cdc.TypeString, Source: logicalJSON},
	{Name: "point_c", Type: cdc.TypeBinary, Source: logicalPoint},
	{Name: "geometry_c", Type: cdc.TypeBinary, Source: logicalGeometry},
	{Name: "linestring_c", Type: cdc.TypeBinary, Source: logicalGeometry},
	{Name: "polygon_c", Type: cdc.TypeBinary, Source: logicalGeometry},
	{Name: "multipoint_c", Type: cdc.TypeBinary, Source: logicalGeometry},
	{Name: "multiline_c", Type: cdc.TypeBinary, Source: logicalGeometry},
	{Name: "multipolygon_c", Type: cdc.TypeBinary, Source: logicalGeometry},
	{Name: "geometrycollection_c", Type: cdc.TypeBinary, Source: logicalGeometry},
	{Name: "varchar_len0_c", Type: cdc.TypeString},
}

func b64(t *testing.T, s string) cdc.Value {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return cdc.Bytes(b)
}

// flinkCDCWant is the snapshot row's exact values; json_c and timestamp_c
// differ in the binlog images (see the test).
func flinkCDCWant(t *testing.T) map[string]cdc.Value {
	maxU64 := cdc.BigDecimal("18446744073709551615", 0)
	polygon := b64(t, "AQMAAAABAAAABQAAAAAAAAAAAPA/AAAAAAAA8D8AAAAAAAAAQAAAAAAAAPA/AAAAAAAAAEAAAAAAAAAAQAAAAAAAAPA/AAAAAAAAAEAAAAAAAADwPwAAAAAAAPA/")
	blob := cdc.Bytes([]byte{0x10})
	return map[string]cdc.Value{
		"id":                   cdc.Decimal(1, 0),
		"tiny_c":               cdc.Int(127),
		"tiny_un_c":            cdc.Int(255),
		"tiny_un_z_c":          cdc.Int(255),
		"small_c":              cdc.Int(32767),
		"small_un_c":           cdc.Int(65535),
		"small_un_z_c":         cdc.Int(65535),
		"medium_c":             cdc.Int(8388607),
		"medium_un_c":          cdc.Int(16777215),
		"medium_un_z_c":        cdc.Int(16777215),
		"int_c":                cdc.Int(2147483647),
		"int_un_c":             cdc.Int(4294967295),
		"int_un_z_c":           cdc.Int(4294967295),
		"int11_c":              cdc.Int(2147483647),
		"big_c":                cdc.Int(9223372036854775807),
		"big_un_c":             maxU64,
		"big_un_z_c":           maxU64,
		"varchar_c":            cdc.String("Hello World"),
		"char_c":               cdc.String("abc"),
		"real_c":               cdc.Float(123.102),
		"float_c":              cdc.Float(float64(float32(123.102))),
		"float_un_c":           cdc.Float(float64(float32(123.103))),
		"float_un_z_c":         cdc.Float(float64(float32(123.104))),
		"double_c":             cdc.Float(404.4443),
		"double_un_c":          cdc.Float(404.4444),
		"double_un_z_c":        cdc.Float(404.4445),
		"decimal_c":            cdc.Decimal(1234567, 4),
		"decimal_un_c":         cdc.Decimal(1234568, 4),
		"decimal_un_z_c":       cdc.Decimal(1234569, 4),
		"numeric_c":            cdc.Decimal(346, 0), // 345.6 rounded by MySQL into NUMERIC(6,0)
		"big_decimal_c":        cdc.String("34567892.1"),
		"bit1_c":               cdc.Bool(false),
		"tiny1_c":              cdc.Int(1),
		"boolean_c":            cdc.Int(1),
		"date_c":               cdc.Date(18460),                   // 2020-07-17
		"time_c":               cdc.Time(64822000000),             // 18:00:22
		"datetime3_c":          cdc.Timestamp(1595008822123000),   // 2020-07-17 18:00:22.123
		"datetime6_c":          cdc.Timestamp(1595008822123456),   // 2020-07-17 18:00:22.123456
		"timestamp_c":          cdc.TimestampTZ(1595008822000000), // 2020-07-17T18:00:22Z
		"file_uuid":            b64(t, "ZRrtCDkPSJOy8TaSPnt0AA=="),
		"bit_c":                cdc.Bytes([]byte{4, 4, 4, 4, 4, 4, 4, 4}),
		"text_c":               cdc.String("text"),
		"tiny_blob_c":          blob,
		"blob_c":               blob,
		"medium_blob_c":        blob,
		"long_blob_c":          blob,
		"year_c":               cdc.Int(2021),
		"enum_c":               cdc.String("red"),
		"set_c":                cdc.String("a,b"),
		"json_c":               cdc.String(`{"key1": "value1"}`),
		"point_c":              b64(t, "AQEAAAAAAAAAAADwPwAAAAAAAPA/"),
		"geometry_c":           polygon,
		"linestring_c":         b64(t, "AQIAAAADAAAAAAAAAAAACEAAAAAAAAAAAAAAAAAAAAhAAAAAAAAACEAAAAAAAAAIQAAAAAAAABRA"),
		"polygon_c":            polygon,
		"multipoint_c":         b64(t, "AQQAAAACAAAAAQEAAAAAAAAAAADwPwAAAAAAAPA/AQEAAAAAAAAAAAAAQAAAAAAAAABA"),
		"multiline_c":          b64(t, "AQUAAAACAAAAAQIAAAADAAAAAAAAAAAA8D8AAAAAAADwPwAAAAAAAABAAAAAAAAAAEAAAAAAAAAIQAAAAAAAAAhAAQIAAAACAAAAAAAAAAAAEEAAAAAAAAAQQAAAAAAAABRAAAAAAAAAFEA="),
		"multipolygon_c":       b64(t, "AQYAAAACAAAAAQMAAAABAAAABQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAkQAAAAAAAAAAAAAAAAAAAJEAAAAAAAAAkQAAAAAAAAAAAAAAAAAAAJEAAAAAAAAAAAAAAAAAAAAAAAQMAAAABAAAABQAAAAAAAAAAABRAAAAAAAAAFEAAAAAAAAAcQAAAAAAAABRAAAAAAAAAHEAAAAAAAAAcQAAAAAAAABRAAAAAAAAAHEAAAAAAAAAUQAAAAAAAABRA"),
		"geometrycollection_c": b64(t, "AQcAAAADAAAAAQEAAAAAAAAAAAAkQAAAAAAAACRAAQEAAAAAAAAAAAA+QAAAAAAAAD5AAQIAAAACAAAAAAAAAAAALkAAAAAAAAAuQAAAAAAAADRAAAAAAAAANEA="),
		"varchar_len0_c":       cdc.String(""),
	}
}

func TestFlinkCDCTwinsEveryColumn(t *testing.T) {
	b64Snap, b64Before, b64After := flinkCDCImages(t, "flink-cdc/debezium-data-schema-exclude.json")
	numSnap, numBefore, numAfter := flinkCDCImages(t, "flink-cdc/debezium-data-schema-exclude-with-numeric-decimal.json")
	d := NewDecoder(DecoderOptions{Columns: flinkCDCFullTypes})
	decode := func(name string, img []byte) *cdc.Row {
		t.Helper()
		r, err := d.DecodeImage(img)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return r
	}
	declared := map[string]cdc.Type{}
	for _, c := range d.declared {
		declared[c.Name] = c.Type
	}
	want := flinkCDCWant(t)
	if len(want) != len(flinkCDCFullTypes) {
		t.Fatalf("%d expected values for %d columns", len(want), len(flinkCDCFullTypes))
	}
	pairs := []struct {
		name     string
		b64, num []byte
	}{{"snapshot after", b64Snap, numSnap}, {"binlog before", b64Before, numBefore}, {"binlog after", b64After, numAfter}}
	for _, p := range pairs {
		a, b := decode("base64 "+p.name, p.b64), decode("numeric "+p.name, p.num)
		if fmt.Sprint(a.Cols.Names) != fmt.Sprint(b.Cols.Names) || a.Cols.Len() != len(flinkCDCFullTypes) {
			t.Fatalf("%s: columns %v vs %v", p.name, a.Cols.Names, b.Cols.Names)
		}
		for i, name := range a.Cols.Names {
			typ, ok := declared[name]
			if !ok {
				t.Errorf("%s: column %s is not declared (would be inferred)", p.name, name)
				continue
			}
			va, vb := a.Vals[i], get(t, b, name)
			if !va.Equal(vb) {
				t.Errorf("%s %s: base64 file %+v, numeric file %+v", p.name, name, va, vb)
			}
			if c, err := Coerce(va, typ); err != nil || !c.Equal(va) {
				t.Errorf("%s %s: %+v is not a %v value (%v)", p.name, name, va, typ, err)
			}
			w := want[name]
			switch {
			case name == "timestamp_c" && p.name == "binlog after":
				w = cdc.TimestampTZ(1595010802000000) // the update: 2020-07-17T18:33:22Z
			case name == "json_c" && p.name != "snapshot after":
				w = cdc.String(`{"key1":"value1"}`) // the binlog images render the JSON compactly
			}
			wantValue(t, p.name+" "+name, va, w)
		}
	}
	// The reported schema: the DDL's types, with DECIMAL(65,1) as string.
	for _, c := range d.declared {
		if c.Name == "big_decimal_c" && (c.Type != cdc.TypeString || c.Source != logicalDecimal) {
			t.Errorf("big_decimal_c column %+v", c)
		}
	}
}
