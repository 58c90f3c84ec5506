//go:build e2e

package source

import (
	"encoding/hex"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// The all-types table shared by the type, Describe and Debezium tests:
// every supported type, with extremes, pre-1970 values, unicode, arrays
// and NULLs, and the exact values each row must read as.

const allTypesDDL = `
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN posint AS int4 CHECK (VALUE > 0);
CREATE TABLE all_types (
	id    int4 PRIMARY KEY,
	b     bool,
	i2    int2,
	i4    int4,
	i8    int8 NOT NULL DEFAULT 0,
	f4    float4,
	f8    float8,
	n102  numeric(10,2),
	n3810 numeric(38,10),
	n5    numeric(5),
	nvar  numeric,
	n505  numeric(50,5),
	t     text,
	vc    varchar(20),
	c5    char(5),
	js    json,
	jb    jsonb,
	x     xml,
	u     uuid,
	by    bytea,
	d     date,
	tm    time,
	tm3   time(3),
	ts    timestamp,
	ts3   timestamp(3),
	ts0   timestamp(0),
	tz    timestamptz,
	tz3   timestamptz(3),
	m     mood,
	ai    int4[],
	at    text[],
	an    numeric(10,2)[],
	anv   numeric[],
	ats   timestamptz[],
	au    uuid[],
	ajb   jsonb[],
	am    mood[],
	aby   bytea[],
	ad    date[],
	af4   float4[],
	abo   bool[],
	dom   posint
);
INSERT INTO all_types VALUES (1,
	true, -32768, -2147483648, -9223372036854775808, 3.14, 0.1,
	25.50, 1234567890123456789012345678.0123456789, -99999, -0.500,
	-123456789012345678901234567890123456789012345.00100,
	E'line1\nline2\t"q" \\ héllo wörld ✓ 日本語 🎉', '', 'ab',
	'{"b": 1,   "a":[1,2]}', '{"b": 1, "a": [1, 2], "aa": null, "n": 1.50}', '<a b="1">x &amp; y</a>',
	'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\x00ff10',
	'1969-07-20', '23:59:59.999999', '12:34:56.789',
	'1960-01-01 00:00:00.000001', '1969-12-31 23:59:59.999', '2000-02-29 12:00:00',
	'1969-12-31 23:59:59.999999+00', '2024-02-29 12:00:00.123+05:30',
	'happy',
	'{1,NULL,-3}', '{"a","b c",NULL,""}', '{25.50,-1}', '{1.50,100,0.000,-0.0012300}',
	'{"1969-12-31 23:59:59+00","2001-02-03 04:05:06.789012+01"}',
	'{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}',
	ARRAY['{"k": 1, "a": "x"}'::jsonb], '{sad,happy}', ARRAY['\x01'::bytea, NULL, ''::bytea],
	'{1970-01-02,"0044-03-15 BC"}', '{1.5,NaN,-Infinity}', '{true,false,NULL}',
	42);
INSERT INTO all_types VALUES (2,
	false, 32767, 2147483647, 9223372036854775807, 'Infinity', -1.7976931348623157e308,
	-99999999.99, -9999999999999999999999999999.9999999999, 0, 12345678901234567890123456789012345678901234567890,
	0,
	'', 'x', 'abcde',
	'[]', '"s"', '<r/>',
	'00000000-0000-0000-0000-000000000000', '',
	'0044-03-15 BC', '00:00:00', '00:00:00.001',
	'0001-01-01 00:00:00 BC', '2262-04-11 23:47:16.854', '1900-01-01 00:00:00',
	'9999-12-31 23:59:59.999999+00', '0100-01-01 00:00:00+00',
	'sad',
	'{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}',
	1);
INSERT INTO all_types (id) VALUES (3);
INSERT INTO all_types (id, f4, f8) VALUES (4, '-0', 'NaN');
`

func dec(unscaled string, scale int16) cdc.Value { return cdc.BigDecimal(unscaled, scale) }

func uuidV(s string) cdc.Value {
	b, err := hex.DecodeString(s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36])
	if err != nil || len(b) != 16 {
		panic(s)
	}
	return cdc.Value{Kind: cdc.KindUUID, S: string(b)}
}

