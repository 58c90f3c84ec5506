package sample

import (
	"bytes"
	"encoding/json"
	"testing"
)

// orderedKeys decodes a JSON object, returning its keys in document order
// and its decoded value.
func orderedKeys(t *testing.T, raw []byte) ([]string, map[string]any) {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys, obj
}

// subObject returns the raw bytes of field name of a JSON object.
func subObject(t *testing.T, raw []byte, name string) []byte {
	t.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	return obj[name]
}

func payloadBytes(t *testing.T, raw []byte) []byte { t.Helper(); return subObject(t, raw, "payload") }
