package cdc

import (
	"math"
	"testing"
)

func TestListRoundTrip(t *testing.T) {
	elems := []Value{
		Null(), Bool(true), Bool(false), Int(-1), Int(math.MaxInt64), Float(-0.5), Float(math.Inf(1)),
		String(""), String("héllo\x00"), Bytes([]byte{0, 1, 255}), Decimal(-12345, 2), BigDecimal("-123456789012345678901234567890", 5),
		Date(-1), Time(86_399_999_999), Timestamp(-1), TimestampTZ(1595008822123456),
		{Kind: KindUUID, S: "0123456789abcdef"}, Unavailable(), List(Int(1), String("x")), List(),
	}
	l := List(elems...)
	if l.Kind != KindList {
		t.Fatalf("kind %d", l.Kind)
	}
	got := l.Elems()
	if len(got) != len(elems) {
		t.Fatalf("%d elements, want %d", len(got), len(elems))
	}
	for i := range elems {
		if !got[i].Equal(elems[i]) {
			t.Errorf("element %d = %+v, want %+v", i, got[i], elems[i])
		}
	}
	// Canonical: equal elements give equal lists; a big decimal that fits
	// int64 encodes as the small form.
	if !List(Decimal(5, 1)).Equal(List(Value{Kind: KindDecimal, S: "5", Scale: 1})) {
		t.Error("decimal forms differ")
	}
	if List(Int(1), Int(2)).Equal(List(Int(2), Int(1))) || List(Int(1)).I == List(Int(2)).I {
		t.Error("different lists are equal or share a digest")
	}
	if List().Elems() == nil || len(List().Elems()) != 0 {
		t.Error("empty list")
	}
	v, err := ListFromEncoding(l.S)
	if err != nil || !v.Equal(l) {
		t.Errorf("ListFromEncoding: %v %+v", err, v)
	}
	for _, bad := range []string{"\x03", "\x04\x05ab", "\x06\x00\x02\x02", "\xfe", "\x0d\x02\x03\x00"} {
		if _, err := ListFromEncoding(bad); err == nil {
			t.Errorf("ListFromEncoding(%q): no error", bad)
		}
	}
	if (Value{Kind: KindList, S: "\xfe"}).Elems() != nil {
		t.Error("malformed list has elements")
	}
}

func TestListType(t *testing.T) {
	lt := ListType(DecimalType(10, 2))
	if lt.String() != "list<decimal(10,2)>" || lt.ElemType() != DecimalType(10, 2) {
		t.Errorf("%v %v", lt, lt.ElemType())
	}
	if ListType(TypeInt).String() != "list<int>" || ListType(ListType(TypeInt)).String() != "list<string>" {
		t.Errorf("%v %v", ListType(TypeInt), ListType(ListType(TypeInt)))
	}
	if TypeLong.ElemType() != (Type{}) {
		t.Error("ElemType of a non-list")
	}
	// A list can be a key column (equality only).
	a, err1 := EncodeKey(nil, List(Int(1)))
	b, err2 := EncodeKey(nil, List(Int(1)))
	if err1 != nil || err2 != nil || string(a) != string(b) {
		t.Errorf("%v %v", err1, err2)
	}
}
