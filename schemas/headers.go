package schemas

import (
	"errors"
	"fmt"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Kafka record headers Debezium writes on a primary-key change (Debezium
// connector docs, "Primary key updates"): the delete event of the old key
// carries __debezium.newkey, the create event of the new key carries
// __debezium.oldkey; each holds the other key serialized as a Kafka key.
const (
	HeaderOldKey = "__debezium.oldkey"
	HeaderNewKey = "__debezium.newkey"
)

// attachHeaders puts the record's headers, and the key-change headers
// among them, on out.
func (d *Decoder) attachHeaders(out *Decoded, rec *Record) {
	out.Headers = rec.Headers
	for _, h := range rec.Headers {
		switch h.Key {
		case HeaderOldKey:
			out.OldKey = h.Value
		case HeaderNewKey:
			out.NewKey = h.Value
		}
	}
}

// DecodeKey decodes a serialized Kafka key (a record's key, or the value
// of a __debezium.oldkey / __debezium.newkey header: JSON with or without
// the schema envelope, or Confluent Avro) into the encoded primary key of
// the decoder's key columns, the same cdc.Key that events of that row
// carry. It returns an error when the key lacks a key column or cannot
// be decoded (wrapping a *RegistryError when an Avro key's schema could
// not be fetched).
func (d *Decoder) DecodeKey(key []byte) (k cdc.Key, err error) {
	defer func() {
		if r := recover(); r != nil { // a bug; never take the caller down
			d.reset()
			k, err = "", fmt.Errorf("schemas: internal error decoding a key: panic: %v", r)
		}
	}()
	if len(key) == 0 {
		return "", errors.New("schemas: empty key")
	}
	keyCols, err := d.keyColumns(key)
	if err != nil {
		return "", fmt.Errorf("schemas: %w", err)
	}
	var ss *structSpec
	if d.lastSchema != nil {
		ss = d.lastSchema.before
		if ss == nil {
			ss = d.lastSchema.flat
		}
	}
	d.beginText()
	row, err := d.kafkaKeyRow(key, ss)
	if err != nil {
		d.beginText()
		return "", fmt.Errorf("schemas: %w", err)
	}
	d.finishText()
	if k, err = cdc.KeyOf(row, keyCols); err != nil {
		return "", errors.New("schemas: " + err.Error())
	}
	return k, nil
}

// DecodeKeyRow decodes a serialized Kafka key as DecodeKey does and
// returns it as a row image of the decoder's key columns (values as
// decoded, before any table typing), to be typed by the caller (the
// erasure's matching: erasure.TypedKey). The row is valid until the
// decoder's next call. Errors: DecodeKey's.
func (d *Decoder) DecodeKeyRow(key []byte) (row *cdc.Row, err error) {
	defer func() {
		if r := recover(); r != nil { // a bug; never take the caller down
			d.reset()
			row, err = nil, fmt.Errorf("schemas: internal error decoding a key: panic: %v", r)
		}
	}()
	if len(key) == 0 {
		return nil, errors.New("schemas: empty key")
	}
	keyCols, err := d.keyColumns(key)
	if err != nil {
		return nil, fmt.Errorf("schemas: %w", err)
	}
	var ss *structSpec
	if d.lastSchema != nil {
		ss = d.lastSchema.before
		if ss == nil {
			ss = d.lastSchema.flat
		}
	}
	d.beginText()
	if row, err = d.kafkaKeyRow(key, ss); err != nil {
		d.beginText()
		return nil, fmt.Errorf("schemas: %w", err)
	}
	d.finishText()
	if _, err := cdc.KeyOf(row, keyCols); err != nil {
		return nil, errors.New("schemas: " + err.Error())
	}
	return row, nil
}
