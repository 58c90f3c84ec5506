package schemas

import (
	"bytes"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// io.debezium.data.Bits (MySQL BIT(n), PostgreSQL bit(n)/varbit, n > 1):
// Debezium sends the bits least significant byte first (its connector
// docs: "The byte[] contains the bits in little-endian form and is sized
// to contain the specified number of bits"; JdbcValueConverters reverses a
// big-endian driver value, BitSet.toByteArray is little-endian). The
// decoder stores the database's order, most significant byte first: MySQL
// b'0000000100000010' (0x0102) arrives as 02 01 ("AgE=") and is stored as
// 01 02. Issue 34 item 5.
func TestBitsDatabaseOrder(t *testing.T) {
	fields := []string{
		`{"type":"bytes","optional":false,"name":"io.debezium.data.Bits","version":1,"parameters":{"length":"16"},"field":"id"}`,
		logical("bytes", "io.debezium.data.Bits", "b10", `,"parameters":{"length":"10"}`),
		logical("bytes", "io.debezium.data.Bits", "b3", `,"parameters":{"length":"3"}`),
		field("bytes", "raw", ""),
		`{"type":"array","items":{"type":"bytes","optional":true,"name":"io.debezium.data.Bits","version":1,"parameters":{"length":"16"}},"optional":true,"field":"arr"}`,
	}
	// id BIT(16) 0x0102; b10 BIT(10) 0x105 (Debezium: 05 01); b3 BIT(3)
	// b'101'; raw bytea 02 01 (not Bits: as sent); arr bit(16)[]
	after := `{"id":"AgE=","b10":"BQE=","b3":"BQ==","raw":"AgE=","arr":["AgE=",null]}`
	rec := Record{Value: []byte(envelopeRecord(fields, "null", after, "c"))}
	orig := bytes.Clone(rec.Value)
	for _, c := range []struct {
		lsb                   bool
		id, b10, b3, raw, arr []byte
	}{
		{false, []byte{1, 2}, []byte{1, 5}, []byte{5}, []byte{2, 1}, []byte{1, 2}},
		{true, []byte{2, 1}, []byte{5, 1}, []byte{5}, []byte{2, 1}, []byte{2, 1}}, // a table written in Debezium's order
	} {
		d := NewDecoder(DecoderOptions{KeyColumns: []string{"id"}, BitsLeastSignificantFirst: c.lsb})
		got, err := d.Decode(rec)
		if err != nil {
			t.Fatal(err)
		}
		a := got.Event.After
		wantValue(t, "id", get(t, a, "id"), cdc.Bytes(c.id))
		wantValue(t, "b10", get(t, a, "b10"), cdc.Bytes(c.b10))
		wantValue(t, "b3", get(t, a, "b3"), cdc.Bytes(c.b3))
		wantValue(t, "raw", get(t, a, "raw"), cdc.Bytes(c.raw))
		wantValue(t, "arr", get(t, a, "arr"), cdc.List(cdc.Bytes(c.arr), cdc.Null()))
		if got.Event.Key != mustKey(t, cdc.Bytes(c.id)) {
			t.Errorf("lsb %v: key %x", c.lsb, got.Event.Key)
		}
		if got.Event.Schema[0].Type != cdc.TypeBinary || got.Event.Schema[0].Source != "io.debezium.data.Bits" {
			t.Errorf("column %+v", got.Event.Schema[0])
		}
	}
	if !bytes.Equal(rec.Value, orig) {
		t.Error("the record was changed")
	}

	// A declared column (schemaless records) whose source is
	// io.debezium.data.Bits; a declared binary column without it keeps
	// the bytes as sent; the TOAST placeholder stays unavailable.
	cols := []cdc.Column{{Name: "id", Type: cdc.TypeInt}, {Name: "flags", Type: cdc.TypeBinary, Source: "io.debezium.data.Bits"},
		{Name: "raw", Type: cdc.TypeBinary}}
	r, err := DecodeImage([]byte(`{"id":1,"flags":"AgE=","raw":"AgE="}`), cols)
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, "declared flags", get(t, r, "flags"), cdc.Bytes([]byte{1, 2}))
	wantValue(t, "declared raw", get(t, r, "raw"), cdc.Bytes([]byte{2, 1}))
	r, err = DecodeImage([]byte(`{"id":1,"flags":"__debezium_unavailable_value"}`), cols)
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, "placeholder", get(t, r, "flags"), cdc.Unavailable())
}
