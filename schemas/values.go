package schemas

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/cdc/typing"
)

// unavailablePlaceholder is Debezium's default unavailable.value.placeholder:
// the value it sends for a TOASTed PostgreSQL column that an UPDATE did not
// change (PostgreSQL connector docs, "Replica identity" / "toasted values";
// Oracle sends it for unchanged LOB columns). In bytes columns it arrives
// as the base64 of these bytes. DecoderOptions.UnavailablePlaceholder
// replaces it.
const unavailablePlaceholder = "__debezium_unavailable_value"

// fixup records a value whose S payload lives in the event's text blob at
// [off, end) until the blob becomes a string.
type fixup struct {
	v        *cdc.Value
	off, end int
}

// putValue stores val in *out; a non-empty payload is appended to the
// event's blob and becomes out.S when the event is finished.
func (d *Decoder) putValue(out *cdc.Value, val cdc.Value, payload []byte) {
	*out = val
	if len(payload) > 0 {
		off := len(d.blob)
		d.blob = append(d.blob, payload...)
		d.fix = append(d.fix, fixup{v: out, off: off, end: len(d.blob)})
	}
}

// field decodes one JSON value for column fs (nil: infer from the JSON
// token) into *out.
func (d *Decoder) field(v *fastjson.Value, fs *fieldSpec, out *cdc.Value) error {
	val, payload, err := d.decodeValue(v, fs)
	if err != nil {
		return err
	}
	d.putValue(out, val, payload)
	return nil
}

// decodeValue decodes v by fs. Kinds with a payload in S return it in
// payload (aliasing parser memory or d.tmp; copy before the next call) and
// an empty val.S, unless val.S is already set.
func (d *Decoder) decodeValue(v *fastjson.Value, fs *fieldSpec) (cdc.Value, []byte, error) {
	if fs == nil || fs.dec == decInfer {
		return d.inferToken(v)
	}
	t := v.Type()
	if t == fastjson.TypeNull {
		return cdc.Null(), nil, nil
	}
	switch fs.dec {
	case decBool:
		switch t {
		case fastjson.TypeTrue:
			return cdc.Bool(true), nil, nil
		case fastjson.TypeFalse:
			return cdc.Bool(false), nil, nil
		}
	case decInt:
		if t == fastjson.TypeNumber {
			i, err := d.intToken(v, fs.min, fs.max)
			return cdc.Int(i), nil, err
		}
	case decFloat64, decFloat32:
		bits := 64
		if fs.dec == decFloat32 {
			bits = 32
		}
		switch t {
		case fastjson.TypeNumber:
			d.num = v.MarshalTo(d.num[:0])
			f, err := parseFloatText(d.num, bits)
			if err != nil {
				return cdc.Value{}, nil, fmt.Errorf("%s %w", d.num, err)
			}
			return cdc.Float(f), nil, nil
		case fastjson.TypeString:
			s, _ := v.StringBytes()
			if f, ok := nonFinite(s); ok {
				return cdc.Float(f), nil, nil
			}
		}
	case decString:
		if t == fastjson.TypeString {
			s, _ := v.StringBytes()
			return d.textValue(s)
		}
	case decBytes:
		if t == fastjson.TypeString {
			s, _ := v.StringBytes()
			val, b, err := d.bytesValue(s)
			return d.bitsOrder(fs, val, b, err)
		}
	case decDecimal:
		return d.decimalValue(v, t, fs)
	case decDate, decTimeMs, decTimeUs, decTimeNs, decTsMs, decTsUs, decTsNs:
		if t == fastjson.TypeNumber {
			lo, hi := temporalRange(fs)
			n, err := d.intToken(v, lo, hi)
			if err != nil {
				return cdc.Value{}, nil, err
			}
			val, err := temporalFromInt(n, fs)
			return val, nil, err
		}
	case decZonedTs:
		if t == fastjson.TypeString {
			s, _ := v.StringBytes()
			us, err := parseZonedTimestamp(s)
			if err != nil {
				return cdc.Value{}, nil, fmt.Errorf("%q is not an ISO-8601 timestamp with offset", s)
			}
			return cdc.TimestampTZ(us), nil, nil
		}
	case decZonedTime:
		if t == fastjson.TypeString {
			s, _ := v.StringBytes()
			us, err := parseZonedTime(s)
			if err != nil {
				return cdc.Value{}, nil, fmt.Errorf("%q is not an ISO-8601 time with offset", s)
			}
			return cdc.Time(us), nil, nil
		}
	case decUUID:
		if t == fastjson.TypeString {
			s, _ := v.StringBytes()
			return d.uuidValue(s)
		}
	case decJSONText:
		if t == fastjson.TypeObject || t == fastjson.TypeArray {
			if d.isPlaceholderArray(v) {
				return cdc.Unavailable(), nil, nil
			}
			d.tmp = appendCompactJSON(d.tmp[:0], v)
			return cdc.Value{Kind: cdc.KindString}, d.tmp, nil
		}
	case decList:
		if t == fastjson.TypeArray {
			return d.jsonList(v, fs)
		}
	case decGeometry:
		if t == fastjson.TypeObject {
			return d.jsonGeometry(v)
		}
	case decVarDecimal:
		if t == fastjson.TypeObject {
			return d.jsonVarDecimal(v, fs)
		}
	}
	if fs.declared {
		return d.declaredFallback(v, fs)
	}
	return cdc.Value{}, nil, fmt.Errorf("want %s, got %s", wantName(fs.dec), jsonTypeName(v))
}

