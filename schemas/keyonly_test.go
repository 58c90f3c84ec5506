package schemas

import (
	"fmt"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// keyOnlyRecord is a PostgreSQL delete of key 101 in JsonConverter form
// (the real-stack items table plus required columns with defaults), with
// before image fields given as JSON text.
func keyOnlyRecord(before string) Record {
	fields := `{"type":"int64","optional":false,"field":"id"},` +
		`{"type":"string","optional":false,"field":"name"},` +
		`{"type":"int32","optional":true,"field":"qty"},` +
		`{"type":"string","optional":true,"field":"notes"},` +
		`{"type":"int32","optional":false,"default":5,"field":"stock"},` +
		`{"type":"string","optional":false,"default":"new","field":"status"},` +
		`{"type":"boolean","optional":false,"field":"active"}`
	schema := `{"type":"struct","fields":[` +
		`{"type":"struct","fields":[` + fields + `],"optional":true,"field":"before"},` +
		`{"type":"struct","fields":[` + fields + `],"optional":true,"field":"after"},` +
		`{"type":"struct","fields":[{"type":"int64","optional":false,"field":"lsn"},{"type":"int64","optional":false,"field":"ts_ms"},{"type":"string","optional":false,"field":"connector"}],"optional":false,"field":"source"},` +
		`{"type":"string","optional":false,"field":"op"}],"optional":false}`
	value := `{"schema":` + schema + `,"payload":{"before":` + before +
		`,"after":null,"source":{"lsn":33583720,"ts_ms":1,"connector":"postgresql"},"op":"d"}}`
	return Record{Topic: "rs.public.items", Key: []byte(`{"id":101}`), Value: []byte(value)}
}

// TestKeyOnlyDeleteImage: a delete's before image that holds the key and
// only what Debezium fills in for the columns the database left out
// (NULL, a required column's default or its type's fallback) is
// key-only: its other values are NULL, so rule 4 keeps the key's last
// known values and a primary-key update's TOAST placeholders are not
// filled from it. Any real value keeps the image as it came.
func TestKeyOnlyDeleteImage(t *testing.T) {
	for _, c := range []struct {
		before string
		want   string // the non-key values after decoding
	}{
		// the default replica identity: what the real stack's items table sends
		{`{"id":101,"name":"","qty":null,"notes":null,"stock":5,"status":"new","active":false}`,
			`[{0 0 0 } {0 0 0 } {0 0 0 } {0 0 0 } {0 0 0 } {0 0 0 }]`},
		// the fallback instead of a default is also a filler
		{`{"id":101,"name":"","qty":null,"notes":null,"stock":0,"status":"","active":false}`,
			`[{0 0 0 } {0 0 0 } {0 0 0 } {0 0 0 } {0 0 0 } {0 0 0 }]`},
		// full images: an optional column with a value, a required one off its filler
		{`{"id":101,"name":"","qty":3,"notes":null,"stock":5,"status":"new","active":false}`,
			`[{4 0 0 } {2 0 3 } {0 0 0 } {2 0 5 } {4 0 0 new} {1 0 0 }]`},
		{`{"id":101,"name":"x","qty":null,"notes":null,"stock":5,"status":"new","active":false}`,
			`[{4 0 0 x} {0 0 0 } {0 0 0 } {2 0 5 } {4 0 0 new} {1 0 0 }]`},
		{`{"id":101,"name":"","qty":null,"notes":null,"stock":6,"status":"new","active":false}`,
			`[{4 0 0 } {0 0 0 } {0 0 0 } {2 0 6 } {4 0 0 new} {1 0 0 }]`},
		{`{"id":101,"name":"","qty":null,"notes":null,"stock":5,"status":"new","active":true}`,
			`[{4 0 0 } {0 0 0 } {0 0 0 } {2 0 5 } {4 0 0 new} {1 0 1 }]`},
		// nothing but NULLs beyond the key: nothing to clear
		{`{"id":101,"name":null,"qty":null,"notes":null,"stock":null,"status":null,"active":null}`,
			`[{0 0 0 } {0 0 0 } {0 0 0 } {0 0 0 } {0 0 0 } {0 0 0 }]`},
	} {
		d := NewDecoder(DecoderOptions{})
		got, err := d.Decode(keyOnlyRecord(c.before))
		if err != nil {
			t.Fatalf("%s: %v", c.before, err)
		}
		e := got.Event
		if e.Op != cdc.OpDelete || e.Key != mustKey(t, cdc.Int(101)) {
			t.Fatalf("%s: op %v key %x", c.before, e.Op, e.Key)
		}
		if id := get(t, e.Before, "id"); id != cdc.Int(101) {
			t.Errorf("%s: id %+v", c.before, id)
		}
		if s := fmt.Sprint(e.Before.Vals[1:]); s != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.before, s, c.want)
		}
	}
}
