package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/lakemirror/lakemirror/internal/names"
	"github.com/lakemirror/lakemirror/schemas"
)

// demoRecord is one Kafka record the demo produces.
type demoRecord struct {
	Key, Value []byte // Value nil = tombstone
}

// loadEventFiles reads Debezium values from files: one JSON value per
// line, or concatenated pretty-printed objects, a line `null` being a
// tombstone (schemas.SplitValues); or RisingWave's test-harness lines
// KEY^VALUE, where KEY becomes the Kafka key bytes as is. Records without
// a key get a Debezium-style JSON key {"col": value, ...} built from the
// key columns of the value's after (or, for deletes, before) image; a
// tombstone takes the key of the record before it, as Debezium emits it
// right after its delete.
func loadEventFiles(paths []string, keyCols []string) ([]demoRecord, error) {
	if err := names.CheckColumns("--key: key column", keyCols); err != nil {
		return nil, usage("%v", err)
	}
	var out []demoRecord
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		recs, err := splitRecords(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		for i, r := range recs {
			if r.Key == nil {
				if r.Value == nil {
					if len(out) > 0 {
						r.Key = out[len(out)-1].Key
					}
				} else if r.Key, err = keyFromValue(r.Value, keyCols); err != nil {
					return nil, fmt.Errorf("%s: record %d: %w", p, i+1, err)
				}
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// splitRecords splits a file into records (see loadEventFiles).
func splitRecords(data []byte) ([]demoRecord, error) {
	if lines, ok := keyValueLines(data); ok {
		return lines, nil
	}
	vals, err := schemas.SplitValues(data)
	if err != nil {
		return nil, err
	}
	out := make([]demoRecord, len(vals))
	for i, v := range vals {
		out[i] = demoRecord{Value: v}
	}
	return out, nil
}

// keyValueLines recognises files whose every non-empty line is KEY^VALUE
// with a JSON object value and a key that is not JSON.
func keyValueLines(data []byte) ([]demoRecord, bool) {
	var out []demoRecord
	for _, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		i := bytes.Index(line, []byte("^{"))
		if i <= 0 || line[0] == '{' {
			return nil, false
		}
		out = append(out, demoRecord{Key: bytes.Clone(line[:i]), Value: bytes.Clone(line[i+1:])})
	}
	return out, len(out) > 0
}

// keyFromValue builds {"k1":v1,...} from the value's row image, keeping
// the JSON number text as is.
func keyFromValue(value []byte, keyCols []string) ([]byte, error) {
	if len(keyCols) == 0 {
		return nil, fmt.Errorf("the record has no Kafka key: name the key columns with --key")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(value, &top); err != nil {
		return nil, fmt.Errorf("value is not a JSON object: %w", err)
	}
	if p, ok := top["payload"]; ok {
		if _, hasSchema := top["schema"]; hasSchema {
			top = nil
			if err := json.Unmarshal(p, &top); err != nil {
				return nil, fmt.Errorf("payload is not a JSON object: %w", err)
			}
		}
	}
	img := top // flattened records (ExtractNewRecordState) carry the columns at the top
	for _, side := range []string{"after", "before"} {
		raw, ok := top[side]
		if !ok || string(raw) == "null" {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err == nil {
			img = m
			break
		}
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keyCols {
		v, ok := img[k]
		if !ok {
			return nil, fmt.Errorf("key column %q is not in the record", k)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}