// inferToken is the schema-less rule: integer literal -> Int (exact; beyond
// int64 -> decimal scale 0), other numbers -> Float, string -> String (or
// Unavailable for the TOAST placeholder), true/false -> Bool, null -> Null,
// object/array -> String holding the compact JSON text.
func (d *Decoder) inferToken(v *fastjson.Value) (cdc.Value, []byte, error) {
	switch v.Type() {
	case fastjson.TypeNull:
		return cdc.Null(), nil, nil
	case fastjson.TypeTrue:
		return cdc.Bool(true), nil, nil
	case fastjson.TypeFalse:
		return cdc.Bool(false), nil, nil
	case fastjson.TypeNumber:
		d.num = v.MarshalTo(d.num[:0])
		i, ok, overflow := parseJSONInt(d.num)
		if ok {
			if !overflow {
				return cdc.Int(i), nil, nil
			}
			// Beyond int64 (e.g. BIGINT UNSIGNED in decimal.format=NUMERIC):
			// a scale-0 decimal, exact from the text.
			return cdc.Value{Kind: cdc.KindDecimal}, d.num, nil
		}
		f, err := parseFloatText(d.num, 64)
		if err != nil {
			return cdc.Value{}, nil, fmt.Errorf("%q: %w", d.num, err)
		}
		return cdc.Float(f), nil, nil
	case fastjson.TypeString:
		s, _ := v.StringBytes()
		return d.textValue(s)
	default: // object, array
		if d.isPlaceholderArray(v) {
			return cdc.Unavailable(), nil, nil
		}
		d.tmp = appendCompactJSON(d.tmp[:0], v)
		return cdc.Value{Kind: cdc.KindString}, d.tmp, nil
	}
}

// textValue checks a string column's text: valid UTF-8, or the TOAST
// placeholder (cdc.Unavailable).
func (d *Decoder) textValue(s []byte) (cdc.Value, []byte, error) {
	if len(s) == len(d.phText) && string(s) == d.phText {
		return cdc.Unavailable(), nil, nil
	}
	if !utf8.Valid(s) {
		return cdc.Value{}, nil, errors.New("string is not valid UTF-8")
	}
	return cdc.Value{Kind: cdc.KindString}, s, nil
}

// bytesValue decodes a base64 JSON string (Connect bytes); the TOAST
// placeholder arrives as its text or as the base64 of its bytes.
func (d *Decoder) bytesValue(s []byte) (cdc.Value, []byte, error) {
	if string(s) == d.phText {
		return cdc.Unavailable(), nil, nil
	}
	n := base64.StdEncoding.DecodedLen(len(s))
	if cap(d.tmp) < n {
		d.tmp = make([]byte, n)
	}
	m, err := base64.StdEncoding.Decode(d.tmp[:n], s)
	if err != nil {
		return cdc.Value{}, nil, fmt.Errorf("invalid base64: %v", err)
	}
	return d.rawBytesValue(d.tmp[:m])
}

