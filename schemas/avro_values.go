package schemas

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/hamba/avro/v2"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/cdc/typing"
)

// avroValue reads one column value of node n by its decoder fs. Like
// decodeValue, kinds with a payload return it separately (aliasing reader
// memory or d.tmp; copy before the next call).
func (d *Decoder) avroValue(r *avro.Reader, n *anode, fs *fieldSpec, depth int) (cdc.Value, []byte, error) {
	if depth > maxAvroDepth {
		return cdc.Value{}, nil, errors.New("the Avro value is nested too deeply")
	}
	n, err := avroBranch(r, n)
	if err != nil {
		return cdc.Value{}, nil, err
	}
	if n.t == avro.Null {
		return cdc.Null(), nil, nil
	}
	mismatch := func() (cdc.Value, []byte, error) {
		return cdc.Value{}, nil, fmt.Errorf("an Avro %s cannot be read as %s", n.t, fs.typ)
	}
	switch fs.dec {
	case decBool:
		if n.t == avro.Boolean {
			return cdc.Bool(r.ReadBool()), nil, nil
		}
	case decInt:
		i, ok := avroInt(r, n)
		if !ok {
			return mismatch()
		}
		if i < fs.min || i > fs.max {
			return cdc.Value{}, nil, fmt.Errorf("%d out of range [%d, %d]", i, fs.min, fs.max)
		}
		return cdc.Int(i), nil, nil
	case decFloat32, decFloat64:
		var f float64
		switch n.t {
		case avro.Float:
			f = float64(r.ReadFloat())
		case avro.Double:
			f = r.ReadDouble()
			if fs.dec == decFloat32 {
				f = float64(float32(f))
			}
		default:
			return mismatch()
		}
		return cdc.Float(f), nil, nil
	case decString:
		switch n.t {
		case avro.String:
			return d.textValue(r.ReadBytes())
		case avro.Enum:
			sym, err := avroEnum(r, n)
			if err != nil {
				return cdc.Value{}, nil, err
			}
			return d.textValue([]byte(sym))
		}
	case decBytes:
		var val cdc.Value
		var b []byte
		var err error
		switch n.t {
		case avro.Bytes:
			val, b, err = d.rawBytesValue(r.ReadBytes())
		case avro.Fixed:
			val, b, err = d.rawBytesValue(avroFixed(r, n))
		default:
			return mismatch()
		}
		return d.bitsOrder(fs, val, b, err)
	case decDecimal:
		var b []byte
		switch n.t {
		case avro.Bytes:
			b = r.ReadBytes()
		case avro.Fixed:
			b = avroFixed(r, n)
		default:
			return mismatch()
		}
		if r.Error != nil {
			return cdc.Value{}, nil, avroErr(r.Error)
		}
		small, big, digits, err := unscaledFromBytes(b)
		if err != nil {
			return cdc.Value{}, nil, err
		}
		return d.unscaledDecimal(small, big, digits, fs)
	case decDate, decTimeMs, decTimeUs, decTimeNs, decTsMs, decTsUs, decTsNs:
		i, ok := avroInt(r, n)
		if !ok {
			return mismatch()
		}
		lo, hi := temporalRange(fs)
		if i < lo || i > hi {
			return cdc.Value{}, nil, fmt.Errorf("%d out of range [%d, %d]", i, lo, hi)
		}
		v, err := temporalFromInt(i, fs)
		return v, nil, err
	case decZonedTs, decZonedTime, decUUID:
		if n.t != avro.String {
			return mismatch()
		}
		s := r.ReadBytes()
		if r.Error != nil {
			return cdc.Value{}, nil, avroErr(r.Error)
		}
		switch fs.dec {
		case decUUID:
			return d.uuidValue(s)
		case decZonedTime:
			us, err := parseZonedTime(s)
			if err != nil {
				return cdc.Value{}, nil, fmt.Errorf("%q is not an ISO-8601 time with offset", s)
			}
			return cdc.Time(us), nil, nil
		}
		us, err := parseZonedTimestamp(s)
		if err != nil {
			return cdc.Value{}, nil, fmt.Errorf("%q is not an ISO-8601 timestamp with offset", s)
		}
		return cdc.TimestampTZ(us), nil, nil
	case decJSONText:
		var err error
		d.avro.json, err = d.appendAvroJSON(d.avro.json[:0], r, n, depth)
		if err != nil {
			return cdc.Value{}, nil, err
		}
		if !utf8.Valid(d.avro.json) {
			return cdc.Value{}, nil, fmt.Errorf("string is not valid UTF-8")
		}
		return cdc.Value{Kind: cdc.KindString}, d.avro.json, nil
	case decList:
		if n.t == avro.Array {
			return d.avroList(r, n, fs, depth)
		}
	case decGeometry:
		if n.t == avro.Record {
			return d.avroGeometry(r, n, depth)
		}
	case decVarDecimal:
		if n.t == avro.Record {
			return d.avroVarDecimal(r, n, fs, depth)
		}
	}
	return mismatch()
}