func usOf(y int, mo time.Month, d, h, mi, s, us int) int64 {
	return time.Date(y, mo, d, h, mi, s, us*1000, time.UTC).UnixMicro()
}

func daysOf(y int, mo time.Month, d int) int64 {
	return time.Date(y, mo, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// allTypesWant are the exact values of each row, by id; a column absent
// from a row's map is NULL.
func allTypesWant() map[int64]map[string]cdc.Value {
	nan := cdc.Float(math.NaN())
	return map[int64]map[string]cdc.Value{
		1: {
			"b": cdc.Bool(true), "i2": cdc.Int(-32768), "i4": cdc.Int(-2147483648), "i8": cdc.Int(math.MinInt64),
			"f4": cdc.Float(float64(float32(3.14))), "f8": cdc.Float(0.1),
			"n102":  cdc.Decimal(2550, 2),
			"n3810": dec("12345678901234567890123456780123456789", 10),
			"n5":    cdc.Decimal(-99999, 0),
			"nvar":  cdc.String("-0.5"),
			"n505":  cdc.String("-123456789012345678901234567890123456789012345.00100"),
			"t":     cdc.String("line1\nline2\t\"q\" \\ héllo wörld ✓ 日本語 🎉"),
			"vc":    cdc.String(""),
			"c5":    cdc.String("ab   "),
			"js":    cdc.String(`{"b": 1,   "a":[1,2]}`),
			"jb":    cdc.String(`{"a": [1, 2], "b": 1, "n": 1.50, "aa": null}`),
			"x":     cdc.String(`<a b="1">x &amp; y</a>`),
			"u":     uuidV("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
			"by":    cdc.Bytes([]byte{0x00, 0xff, 0x10}),
			"d":     cdc.Date(-165),
			"tm":    cdc.Time(86399999999),
			"tm3":   cdc.Time(45296789000),
			"ts":    cdc.Timestamp(usOf(1960, 1, 1, 0, 0, 0, 1)),
			"ts3":   cdc.Timestamp(-1000),
			"ts0":   cdc.Timestamp(usOf(2000, 2, 29, 12, 0, 0, 0)),
			"tz":    cdc.TimestampTZ(-1),
			"tz3":   cdc.TimestampTZ(usOf(2024, 2, 29, 6, 30, 0, 123000)),
			"m":     cdc.String("happy"),
			"ai":    cdc.List(cdc.Int(1), cdc.Null(), cdc.Int(-3)),
			"at":    cdc.List(cdc.String("a"), cdc.String("b c"), cdc.Null(), cdc.String("")),
			"an":    cdc.List(cdc.Decimal(2550, 2), cdc.Decimal(-100, 2)),
			"anv":   cdc.List(cdc.String("1.5"), cdc.String("100"), cdc.String("0"), cdc.String("-0.00123")),
			"ats":   cdc.List(cdc.TimestampTZ(-1_000_000), cdc.TimestampTZ(usOf(2001, 2, 3, 3, 5, 6, 789012))),
			"au":    cdc.List(uuidV("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), cdc.Null()),
			"ajb":   cdc.List(cdc.String(`{"a": "x", "k": 1}`)),
			"am":    cdc.List(cdc.String("sad"), cdc.String("happy")),
			"aby":   cdc.List(cdc.Bytes([]byte{1}), cdc.Null(), cdc.Bytes([]byte{})),
			"ad":    cdc.List(cdc.Date(1), cdc.Date(daysOf(-43, 3, 15))),
			"af4":   cdc.List(cdc.Float(1.5), nan, cdc.Float(math.Inf(-1))),
			"abo":   cdc.List(cdc.Bool(true), cdc.Bool(false), cdc.Null()),
			"dom":   cdc.Int(42),
		},
		2: {
			"b": cdc.Bool(false), "i2": cdc.Int(32767), "i4": cdc.Int(2147483647), "i8": cdc.Int(math.MaxInt64),
			"f4": cdc.Float(math.Inf(1)), "f8": cdc.Float(-math.MaxFloat64),
			"n102":  cdc.Decimal(-9999999999, 2),
			"n3810": dec("-99999999999999999999999999999999999999", 10),
			"n5":    cdc.Decimal(0, 0),
			"nvar":  cdc.String("12345678901234567890123456789012345678901234567890"),
			"n505":  cdc.String("0.00000"),
			"t":     cdc.String(""), "vc": cdc.String("x"), "c5": cdc.String("abcde"),
			"js": cdc.String("[]"), "jb": cdc.String(`"s"`), "x": cdc.String("<r/>"),
			"u":   uuidV("00000000-0000-0000-0000-000000000000"),
			"by":  cdc.Bytes([]byte{}),
			"d":   cdc.Date(daysOf(-43, 3, 15)),
			"tm":  cdc.Time(0),
			"tm3": cdc.Time(1000),
			"ts":  cdc.Timestamp(usOf(0, 1, 1, 0, 0, 0, 0)),
			"ts3": cdc.Timestamp(usOf(2262, 4, 11, 23, 47, 16, 854000)),
			"ts0": cdc.Timestamp(usOf(1900, 1, 1, 0, 0, 0, 0)),
			"tz":  cdc.TimestampTZ(usOf(9999, 12, 31, 23, 59, 59, 999999)),
			"tz3": cdc.TimestampTZ(usOf(100, 1, 1, 0, 0, 0, 0)),
			"m":   cdc.String("sad"),
			"ai":  cdc.List(), "at": cdc.List(), "an": cdc.List(), "anv": cdc.List(), "ats": cdc.List(), "au": cdc.List(),
			"ajb": cdc.List(), "am": cdc.List(), "aby": cdc.List(), "ad": cdc.List(), "af4": cdc.List(), "abo": cdc.List(),
			"dom": cdc.Int(1),
		},
		3: {"i8": cdc.Int(0)},
		4: {"i8": cdc.Int(0), "f4": cdc.Float(math.Copysign(0, -1)), "f8": nan},
	}
}

// allTypesColumns is what Describe must report for all_types: the
// Iceberg type, the Connect source type and nullability.
var allTypesColumns = []cdc.Column{
	{Name: "id", Type: cdc.TypeInt, Source: "int32"},
	{Name: "b", Type: cdc.TypeBool, Optional: true, Source: "boolean"},
	{Name: "i2", Type: cdc.TypeInt, Optional: true, Source: "int16"},
	{Name: "i4", Type: cdc.TypeInt, Optional: true, Source: "int32"},
	{Name: "i8", Type: cdc.TypeLong, Source: "int64"},
	{Name: "f4", Type: cdc.TypeFloat, Optional: true, Source: "float"},
	{Name: "f8", Type: cdc.TypeDouble, Optional: true, Source: "double"},
	{Name: "n102", Type: cdc.DecimalType(10, 2), Optional: true, Source: logicalDecimal},
	{Name: "n3810", Type: cdc.DecimalType(38, 10), Optional: true, Source: logicalDecimal},
	{Name: "n5", Type: cdc.DecimalType(5, 0), Optional: true, Source: logicalDecimal},
	{Name: "nvar", Type: cdc.TypeString, Optional: true, Source: logicalVarDecimal},
	{Name: "n505", Type: cdc.TypeString, Optional: true, Source: logicalDecimal},
	{Name: "t", Type: cdc.TypeString, Optional: true, Source: "string"},
	{Name: "vc", Type: cdc.TypeString, Optional: true, Source: "string"},
	{Name: "c5", Type: cdc.TypeString, Optional: true, Source: "string"},
	{Name: "js", Type: cdc.TypeString, Optional: true, Source: logicalJSON},
	{Name: "jb", Type: cdc.TypeString, Optional: true, Source: logicalJSON},
	{Name: "x", Type: cdc.TypeString, Optional: true, Source: logicalXML},
	{Name: "u", Type: cdc.TypeUUID, Optional: true, Source: logicalUUID},
	{Name: "by", Type: cdc.TypeBinary, Optional: true, Source: "bytes"},
	{Name: "d", Type: cdc.TypeDate, Optional: true, Source: logicalDate},
	{Name: "tm", Type: cdc.TypeTime, Optional: true, Source: logicalMicroTime},
	{Name: "tm3", Type: cdc.TypeTime, Optional: true, Source: logicalTime},
	{Name: "ts", Type: cdc.TypeTimestamp, Optional: true, Source: logicalMicroTimestamp},
	{Name: "ts3", Type: cdc.TypeTimestamp, Optional: true, Source: logicalTimestamp},
	{Name: "ts0", Type: cdc.TypeTimestamp, Optional: true, Source: logicalTimestamp},
	{Name: "tz", Type: cdc.TypeTimestampTZ, Optional: true, Source: logicalZonedTimestamp},
	{Name: "tz3", Type: cdc.TypeTimestampTZ, Optional: true, Source: logicalZonedTimestamp},
	{Name: "m", Type: cdc.TypeString, Optional: true, Source: logicalEnum},
	{Name: "ai", Type: cdc.ListType(cdc.TypeInt), Optional: true, Source: "array"},
	{Name: "at", Type: cdc.ListType(cdc.TypeString), Optional: true, Source: "array"},
	{Name: "an", Type: cdc.ListType(cdc.DecimalType(10, 2)), Optional: true, Source: "array"},
	{Name: "anv", Type: cdc.ListType(cdc.TypeString), Optional: true, Source: "array"},
	{Name: "ats", Type: cdc.ListType(cdc.TypeTimestampTZ), Optional: true, Source: "array"},
	{Name: "au", Type: cdc.ListType(cdc.TypeUUID), Optional: true, Source: "array"},
	{Name: "ajb", Type: cdc.ListType(cdc.TypeString), Optional: true, Source: "array"},
	{Name: "am", Type: cdc.ListType(cdc.TypeString), Optional: true, Source: "array"},
	{Name: "aby", Type: cdc.ListType(cdc.TypeBinary), Optional: true, Source: "array"},
	{Name: "ad", Type: cdc.ListType(cdc.TypeDate), Optional: true, Source: "array"},
	{Name: "af4", Type: cdc.ListType(cdc.TypeFloat), Optional: true, Source: "array"},
	{Name: "abo", Type: cdc.ListType(cdc.TypeBool), Optional: true, Source: "array"},
	{Name: "dom", Type: cdc.TypeInt, Optional: true, Source: "int32"},
}

// checkRow compares a read row with the expected values of its id.
func checkRow(t *testing.T, info TableInfo, row *cdc.Row, want map[int64]map[string]cdc.Value) {
	t.Helper()
	id, _ := row.Get("id")
	w, ok := want[id.I]
	if !ok {
		t.Fatalf("unexpected row id %d", id.I)
	}
	for i, c := range info.Columns {
		got := row.Vals[i]
		exp, ok := w[c.Name]
		if c.Name == "id" {
			exp, ok = cdc.Int(id.I), true
		}
		if !ok {
			exp = cdc.Null()
		}
		if !got.Equal(exp) {
			t.Errorf("row %d column %s (%s): got %s, want %s", id.I, c.Name, c.PGType, show(got), show(exp))
		}
	}
}

// show renders a value for failure messages.
func show(v cdc.Value) string {
	switch v.Kind {
	case cdc.KindNull:
		return "NULL"
	case cdc.KindDecimal:
		return "decimal " + v.DecimalText()
	case cdc.KindFloat:
		return fmt.Sprintf("float %v (bits %x)", v.Float64(), uint64(v.I))
	case cdc.KindList:
		s := "["
		for i, e := range v.Elems() {
			if i > 0 {
				s += ", "
			}
			s += show(e)
		}
		return s + "]"
	case cdc.KindString:
		return fmt.Sprintf("string %q", v.S)
	case cdc.KindBytes, cdc.KindUUID:
		return "bytes " + hex.EncodeToString([]byte(v.S))
	}
	return fmt.Sprintf("kind %d: %d", v.Kind, v.I)
}