// bitsOrder returns a decoded binary value of fs, reversing the bytes of
// an io.debezium.data.Bits value (fs.bits), which Debezium sends least
// significant byte first, to the database's order (most significant byte
// first) unless DecoderOptions.BitsLeastSignificantFirst. b is not
// changed (it may be the record's own bytes).
func (d *Decoder) bitsOrder(fs *fieldSpec, v cdc.Value, b []byte, err error) (cdc.Value, []byte, error) {
	if !fs.bits || d.bitsLSB || err != nil || v.Kind != cdc.KindBytes {
		return v, b, err
	}
	d.bitsBuf = append(d.bitsBuf[:0], b...)
	slices.Reverse(d.bitsBuf)
	return v, d.bitsBuf, nil
}

// rawBytesValue is a binary value from its raw bytes (Avro bytes, decoded
// base64), or cdc.Unavailable for the placeholder's bytes.
func (d *Decoder) rawBytesValue(b []byte) (cdc.Value, []byte, error) {
	if string(b) == string(d.phBytes) {
		return cdc.Unavailable(), nil, nil
	}
	return cdc.Value{Kind: cdc.KindBytes}, b, nil
}

// uuidValue reads io.debezium.data.Uuid's canonical text into 16 bytes.
func (d *Decoder) uuidValue(s []byte) (cdc.Value, []byte, error) {
	if string(s) == d.phText {
		return cdc.Unavailable(), nil, nil
	}
	var ok bool
	if d.tmp, ok = typing.ParseUUID(d.tmp[:0], s); !ok {
		return cdc.Value{}, nil, fmt.Errorf("%q is not a UUID", s)
	}
	return cdc.Value{Kind: cdc.KindUUID}, d.tmp, nil
}

// isPlaceholderArray reports a TOASTed array column: Debezium sends a
// one-element array holding the placeholder (as text, or base64 for
// arrays of bytes).
func (d *Decoder) isPlaceholderArray(v *fastjson.Value) bool {
	if v.Type() != fastjson.TypeArray {
		return false
	}
	a, _ := v.Array()
	if len(a) != 1 || a[0].Type() != fastjson.TypeString {
		return false
	}
	s, _ := a[0].StringBytes()
	return string(s) == d.phText || string(s) == d.phBase64
}

// intToken reads an exact integer in [lo, hi]. "5.0" and "1e3" are exact
// integers and accepted; "5.5" is not.
func (d *Decoder) intToken(v *fastjson.Value, lo, hi int64) (int64, error) {
	d.num = v.MarshalTo(d.num[:0])
	i, ok, overflow := parseJSONInt(d.num)
	if !ok {
		neg, digits, err := typing.ExactDecimal(d.num, 0, 0, d.dig[:0])
		switch {
		case err == typing.ErrTooManyFraction:
			return 0, fmt.Errorf("%s %v", d.num, errFraction)
		case err == typing.ErrTooManyDigits:
			overflow = true
		case err != nil:
			return 0, fmt.Errorf("%q: %v", d.num, err)
		default:
			d.dig = digits[:0]
			i, ok = typing.DigitsToInt64(neg, digits)
			overflow = !ok
		}
	}
	if overflow {
		return 0, fmt.Errorf("%s %v", d.num, errInt64Range)
	}
	if i < lo || i > hi {
		return 0, fmt.Errorf("%d out of range [%d, %d]", i, lo, hi)
	}
	return i, nil
}

// decimalValue decodes a Connect Decimal: a base64 string of the unscaled
// two's-complement bytes (decimal.format=BASE64, the default) or a plain
// JSON number (decimal.format=NUMERIC) read exactly from its text; a
// VariableScaleDecimal object {scale, value} is accepted too and rescaled
// exactly to the column's scale.
func (d *Decoder) decimalValue(v *fastjson.Value, t fastjson.Type, fs *fieldSpec) (cdc.Value, []byte, error) {
	switch t {
	case fastjson.TypeString:
		s, _ := v.StringBytes()
		return d.decimalString(s, fs)
	case fastjson.TypeNumber:
		d.num = v.MarshalTo(d.num[:0])
		return d.decimalFromText(d.num, fs)
	case fastjson.TypeObject:
		if v.Get("scale") != nil && v.Get("value") != nil {
			return d.jsonVarDecimal(v, fs)
		}
	}
	if fs.declared {
		return d.declaredFallback(v, fs)
	}
	return cdc.Value{}, nil, fmt.Errorf("want %s, got %s", wantName(fs.dec), jsonTypeName(v))
}