// avroInt reads an Avro int or long.
func avroInt(r *avro.Reader, n *anode) (int64, bool) {
	switch n.t {
	case avro.Int:
		return int64(r.ReadInt()), true
	case avro.Long:
		return r.ReadLong(), true
	}
	return 0, false
}

// avroList reads an array into a cdc list; a one-element array holding
// the TOAST placeholder is cdc.Unavailable.
func (d *Decoder) avroList(r *avro.Reader, n *anode, fs *fieldSpec, depth int) (cdc.Value, []byte, error) {
	var enc []byte
	count, unavailable := 0, false
	err := avroBlocks(r, func() error {
		val, payload, err := d.avroValue(r, n.items, fs.elem, depth+1)
		if err != nil {
			return fmt.Errorf("[%d]: %w", count, err)
		}
		if val.Kind == cdc.KindUnavailable {
			unavailable = true
		}
		enc = cdc.AppendListElem(enc, val, payload)
		count++
		return nil
	})
	if err != nil {
		return cdc.Value{}, nil, err
	}
	if unavailable {
		if count == 1 {
			return cdc.Unavailable(), nil, nil
		}
		return cdc.Value{}, nil, fmt.Errorf("a TOAST placeholder inside an array")
	}
	l, err := cdc.ListFromEncoding(string(enc))
	return l, nil, err
}

// avroGeometry reads io.debezium.data.geometry.* ({wkb, srid}, Point also
// x, y) and returns the WKB bytes.
func (d *Decoder) avroGeometry(r *avro.Reader, n *anode, depth int) (cdc.Value, []byte, error) {
	var wkb []byte
	for _, f := range n.fields {
		if f.name != "wkb" {
			if err := avroSkip(r, f.node, depth+1); err != nil {
				return cdc.Value{}, nil, err
			}
			continue
		}
		b, err := avroBranch(r, f.node)
		if err != nil {
			return cdc.Value{}, nil, err
		}
		if b.t != avro.Bytes {
			return cdc.Value{}, nil, fmt.Errorf("geometry wkb: want bytes, got Avro %s", b.t)
		}
		wkb = r.ReadBytes()
	}
	if r.Error != nil {
		return cdc.Value{}, nil, avroErr(r.Error)
	}
	if wkb == nil {
		return cdc.Value{}, nil, fmt.Errorf(`geometry without "wkb"`)
	}
	return d.rawBytesValue(wkb)
}

