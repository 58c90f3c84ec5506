package schemas

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"

	"github.com/valyala/fastjson"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/cdc/typing"
)

// Structured Debezium values: arrays (→ cdc lists), geometries (→ WKB
// bytes) and VariableScaleDecimal (→ exact decimal text, or the declared
// decimal), from JSON. The Avro decoder shares the finishing steps.

// maxListElems bounds the elements of one array value.
const maxListElems = 1 << 20

// jsonList decodes a JSON array by the element decoder fs.elem into a
// cdc list. A one-element array holding the TOAST placeholder is
// cdc.Unavailable.
func (d *Decoder) jsonList(v *fastjson.Value, fs *fieldSpec) (cdc.Value, []byte, error) {
	if d.isPlaceholderArray(v) {
		return cdc.Unavailable(), nil, nil
	}
	arr, _ := v.Array()
	if len(arr) > maxListElems {
		return cdc.Value{}, nil, fmt.Errorf("array of %d elements is too long", len(arr))
	}
	enc := make([]byte, 0, 16*len(arr))
	for i, e := range arr {
		val, payload, err := d.decodeValue(e, fs.elem)
		if err != nil {
			return cdc.Value{}, nil, fmt.Errorf("[%d]: %w", i, err)
		}
		if val.Kind == cdc.KindUnavailable {
			return cdc.Value{}, nil, fmt.Errorf("[%d]: a TOAST placeholder inside an array", i)
		}
		enc = cdc.AppendListElem(enc, val, payload)
	}
	l, err := cdc.ListFromEncoding(string(enc))
	return l, nil, err
}

// jsonGeometry reads io.debezium.data.geometry.{Geometry,Geography,Point}
// ({"wkb": base64, "srid": int or null}; Point adds x, y) and returns the
// WKB bytes. The srid is not kept.
func (d *Decoder) jsonGeometry(v *fastjson.Value) (cdc.Value, []byte, error) {
	w := v.Get("wkb")
	if isNull(w) {
		return cdc.Value{}, nil, errors.New(`geometry without "wkb"`)
	}
	if w.Type() != fastjson.TypeString {
		return cdc.Value{}, nil, fmt.Errorf("geometry wkb: want a base64 string, got %s", jsonTypeName(w))
	}
	s, _ := w.StringBytes()
	val, payload, err := d.bytesValue(s)
	if err != nil {
		return cdc.Value{}, nil, fmt.Errorf("geometry wkb: %v", err)
	}
	return val, payload, nil
}

// jsonVarDecimal reads io.debezium.data.VariableScaleDecimal ({"scale":
// int32, "value": base64 unscaled bytes}).
func (d *Decoder) jsonVarDecimal(v *fastjson.Value, fs *fieldSpec) (cdc.Value, []byte, error) {
	sv, vv := v.Get("scale"), v.Get("value")
	if isNull(sv) || isNull(vv) {
		return cdc.Value{}, nil, errors.New(`VariableScaleDecimal without "scale" and "value"`)
	}
	if sv.Type() != fastjson.TypeNumber || vv.Type() != fastjson.TypeString {
		return cdc.Value{}, nil, errors.New("VariableScaleDecimal: want an integer scale and a base64 value")
	}
	scale, err := d.intToken(sv, math.MinInt16, math.MaxInt16)
	if err != nil {
		return cdc.Value{}, nil, fmt.Errorf("VariableScaleDecimal scale: %v", err)
	}
	s, _ := vv.StringBytes()
	n := base64.StdEncoding.DecodedLen(len(s))
	if cap(d.tmp) < n {
		d.tmp = make([]byte, n)
	}
	m, err := base64.StdEncoding.Decode(d.tmp[:n], s)
	if err != nil {
		return cdc.Value{}, nil, fmt.Errorf("VariableScaleDecimal value: invalid base64: %v", err)
	}
	return d.varDecimal(scale, d.tmp[:m], fs)
}

// varDecimal is the value of a VariableScaleDecimal: unscaled ×
// 10^-scale, exactly. In a string column (the default) it is the decimal
// text at its own scale ("1.50" for unscaled 150, scale 2); in a declared
// decimal(p,s) column it is rescaled to s without losing digits (or an
// error), and rendered as text at scale s when p > 38.
func (d *Decoder) varDecimal(scale int64, unscaled []byte, fs *fieldSpec) (cdc.Value, []byte, error) {
	small, big, _, err := unscaledFromBytes(unscaled)
	if err != nil {
		return cdc.Value{}, nil, fmt.Errorf("VariableScaleDecimal: %v", err)
	}
	v := cdc.Decimal(small, int16(scale))
	if big != "" {
		v = cdc.Value{Kind: cdc.KindDecimal, Scale: int16(scale), S: big}
	}
	if fs.dec == decDecimal || fs.typ.Kind == cdc.KindDecimal {
		out, err := typing.Coerce(v, cdc.Type{Kind: cdc.KindDecimal, Precision: int16(fs.prec), Scale: int16(fs.scale)})
		if err != nil {
			return cdc.Value{}, nil, err
		}
		return d.finishDecimal(out, fs)
	}
	if scale < 0 && -scale > typing.MaxDecimalDigits {
		return cdc.Value{}, nil, fmt.Errorf("VariableScaleDecimal scale %d out of range", scale)
	}
	d.tmp = append(d.tmp[:0], v.DecimalText()...)
	return cdc.Value{Kind: cdc.KindString}, d.tmp, nil
}
