package cdc

import (
	"encoding/hex"
	"testing"
)

func TestKeyText(t *testing.T) {
	enc := func(vals ...Value) Key {
		t.Helper()
		b, err := EncodeKey(nil, vals...)
		if err != nil {
			t.Fatal(err)
		}
		return Key(b)
	}
	for _, c := range []struct {
		key  Key
		cols []string
		want string
	}{
		{enc(Value{Kind: KindInt, I: 1001}), []string{"order_id"}, "order_id=1001"},
		{enc(Value{Kind: KindInt, I: -7}), []string{"id"}, "id=-7"},
		{enc(Value{Kind: KindString, S: "eu"}, Value{Kind: KindInt, I: 7}), []string{"region", "id"}, "region=eu,id=7"},
		{enc(Value{Kind: KindString, S: "a,b"}), []string{"code"}, `code="a,b"`},
		{enc(Value{Kind: KindString, S: "x\x00y"}), []string{"code"}, `code="x\x00y"`},
		{enc(Value{Kind: KindString, S: ""}), []string{"code"}, `code=""`},
		{enc(Value{Kind: KindNull}), []string{"code"}, "code=null"},
		{enc(Value{Kind: KindBool, I: 1}, Value{Kind: KindBool}), []string{"a", "b"}, "a=true,b=false"},
		{enc(Value{Kind: KindInt, I: 1}, Value{Kind: KindInt, I: 2}), []string{"a"}, "a=1,?=2"},
		{enc(Float(-2.5), Float(0.25)), []string{"x", "y"}, "x=-2.5,y=0.25"},
		{enc(Decimal(12345, 2)), []string{"amount"}, "amount=123.45"},
	} {
		got, err := KeyText(c.key, c.cols)
		if err != nil {
			t.Fatalf("KeyText(%x): %v", string(c.key), err)
		}
		if got != c.want {
			t.Errorf("KeyText(%x) = %q, want %q", string(c.key), got, c.want)
		}
	}
}

// The key of issue 35's validation output, as it was printed.
func TestHexKeyText(t *testing.T) {
	got, err := HexKeyText("1080000000000003e9", []string{"order_id"})
	if err != nil || got != "order_id=1001" {
		t.Fatalf("HexKeyText = %q, %v; want order_id=1001", got, err)
	}
	for _, bad := range []string{"zz", "10800000", "20616263", "7f"} {
		if got, err := HexKeyText(bad, []string{"c"}); err == nil {
			t.Errorf("HexKeyText(%q) = %q, want an error", bad, got)
		}
	}
	raw, _ := hex.DecodeString("1080000000000003e9")
	if got, _ := KeyText(Key(raw), nil); got != "?=1001" {
		t.Errorf("KeyText without columns = %q", got)
	}
}
