package schemas

import (
	"fmt"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// DecodeKeyRow gives the key columns of a serialized Kafka key (JSON with
// and without the envelope) as a row whose key is DecodeKey's; errors are
// DecodeKey's.
func TestDecodeKeyRow(t *testing.T) {
	d := NewDecoder(DecoderOptions{KeyColumns: []string{"tenant", "id"}})
	for _, key := range []string{
		`{"tenant":7,"id":"a,b"}`,
		`{"schema":{"type":"struct","fields":[{"field":"tenant","type":"int64"},{"field":"id","type":"string"}]},"payload":{"tenant":7,"id":"a,b"}}`,
	} {
		row, err := d.DecodeKeyRow([]byte(key))
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		tenant, _ := row.Get("tenant")
		id, _ := row.Get("id")
		k, err := cdc.KeyOf(row, []string{"tenant", "id"})
		want, err2 := d.DecodeKey([]byte(key))
		if got := fmt.Sprint(tenant.I, " ", id.S); got != "7 a,b" || err != nil || err2 != nil || k != want {
			t.Errorf("%s: row %s, key %x (%v), DecodeKey %x (%v)", key, got, k, err, want, err2)
		}
	}
	for key, want := range map[string]string{
		``:             "schemas: empty key",
		`{"tenant":7}`: `schemas: cdc: key column "id" is missing from the row image`,
	} {
		if _, err := d.DecodeKeyRow([]byte(key)); err == nil || err.Error() != want {
			_, derr := d.DecodeKey([]byte(key))
			t.Errorf("%q: %v, want %s (DecodeKey: %v)", key, err, want, derr)
		}
	}
}