// avroVarDecimal reads io.debezium.data.VariableScaleDecimal ({scale int,
// value bytes}).
func (d *Decoder) avroVarDecimal(r *avro.Reader, n *anode, fs *fieldSpec, depth int) (cdc.Value, []byte, error) {
	var scale int64
	var value []byte
	for _, f := range n.fields {
		b, err := avroBranch(r, f.node)
		if err != nil {
			return cdc.Value{}, nil, err
		}
		switch {
		case f.name == "scale" && (b.t == avro.Int || b.t == avro.Long):
			scale, _ = avroInt(r, b)
		case f.name == "value" && b.t == avro.Bytes:
			value = r.ReadBytes()
		default:
			if err := avroSkip(r, b, depth+1); err != nil {
				return cdc.Value{}, nil, err
			}
		}
	}
	if r.Error != nil {
		return cdc.Value{}, nil, avroErr(r.Error)
	}
	if value == nil || scale < math.MinInt16 || scale > math.MaxInt16 {
		return cdc.Value{}, nil, fmt.Errorf("VariableScaleDecimal: want an int scale (got %d) and bytes value", scale)
	}
	return d.varDecimal(scale, value, fs)
}

// appendAvroJSON renders one Avro value as compact JSON, the way
// JsonConverter renders the same Connect value: records and maps as
// objects, arrays as arrays, bytes and fixed as base64 strings, enums as
// their symbol, unions as their branch's value, non-finite doubles as
// "NaN"/"Infinity" strings.
func (d *Decoder) appendAvroJSON(dst []byte, r *avro.Reader, n *anode, depth int) ([]byte, error) {
	if depth > maxAvroDepth {
		return dst, errors.New("the Avro value is nested too deeply")
	}
	n, err := avroBranch(r, n)
	if err != nil {
		return dst, err
	}
	switch n.t {
	case avro.Null:
		dst = append(dst, "null"...)
	case avro.Boolean:
		dst = strconv.AppendBool(dst, r.ReadBool())
	case avro.Int:
		dst = strconv.AppendInt(dst, int64(r.ReadInt()), 10)
	case avro.Long:
		dst = strconv.AppendInt(dst, r.ReadLong(), 10)
	case avro.Float:
		dst = appendJSONNumber(dst, float64(r.ReadFloat()), 32)
	case avro.Double:
		dst = appendJSONNumber(dst, r.ReadDouble(), 64)
	case avro.String:
		dst = typing.AppendJSONString(dst, r.ReadBytes())
	case avro.Bytes:
		dst = typing.AppendJSONString(dst, []byte(base64.StdEncoding.EncodeToString(r.ReadBytes())))
	case avro.Fixed:
		dst = typing.AppendJSONString(dst, []byte(base64.StdEncoding.EncodeToString(avroFixed(r, n))))
	case avro.Enum:
		sym, err := avroEnum(r, n)
		if err != nil {
			return dst, err
		}
		dst = typing.AppendJSONString(dst, []byte(sym))
	case avro.Record:
		dst = append(dst, '{')
		for i, f := range n.fields {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = typing.AppendJSONString(dst, []byte(f.name))
			dst = append(dst, ':')
			if dst, err = d.appendAvroJSON(dst, r, f.node, depth+1); err != nil {
				return dst, err
			}
		}
		dst = append(dst, '}')
	case avro.Array:
		dst = append(dst, '[')
		first := true
		err = avroBlocks(r, func() error {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			var err error
			dst, err = d.appendAvroJSON(dst, r, n.items, depth+1)
			return err
		})
		dst = append(dst, ']')
	case avro.Map:
		dst = append(dst, '{')
		first := true
		err = avroBlocks(r, func() error {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = typing.AppendJSONString(dst, r.ReadBytes())
			dst = append(dst, ':')
			var err error
			dst, err = d.appendAvroJSON(dst, r, n.values, depth+1)
			return err
		})
		dst = append(dst, '}')
	default:
		return dst, fmt.Errorf("unsupported Avro type %s", n.t)
	}
	if err == nil && r.Error != nil {
		err = avroErr(r.Error)
	}
	return dst, err
}

// appendJSONNumber renders a float as a JSON number (shortest text that
// reads back to the same float of that width); non-finite values as the
// strings Jackson writes.
func appendJSONNumber(dst []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return typing.AppendJSONString(dst, []byte(typing.FormatJSONFloat(f)))
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}
