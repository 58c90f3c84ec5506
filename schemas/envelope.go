package schemas

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/valyala/fastjson"
)

// The record value: the Debezium change event envelope (before, after,
// source, op, ts_ms, transaction), with or without the Kafka Connect
// JsonConverter wrapper {"schema": …, "payload": …} (schemas.enable=true).

// splitEnvelope is the fast path for JsonConverter output, which writes
// exactly {"schema":S,"payload":P}: it returns the raw bytes of S and of
// P (P unvalidated: the parser checks it) without parsing S when S repeats
// the previous record's schema byte for byte. ok is false when the value
// does not have that shape; the caller then parses it generically.
func (d *Decoder) splitEnvelope(b []byte) (schema, payload []byte, ok bool) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, nil, false
	}
	i = skipWS(b, i+1)
	const sk, pk = `"schema"`, `"payload"`
	if !bytes.HasPrefix(b[i:], []byte(sk)) {
		return nil, nil, false
	}
	i = skipWS(b, i+len(sk))
	if i >= len(b) || b[i] != ':' {
		return nil, nil, false
	}
	i = skipWS(b, i+1)
	start := i
	if n := len(d.lastSchemaRaw); n > 0 && bytes.HasPrefix(b[i:], d.lastSchemaRaw) {
		// The previous schema, an object, ends exactly here.
		i += n
	} else {
		var err error
		if i, err = skipValue(b, i, 1); err != nil {
			return nil, nil, false
		}
	}
	schema = b[start:i]
	i = skipWS(b, i)
	if i >= len(b) || b[i] != ',' {
		return nil, nil, false
	}
	i = skipWS(b, i+1)
	if !bytes.HasPrefix(b[i:], []byte(pk)) {
		return nil, nil, false
	}
	i = skipWS(b, i+len(pk))
	if i >= len(b) || b[i] != ':' {
		return nil, nil, false
	}
	i = skipWS(b, i+1)
	end := len(b)
	for end > i && (b[end-1] == ' ' || b[end-1] == '\t' || b[end-1] == '\n' || b[end-1] == '\r') {
		end--
	}
	if end <= i || b[end-1] != '}' {
		return nil, nil, false
	}
	end--
	for end > i && (b[end-1] == ' ' || b[end-1] == '\t' || b[end-1] == '\n' || b[end-1] == '\r') {
		end--
	}
	if end <= i {
		return nil, nil, false
	}
	return schema, b[i:end], true
}

// parseValue parses a record value and returns the envelope payload (the
// value itself when there is no JsonConverter wrapper) and the parsed
// schema (nil without a wrapper or with "schema":null).
func (d *Decoder) parseValue(b []byte) (*fastjson.Value, *envSchema, error) {
	if err := checkEscapes(b); err != nil {
		return nil, nil, fmt.Errorf("malformed JSON: %v", err)
	}
	if sch, pl, ok := d.splitEnvelope(b); ok {
		if p, err := d.vp.ParseBytes(pl); err == nil {
			var env *envSchema
			if string(sch) != "null" {
				if env, err = d.schemaFor(sch); err != nil {
					return nil, nil, err
				}
			}
			return p, env, nil
		}
		// Not the usual shape after all (e.g. a key after "payload"):
		// parse generically, which also reports real syntax errors.
	}
	root, err := d.vp.ParseBytes(b)
	if err != nil {
		return nil, nil, fmt.Errorf("malformed JSON: %v", err)
	}
	if root.Type() != fastjson.TypeObject {
		return root, nil, nil
	}
	o, _ := root.Object()
	if o.Len() != 2 {
		return root, nil, nil
	}
	s, p := o.Get("schema"), o.Get("payload")
	if s == nil || p == nil {
		return root, nil, nil
	}
	var env *envSchema
	if !isNull(s) {
		d.raw = appendCompactJSON(d.raw[:0], s)
		if env, err = d.schemaFor(d.raw); err != nil {
			return nil, nil, err
		}
	}
	return p, env, nil
}

// payloadFields are the envelope fields the decoder looks at.
type payloadFields struct {
	before, after, source, op *fastjson.Value
	transaction               *fastjson.Value
	tsMs, tsUs                *fastjson.Value // the envelope's processing time
	status, id                *fastjson.Value // transaction metadata
	ddl, tableChanges         *fastjson.Value // schema change events
	flat                      *fastjson.Value // <prefix>op / <prefix>deleted of ExtractNewRecordState output
}

func (d *Decoder) readPayload(o *fastjson.Object) payloadFields {
	var f payloadFields
	o.Visit(func(k []byte, v *fastjson.Value) {
		switch string(k) {
		case "before":
			f.before = v
		case "after":
			f.after = v
		case "source":
			f.source = v
		case "op":
			f.op = v
		case "transaction":
			f.transaction = v
		case "ts_ms":
			f.tsMs = v
		case "ts_us":
			f.tsUs = v
		case "status":
			f.status = v
		case "id":
			f.id = v
		case "ddl":
			f.ddl = v
		case "tableChanges":
			f.tableChanges = v
		default:
			if len(k) > len(d.prefix) && string(k[:len(d.prefix)]) == d.prefix {
				if n := string(k[len(d.prefix):]); n == "op" || n == "deleted" {
					f.flat = v
				}
			}
		}
	})
	return f
}

// isFlattened reports whether a payload is an ExtractNewRecordState
// record (see FlattenMode).
func (d *Decoder) isFlattened(f *payloadFields) bool {
	switch d.flatMode {
	case FlattenAlways:
		return true
	case FlattenNever:
		return false
	}
	return f.flat != nil && f.op == nil && f.before == nil && f.after == nil && f.source == nil
}

// classifyNoOp explains a payload without an op: a transaction metadata
// event (Debezium docs, "Transaction metadata": status BEGIN/END, id,
// event_count, data_collections) is recognized; anything else is an error.
func (d *Decoder) classifyNoOp(f *payloadFields) (RecordKind, error) {
	switch {
	case f.status != nil && f.id != nil:
		if f.status.Type() != fastjson.TypeString {
			return 0, fmt.Errorf("transaction metadata status: want a string, got %s", jsonTypeName(f.status))
		}
		s, _ := f.status.StringBytes()
		if string(s) != "BEGIN" && string(s) != "END" {
			return 0, fmt.Errorf("transaction metadata status %q: want BEGIN or END", s)
		}
		return KindTxMetadata, nil
	case f.ddl != nil || f.tableChanges != nil:
		return 0, errors.New("schema change event on a data topic")
	case f.flat != nil:
		return 0, errors.New(`no "op" field: this looks like ExtractNewRecordState (unwrap) output, which this decoder is configured to reject (DecoderOptions.Flattened = FlattenNever)`)
	}
	return 0, errors.New(`no "op" field: not a Debezium change event`)
}
