package typing

import (
	"math"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

func TestCoerce(t *testing.T) {
	uuid := string([]byte{0x65, 0x1a, 0xed, 0x08, 0x39, 0x0f, 0x48, 0x93, 0xb2, 0xf1, 0x36, 0x92, 0x3e, 0x7b, 0x74, 0x00})
	ok := []struct {
		in   cdc.Value
		t    cdc.Type
		want cdc.Value
	}{
		{cdc.Null(), cdc.TypeInt, cdc.Null()},
		{cdc.Unavailable(), cdc.DecimalType(5, 2), cdc.Unavailable()},
		{cdc.Int(1), cdc.TypeDouble, cdc.Float(1)},
		{cdc.Int(1 << 60), cdc.TypeDouble, cdc.Float(1 << 60)},
		{cdc.Int(16777216), cdc.TypeFloat, cdc.Float(16777216)},
		{cdc.Int(-5), cdc.DecimalType(10, 2), cdc.Decimal(-500, 2)},
		{cdc.Int(2147483647), cdc.TypeInt, cdc.Int(2147483647)},
		{cdc.Int(1), cdc.TypeBool, cdc.Bool(true)},
		{cdc.Int(42), cdc.TypeString, cdc.String("42")},
		{cdc.Float(2.5), cdc.TypeString, cdc.String("2.5")},
		{cdc.Bool(false), cdc.TypeString, cdc.String("false")},
		{cdc.Decimal(1050, 2), cdc.TypeString, cdc.String("10.50")},
		{cdc.Float(0.1), cdc.DecimalType(5, 2), cdc.Decimal(10, 2)},
		{cdc.Float(123.4567), cdc.DecimalType(8, 4), cdc.Decimal(1234567, 4)},
		{cdc.Float(1e20), cdc.DecimalType(21, 0), cdc.BigDecimal("100000000000000000000", 0)},
		{cdc.Float(5), cdc.TypeLong, cdc.Int(5)},
		{cdc.Float(3.140000104904175), cdc.TypeFloat, cdc.Float(3.140000104904175)},
		{cdc.Float(123.102), cdc.TypeFloat, cdc.Float(float64(float32(123.102)))},
		{cdc.Float(math.NaN()), cdc.TypeDouble, cdc.Float(math.NaN())},
		{cdc.Decimal(1234567, 4), cdc.DecimalType(10, 6), cdc.Decimal(123456700, 6)},
		{cdc.Decimal(12300, 2), cdc.DecimalType(3, 0), cdc.Decimal(123, 0)},
		{cdc.Decimal(12300, 2), cdc.TypeInt, cdc.Int(123)},
		{cdc.Decimal(1, 1), cdc.TypeDouble, cdc.Float(0.1)},
		{cdc.BigDecimal("18446744073709551615", 0), cdc.DecimalType(20, 0), cdc.BigDecimal("18446744073709551615", 0)},
		{cdc.BigDecimal("18446744073709551615", 0), cdc.DecimalType(22, 2), cdc.BigDecimal("1844674407370955161500", 2)},
		{cdc.BigDecimal("-100000000000000000000", 2), cdc.TypeLong, cdc.Int(-1000000000000000000)},
		{cdc.Date(1), cdc.TypeTimestamp, cdc.Timestamp(86_400_000_000)},
		{cdc.String("651aed08-390f-4893-b2f1-36923e7b7400"), cdc.TypeUUID, cdc.Value{Kind: cdc.KindUUID, S: uuid}},
		{cdc.Bytes([]byte(uuid)), cdc.TypeUUID, cdc.Value{Kind: cdc.KindUUID, S: uuid}},
		{cdc.TimestampTZ(5), cdc.TypeTimestampTZ, cdc.TimestampTZ(5)},
	}
	for _, c := range ok {
		got, err := Coerce(c.in, c.t)
		if err != nil {
			t.Errorf("Coerce(%+v, %v): %v", c.in, c.t, err)
			continue
		}
		if c.want.Kind == cdc.KindFloat && math.IsNaN(c.want.Float64()) {
			if !math.IsNaN(got.Float64()) {
				t.Errorf("Coerce(NaN) = %+v", got)
			}
			continue
		}
		if !got.Equal(c.want) {
			t.Errorf("Coerce(%+v, %v) = %+v, want %+v", c.in, c.t, got, c.want)
		}
	}
	bad := []struct {
		in  cdc.Value
		t   cdc.Type
		why string
	}{
		{cdc.Int(4294967295), cdc.TypeInt, "out of int range"},
		{cdc.Float(1.5), cdc.TypeLong, "it has a fraction"},
		{cdc.Decimal(15, 1), cdc.TypeInt, "it has a fraction"},
		{cdc.Float(math.Inf(1)), cdc.TypeLong, "not a finite number"},
		{cdc.Float(1e19), cdc.TypeLong, "out of range"},
		{cdc.Int(9007199254740993), cdc.TypeDouble, "not exactly representable as double"},
		{cdc.Int(16777217), cdc.TypeFloat, "not exactly representable as float"},
		{cdc.Float(0.123456789123), cdc.TypeFloat, "not exactly representable as float"},
		{cdc.Decimal(1234567, 4), cdc.DecimalType(8, 3), "more than 3 fraction digits"},
		{cdc.Decimal(1234567, 4), cdc.DecimalType(6, 4), "more than 6 digits"},
		{cdc.Float(1e-7), cdc.DecimalType(10, 2), "more than 2 fraction digits"},
		{cdc.Float(math.NaN()), cdc.DecimalType(10, 2), "not a finite number"},
		{cdc.String("7"), cdc.TypeInt, "not a number"},
		{cdc.String("1.5"), cdc.DecimalType(5, 2), "not a number"},
		{cdc.Bool(true), cdc.TypeLong, "not a number"},
		{cdc.Int(2), cdc.TypeBool, "incompatible"},
		{cdc.String("x"), cdc.TypeBinary, "incompatible"},
		{cdc.Bytes([]byte{1}), cdc.TypeString, "incompatible"},
		{cdc.Timestamp(1), cdc.TypeTimestampTZ, "incompatible"},
		{cdc.TimestampTZ(1), cdc.TypeTimestamp, "incompatible"},
		{cdc.Int(1), cdc.TypeDate, "incompatible"},
		{cdc.String("not-a-uuid"), cdc.TypeUUID, "not a canonical UUID"},
		{cdc.Bytes([]byte{1, 2}), cdc.TypeUUID, "not 16 bytes"},
	}
	for _, c := range bad {
		got, err := Coerce(c.in, c.t)
		if err == nil {
			t.Errorf("Coerce(%+v, %v) = %+v, want an error", c.in, c.t, got)
			continue
		}
		if !strings.Contains(err.Error(), c.why) || !strings.HasPrefix(err.Error(), "cannot convert") {
			t.Errorf("Coerce(%+v, %v): %v, want %q", c.in, c.t, err, c.why)
		}
	}
}

func TestCoerceLists(t *testing.T) {
	l := cdc.List(cdc.Int(1), cdc.Null(), cdc.Int(-3))
	got, err := Coerce(l, cdc.ListType(cdc.DecimalType(5, 2)))
	if err != nil || !got.Equal(cdc.List(cdc.Decimal(100, 2), cdc.Null(), cdc.Decimal(-300, 2))) {
		t.Errorf("list<int> to list<decimal(5,2)>: %+v %v", got, err)
	}
	if got, err := Coerce(l, cdc.ListType(cdc.TypeLong)); err != nil || got != l {
		t.Errorf("unchanged list: %+v %v", got, err)
	}
	got, err = Coerce(cdc.List(cdc.String("a\""), cdc.Float(0.5), cdc.Float(math.NaN()), cdc.Bool(true), cdc.Decimal(-5, 1), cdc.Bytes([]byte{1}), cdc.Null()), cdc.TypeString)
	if err != nil || got != cdc.String(`["a\"",0.5,"NaN",true,-0.5,"AQ==",null]`) {
		t.Errorf("list to string: %+v %v", got, err)
	}
	for _, bad := range []struct {
		v   cdc.Value
		t   cdc.Type
		why string
	}{
		{cdc.List(cdc.Int(1), cdc.String("x")), cdc.ListType(cdc.TypeLong), "list element 1"},
		{cdc.List(cdc.Int(1 << 40)), cdc.ListType(cdc.TypeInt), "out of int range"},
		{cdc.List(cdc.Unavailable()), cdc.ListType(cdc.TypeString), "TOAST placeholder"},
		{cdc.String("[1]"), cdc.ListType(cdc.TypeLong), "incompatible"},
		{cdc.List(cdc.Int(1)), cdc.TypeLong, "not a number"},
	} {
		if _, err := Coerce(bad.v, bad.t); err == nil || !strings.Contains(err.Error(), bad.why) {
			t.Errorf("Coerce(%+v, %v): %v, want %q", bad.v, bad.t, err, bad.why)
		}
	}
}
