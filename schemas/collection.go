package schemas

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// ErrNotJSON: a value SourceCollection cannot read (not a JSON object:
// an Avro record in the Confluent wire format, bytes of another kind).
var ErrNotJSON = errors.New("not a JSON change event")

// SourceCollection is the data collection of the source table of a
// Debezium JSON change event (value: the Kafka record's value, with the
// schema envelope {"schema":…,"payload":{…}} or without it), as
// Debezium's transaction metadata names it: cdc.DataCollection of its
// source block's connector, db, schema and table. "" when the event has
// no source block, or its connector's form is unknown (a flattened
// event, ExtractNewRecordState, has none: its source fields are renamed).
// A tombstone (nil or empty value) gives "" too.
//
// It is for checks outside the write path (the starter), not for every
// event: it parses the whole value.
//
// Errors: ErrNotJSON when value is not a JSON object.
func SourceCollection(value []byte) (string, error) {
	value = bytes.TrimSpace(value)
	if len(value) == 0 {
		return "", nil
	}
	if value[0] != '{' {
		return "", ErrNotJSON
	}
	type source struct {
		Connector string `json:"connector"`
		DB        string `json:"db"`
		Schema    string `json:"schema"`
		Table     string `json:"table"`
	}
	var ev struct {
		Source  *source `json:"source"`
		Payload *struct {
			Source *source `json:"source"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(value, &ev); err != nil {
		return "", ErrNotJSON
	}
	src := ev.Source
	if src == nil && ev.Payload != nil {
		src = ev.Payload.Source
	}
	if src == nil {
		return "", nil
	}
	return cdc.DataCollection(src.Connector, src.DB, src.Schema, src.Table), nil
}
