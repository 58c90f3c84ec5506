package typing

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// coerceList converts each element of a list to t's element type; the
// list is rebuilt only when an element changes.
func coerceList(v cdc.Value, t cdc.Type) (cdc.Value, error) {
	et := t.ElemType()
	elems := v.Elems()
	if elems == nil && v.S != "" {
		return cdc.Value{}, fmt.Errorf("cannot convert a malformed list to %s", t)
	}
	changed := false
	for i, e := range elems {
		if e.Kind == cdc.KindUnavailable {
			return cdc.Value{}, fmt.Errorf("cannot convert a list holding a TOAST placeholder to %s", t)
		}
		c, err := Coerce(e, et)
		if err != nil {
			return cdc.Value{}, fmt.Errorf("list element %d: %w", i, err)
		}
		if !c.Equal(e) {
			elems[i], changed = c, true
		}
	}
	if !changed {
		return v, nil
	}
	return cdc.List(elems...), nil
}

// appendListJSON renders a list as compact JSON text.
func appendListJSON(dst []byte, v cdc.Value) []byte {
	dst = append(dst, '[')
	for i, e := range v.Elems() {
		if i > 0 {
			dst = append(dst, ',')
		}
		switch e.Kind {
		case cdc.KindNull, cdc.KindUnavailable:
			dst = append(dst, "null"...)
		case cdc.KindBool:
			dst = strconv.AppendBool(dst, e.I != 0)
		case cdc.KindFloat:
			f := e.Float64()
			if math.IsNaN(f) || math.IsInf(f, 0) { // as Jackson quotes them
				dst = AppendJSONString(dst, []byte(FormatJSONFloat(f)))
			} else {
				dst = append(dst, FormatJSONFloat(f)...)
			}
		case cdc.KindString:
			dst = AppendJSONString(dst, []byte(e.S))
		case cdc.KindBytes:
			dst = AppendJSONString(dst, []byte(base64.StdEncoding.EncodeToString([]byte(e.S))))
		case cdc.KindUUID:
			if len(e.S) == 16 {
				dst = AppendJSONString(dst, []byte(formatUUID(e.S)))
			} else {
				dst = append(dst, "null"...)
			}
		case cdc.KindDecimal:
			dst = append(dst, e.DecimalText()...)
		case cdc.KindList:
			dst = appendListJSON(dst, e)
		default: // int, date, time, timestamps: their integer units
			dst = strconv.AppendInt(dst, e.I, 10)
		}
	}
	return append(dst, ']')
}