// decimalString decodes the text s of a JSON string for the decimal
// column fs: base64 unscaled bytes, or, for a declared column, the
// number's text or the TOAST placeholder (see decimalValue).
func (d *Decoder) decimalString(s []byte, fs *fieldSpec) (cdc.Value, []byte, error) {
	if fs.declared {
		if len(s) == len(d.phText) && string(s) == d.phText {
			return cdc.Unavailable(), nil, nil
		}
		if _, ok := nonFinite(s); ok || string(s) == "+Infinity" {
			return cdc.Value{}, nil, fmt.Errorf("%q is not a finite decimal (Iceberg decimals hold none)", s)
		}
		number, b64 := numeric(s), validBase64(s)
		mode := fs.decText
		if mode == decTextAuto && number && b64 {
			// "1234" is 1234 as text and -2658824 as base64: never guess
			return cdc.Value{}, nil, fmt.Errorf("decimal %q reads both as a number (decimal.handling.mode=string) and as base64 unscaled bytes (precise): declare the column in a table definition with \"source\": \"string\" or \"source\": %q", s, logicalDecimal)
		}
		if mode == decTextNumber || (mode == decTextAuto && number) {
			if !number {
				return cdc.Value{}, nil, fmt.Errorf("%q is not a number (the column's source is \"string\": decimal.handling.mode=string)", s)
			}
			if s[0] == '+' {
				s = s[1:]
			}
			return d.decimalFromText(s, fs) // exact, or an error saying why not
		}
	}
	small, big, digits, err := base64Unscaled(s, d.tmp[:0])
	if err != nil {
		return cdc.Value{}, nil, err
	}
	return d.unscaledDecimal(small, big, digits, fs)
}

// numeric reports text that reads as a number: a JSON number, with an
// optional leading '+', or digits with leading zeros ("0012", which JSON
// does not allow but a producer may write); decimalFromText then reads it
// exactly or says why not.
func numeric(s []byte) bool {
	if len(s) > 1 && s[0] == '+' {
		s = s[1:]
	}
	if typing.ValidNumber(s) {
		return true
	}
	if len(s) > 1 && s[0] == '-' {
		s = s[1:]
	}
	digits := 0
	for _, c := range s {
		switch {
		case '0' <= c && c <= '9':
			digits++
		case c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-':
		default:
			return false
		}
	}
	return digits > 0 && s[0] >= '0' && s[0] <= '9'
}

// unscaledDecimal finishes a decimal read as unscaled bytes at the
// column's scale: it checks the precision and renders the exact text for
// a string column (asText).
func (d *Decoder) unscaledDecimal(small int64, big string, digits int, fs *fieldSpec) (cdc.Value, []byte, error) {
	if fs.prec > 0 && digits > fs.prec {
		return cdc.Value{}, nil, fmt.Errorf("unscaled value has %d digits, more than precision %d", digits, fs.prec)
	}
	v := cdc.Decimal(small, int16(fs.scale))
	if big != "" {
		v = cdc.Value{Kind: cdc.KindDecimal, Scale: int16(fs.scale), S: big}
	}
	return d.finishDecimal(v, fs)
}

// finishDecimal returns a decimal value as it goes into its column: the
// decimal itself, or, for a string column (asText: precision beyond 38,
// VariableScaleDecimal), its exact text such as "34567892.1".
func (d *Decoder) finishDecimal(v cdc.Value, fs *fieldSpec) (cdc.Value, []byte, error) {
	if !fs.asText {
		return v, nil, nil
	}
	d.tmp = append(d.tmp[:0], v.DecimalText()...)
	return cdc.Value{Kind: cdc.KindString}, d.tmp, nil
}

