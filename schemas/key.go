package schemas

import (
	"errors"
	"fmt"

	"github.com/valyala/fastjson"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// The Kafka key. Debezium keys each record by the table's primary key: a
// struct of the key columns, written by JsonConverter bare ({"id":1004})
// or in the {"schema","payload"} envelope.

// keyColumns returns the primary-key column names: the configured ones,
// else the field names of the Kafka key (JSON or Avro), in key field
// order, learned from the first record that has a usable key and
// remembered.
func (d *Decoder) keyColumns(key []byte) ([]string, error) {
	if len(d.keyCols) > 0 {
		return d.keyCols, nil
	}
	var names []string
	if len(key) > 0 && key[0] == confluentMagic {
		row, err := d.avroKeyRow(key)
		if err != nil {
			return nil, fmt.Errorf("no key columns configured and the Avro Kafka key cannot be read: %w", err)
		}
		names = append(names, row.Cols.Names...)
	} else {
		o, _, err := d.parseKafkaKey(key)
		if err != nil {
			return nil, fmt.Errorf("no key columns configured and %v", err)
		}
		names = make([]string, 0, o.Len())
		o.Visit(func(k []byte, _ *fastjson.Value) { names = append(names, string(k)) })
	}
	if len(names) == 0 {
		return nil, errors.New("no key columns configured and the Kafka key is an empty object")
	}
	d.keyCols = names
	return names, nil
}

// parseKafkaKey parses the Kafka key into its field object and, when the
// key carries a Connect schema, that schema.
func (d *Decoder) parseKafkaKey(key []byte) (*fastjson.Object, *structSpec, error) {
	if len(key) == 0 {
		return nil, nil, errors.New("the record has no Kafka key")
	}
	if err := checkEscapes(key); err != nil {
		return nil, nil, fmt.Errorf("the Kafka key is not JSON (%v)", err)
	}
	v, err := d.kp.ParseBytes(key)
	if err != nil {
		return nil, nil, fmt.Errorf("the Kafka key is not JSON (%v)", err)
	}
	if v.Type() != fastjson.TypeObject {
		return nil, nil, fmt.Errorf("the Kafka key is %s, not a JSON object", jsonTypeName(v))
	}
	o, _ := v.Object()
	if o.Len() != 2 {
		return o, nil, nil
	}
	s, p := o.Get("schema"), o.Get("payload")
	if s == nil || p == nil {
		return o, nil, nil
	}
	if p.Type() != fastjson.TypeObject {
		return nil, nil, fmt.Errorf("the Kafka key payload is %s, not a JSON object", jsonTypeName(p))
	}
	var ss *structSpec
	if !isNull(s) {
		if ss, err = d.parseStructSpec(s, "key schema", ""); err != nil {
			return nil, nil, err
		}
	}
	po, _ := p.Object()
	return po, ss, nil
}

// kafkaKeyRow decodes the Kafka key's fields as a row, for a delete that
// has no before image. Field types come from the key's own schema (JSON
// envelope or Avro), else the value schema's row struct (img), else the
// declared columns, else inference, so that the key encodes as the
// images' keys do.
func (d *Decoder) kafkaKeyRow(key []byte, img *structSpec) (*cdc.Row, error) {
	if len(key) > 0 && key[0] == confluentMagic {
		return d.avroKeyRow(key)
	}
	o, ss, err := d.parseKafkaKey(key)
	if err != nil {
		return nil, err
	}
	n := o.Len()
	names := make([]string, 0, n)
	vals := make([]cdc.Value, n)
	i := 0
	o.Visit(func(k []byte, v *fastjson.Value) {
		if err != nil {
			return
		}
		name := string(k)
		names = append(names, name)
		var fs *fieldSpec
		switch {
		case ss != nil && hasField(ss, name):
			fs = &ss.fields[ss.index[name]]
		case img != nil && hasField(img, name):
			fs = &img.fields[img.index[name]]
		default:
			fs = d.looseSpec(name)
		}
		if e := d.field(v, fs, &vals[i]); e != nil {
			err = fmt.Errorf("the Kafka key field %s: %w", name, e)
		}
		i++
	})
	if err != nil {
		return nil, err
	}
	return &cdc.Row{Cols: cdc.NewColumns(names), Vals: vals}, nil
}

func hasField(ss *structSpec, name string) bool {
	_, ok := ss.index[name]
	return ok
}

// eventKey encodes the key of row for the key columns. The result shares
// one allocation with the Seq bytes appended after it: seqBytes are
// returned as the string's tail. Errors: a key column missing from the
// image or NULL in it (the record goes to the quarantine; a NULL key would
// otherwise collide with the key column's zero value in the mirror).
func (d *Decoder) eventKey(row *cdc.Row, keyCols []string, image string, seq []byte) (cdc.Key, cdc.Seq, error) {
	d.keyVals = d.keyVals[:0]
	for _, c := range keyCols {
		v, ok := row.Get(c)
		if !ok {
			return "", "", fmt.Errorf("key column %q is missing from the %s image", c, image)
		}
		if v.IsNull() {
			return "", "", fmt.Errorf("key column %q is NULL in the %s image: a row with a NULL key cannot be told apart from other rows", c, image)
		}
		d.keyVals = append(d.keyVals, v)
	}
	buf, err := cdc.EncodeKey(d.keyBuf[:0], d.keyVals...)
	if err != nil {
		return "", "", fmt.Errorf("%s image: %v", image, err)
	}
	k := len(buf)
	buf = append(buf, seq...)
	d.keyBuf = buf[:0]
	clear(d.keyVals)
	s := string(buf)
	return cdc.Key(s[:k]), cdc.Seq(s[k:]), nil
}