// temporalRange is the range of the integer encoding of a temporal
// logical type (int32 for Date and the millisecond Time).
func temporalRange(fs *fieldSpec) (int64, int64) {
	if fs.dec == decDate || fs.dec == decTimeMs {
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// temporalFromInt converts the integer encodings of Connect/Debezium
// temporal logical types into the cdc units: days; µs (ms × 1000 exactly,
// ns ÷ 1000 rounded toward negative infinity, so -1 ns is -1 µs).
func temporalFromInt(n int64, fs *fieldSpec) (cdc.Value, error) {
	mk := cdc.Timestamp
	switch fs.typ.Kind {
	case cdc.KindTimestampTZ:
		mk = cdc.TimestampTZ
	case cdc.KindTime:
		mk = cdc.Time
	}
	switch fs.dec {
	case decDate:
		return cdc.Date(n), nil
	case decTimeMs, decTsMs:
		us, ok := typing.MulChecked(n, 1000)
		if !ok {
			return cdc.Value{}, fmt.Errorf("%d ms overflows µs", n)
		}
		return mk(us), nil
	case decTimeNs, decTsNs:
		return mk(floorDiv(n, 1000)), nil
	default: // µs
		return mk(n), nil
	}
}

// declaredFallback handles a JSON token that is not the usual encoding of
// a declared column's type: text forms of temporal values are parsed, and
// anything else is decoded by inference and converted with Coerce (so a
// mismatch is an error naming the value, never a silent NULL).
func (d *Decoder) declaredFallback(v *fastjson.Value, fs *fieldSpec) (cdc.Value, []byte, error) {
	if v.Type() == fastjson.TypeString {
		s, _ := v.StringBytes()
		var (
			n   int64
			err = errBadTime
			mk  func(int64) cdc.Value
		)
		switch fs.typ.Kind {
		case cdc.KindDate:
			n, err = parseDateText(s)
			mk = cdc.Date
		case cdc.KindTime:
			n, err = parseTimeText(s)
			mk = cdc.Time
		case cdc.KindTimestamp:
			n, err = parseLocalTimestamp(s)
			mk = cdc.Timestamp
		case cdc.KindTimestampTZ:
			n, err = parseZonedTimestamp(s)
			mk = cdc.TimestampTZ
		case cdc.KindDecimal:
			if typing.ValidNumber(s) { // a numeric string
				return d.decimalFromText(s, fs)
			}
		}
		if mk != nil {
			if err != nil {
				return cdc.Value{}, nil, fmt.Errorf("%q is not a valid %s", s, fs.typ)
			}
			return mk(n), nil, nil
		}
	}
	if v.Type() == fastjson.TypeObject {
		switch {
		case fs.typ.Kind == cdc.KindBytes && v.Get("wkb") != nil: // a geometry {wkb, srid}
			return d.jsonGeometry(v)
		case fs.typ.Kind == cdc.KindString && fs.asText && v.Get("scale") != nil && v.Get("value") != nil:
			return d.jsonVarDecimal(v, fs)
		}
	}
	val, payload, err := d.inferToken(v)
	if err != nil {
		return cdc.Value{}, nil, err
	}
	if payload != nil {
		val.S = string(payload)
	}
	out, err := typing.Coerce(val, fs.typ)
	if err != nil {
		return cdc.Value{}, nil, err
	}
	return out, nil, nil
}

// decimalFromText decodes a decimal given as JSON number text, exactly, at
// the column's scale; the unscaled text of a value beyond int64 is returned
// as payload.
func (d *Decoder) decimalFromText(s []byte, fs *fieldSpec) (cdc.Value, []byte, error) {
	neg, digits, err := typing.ExactDecimal(s, fs.scale, fs.prec, d.dig[:0])
	if err != nil {
		return cdc.Value{}, nil, fmt.Errorf("%s does not fit decimal(%d,%d): %v", s, fs.prec, fs.scale, err)
	}
	d.dig = digits[:0]
	scale := int16(fs.scale)
	if i, ok := typing.DigitsToInt64(neg, digits); ok {
		return d.finishDecimal(cdc.Decimal(i, scale), fs)
	}
	text := d.tmp[:0]
	if neg {
		text = append(text, '-')
	}
	d.tmp = append(text, digits...)
	if fs.asText {
		return d.finishDecimal(cdc.Value{Kind: cdc.KindDecimal, Scale: scale, S: string(d.tmp)}, fs)
	}
	return cdc.Value{Kind: cdc.KindDecimal, Scale: scale}, d.tmp, nil
}

func wantName(k decKind) string {
	switch k {
	case decBool:
		return "a boolean"
	case decInt, decDate, decTimeMs, decTimeUs, decTimeNs, decTsMs, decTsUs, decTsNs:
		return "an integer"
	case decFloat32, decFloat64:
		return "a number"
	case decString, decZonedTs, decUUID, decZonedTime:
		return "a string"
	case decBytes:
		return "a base64 string"
	case decDecimal:
		return "a base64 string or a number"
	case decJSONText:
		return "an object or array"
	case decList:
		return "an array"
	case decGeometry:
		return "a geometry object {wkb, srid}"
	case decVarDecimal:
		return "a VariableScaleDecimal object {scale, value}"
	}
	return "a JSON value"
}
