package typing

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Coerce converts a decoded value to column type t exactly, or returns an
// error saying why it does not fit. It never rounds, truncates or turns a
// value into NULL. NULL and KindUnavailable (TOAST placeholder) pass
// through unchanged.
//
// Accepted conversions (anything else is an error):
//
//   - to boolean: Bool; Int 0 or 1.
//   - to int/long: Int within the type's range (int: int32); an integral
//     Decimal or Float within range. A fraction is an error.
//   - to float/double: Float; an integral Int or Decimal that the double
//     (for float: the float32) holds exactly (9007199254740993 does not fit
//     a double); a fractional Decimal when it is exact as text, i.e. the
//     shortest decimal rendering of the nearest double equals it (0.1 is,
//     as the text "0.1"). A Float into a float column must be a float32
//     value or the float32's shortest text (123.102).
//   - to decimal(p,s): Decimal and Int rescaled to s without losing digits,
//     with at most p digits; Float only when its shortest text is exact at
//     scale s (0.1 fits decimal(5,2) as 0.10; 1e-7 does not).
//   - to string: String; Int, Float, Bool and Decimal as their JSON text
//     (the rule for mixed-kind inferred columns, see InferColumns).
//   - to binary: Bytes. To date, time, timestamptz: the same kind. To
//     timestamp: Timestamp, or a Date (its midnight).
//   - to uuid: UUID; a canonical UUID string; 16 Bytes.
//   - to list<T>: a List whose elements each Coerce to T (NULL elements
//     stay NULL). A List into a string column becomes its compact JSON
//     text (numbers and booleans as JSON, text as strings, binary as
//     base64, decimals as numbers, dates/times as their integer units).
//
// An error reads "cannot convert <value> to <type>: <why>" (for example
// `cannot convert integer 4294967295 to int: out of int range`); a list's
// element error is prefixed "list element <i>: ". The messages carry no
// package prefix: schemas.Coerce adds "schemas: ", and the decoder and
// internal/lake wrap them with the column they concern.
func Coerce(v cdc.Value, t cdc.Type) (cdc.Value, error) {
	if v.Kind == cdc.KindNull || v.Kind == cdc.KindUnavailable {
		return v, nil
	}
	fail := func(why string) (cdc.Value, error) {
		return cdc.Value{}, fmt.Errorf("cannot convert %s to %s: %s", describe(v), t, why)
	}
	switch t.Kind {
	case cdc.KindBool:
		switch {
		case v.Kind == cdc.KindBool:
			return v, nil
		case v.Kind == cdc.KindInt && (v.I == 0 || v.I == 1):
			return cdc.Bool(v.I == 1), nil
		}
	case cdc.KindInt:
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if t.Bits == 32 {
			lo, hi = math.MinInt32, math.MaxInt32
		}
		var i int64
		switch v.Kind {
		case cdc.KindInt:
			i = v.I
		case cdc.KindDecimal:
			x := decimalOf(v)
			y, ok := x.rescale(0)
			if !ok {
				return fail("it has a fraction")
			}
			var fits bool
			if i, fits = y.int64(); !fits {
				return fail("out of range")
			}
		case cdc.KindFloat:
			f := v.Float64()
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return fail("not a finite number")
			}
			if f != math.Trunc(f) {
				return fail("it has a fraction")
			}
			if f < -9.223372036854775808e18 || f >= 9.223372036854775808e18 {
				return fail("out of range")
			}
			i = int64(f)
		default:
			return fail("not a number")
		}
		if i < lo || i > hi {
			return fail(fmt.Sprintf("out of %s range", t))
		}
		return cdc.Int(i), nil
	case cdc.KindFloat:
		bits := 64
		if t.Bits == 32 {
			bits = 32
		}
		switch v.Kind {
		case cdc.KindFloat:
			f := v.Float64()
			if bits == 64 || math.IsNaN(f) || math.IsInf(f, 0) {
				return v, nil
			}
			f32 := float32(f)
			if float64(f32) == f {
				return v, nil
			}
			// f may be the float64 reading of the float32's shortest text
			// (Jackson writes a float32 so: 123.102).
			if g, err := strconv.ParseFloat(strconv.FormatFloat(float64(f32), 'g', -1, 32), 64); err == nil && g == f {
				return cdc.Float(float64(f32)), nil
			}
			return fail("not exactly representable as float")
		case cdc.KindInt, cdc.KindDecimal:
			x := decimalOf(v)
			if i, ok := x.rescale(0); ok {
				if n, fits := i.int64(); fits && intExactInFloat(n, bits) {
					return cdc.Float(float64(n)), nil
				}
			}
			f, err := strconv.ParseFloat(x.text(), bits)
			if err != nil {
				return fail("out of range")
			}
			y, ok := parseDecimalString(strconv.FormatFloat(f, 'g', -1, bits))
			if !ok || !y.equal(x) {
				return fail(fmt.Sprintf("not exactly representable as %s", t))
			}
			return cdc.Float(f), nil
		}
	case cdc.KindDecimal:
		var x decimal
		switch v.Kind {
		case cdc.KindDecimal, cdc.KindInt:
			x = decimalOf(v)
		case cdc.KindFloat:
			f := v.Float64()
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return fail("not a finite number")
			}
			x, _ = parseDecimalString(strconv.FormatFloat(f, 'g', -1, 64))
		default:
			return fail("not a number")
		}
		y, ok := x.rescale(int(t.Scale))
		if !ok {
			return fail(fmt.Sprintf("more than %d fraction digits", t.Scale))
		}
		if t.Precision > 0 && len(y.digits) > int(t.Precision) {
			return fail(fmt.Sprintf("more than %d digits", t.Precision))
		}
		return y.value(), nil
	case cdc.KindString:
		switch v.Kind {
		case cdc.KindString:
			return v, nil
		case cdc.KindInt:
			return cdc.String(strconv.FormatInt(v.I, 10)), nil
		case cdc.KindFloat:
			return cdc.String(FormatJSONFloat(v.Float64())), nil
		case cdc.KindBool:
			return cdc.String(strconv.FormatBool(v.I != 0)), nil
		case cdc.KindDecimal:
			return cdc.String(v.DecimalText()), nil
		case cdc.KindList:
			return cdc.String(string(appendListJSON(nil, v))), nil
		}
	case cdc.KindList:
		if v.Kind == cdc.KindList {
			return coerceList(v, t)
		}
	case cdc.KindBytes:
		if v.Kind == cdc.KindBytes {
			return v, nil
		}
	case cdc.KindDate, cdc.KindTime, cdc.KindTimestampTZ:
		if v.Kind == t.Kind {
			return v, nil
		}
	case cdc.KindTimestamp:
		switch v.Kind {
		case cdc.KindTimestamp:
			return v, nil
		case cdc.KindDate:
			us, ok := MulChecked(v.I, 86_400_000_000)
			if ok {
				return cdc.Timestamp(us), nil
			}
			return fail("out of range")
		}
	case cdc.KindUUID:
		switch v.Kind {
		case cdc.KindUUID:
			return v, nil
		case cdc.KindString:
			if b, ok := ParseUUID(nil, []byte(v.S)); ok {
				return cdc.Value{Kind: cdc.KindUUID, S: string(b)}, nil
			}
			return fail("not a canonical UUID")
		case cdc.KindBytes:
			if len(v.S) == 16 {
				return cdc.Value{Kind: cdc.KindUUID, S: v.S}, nil
			}
			return fail("not 16 bytes")
		}
	}
	return fail("incompatible kinds")
}

// intExactInFloat reports whether a float64 (bits 64) or float32 holds n
// exactly.
func intExactInFloat(n int64, bits int) bool {
	if bits == 32 {
		f := float32(n)
		return f > -9.223372e18 && f < 9.223372e18 && int64(f) == n
	}
	f := float64(n)
	return f > -9.223372036854775808e18 && f < 9.223372036854775808e18 && int64(f) == n
}

// describe names a value for error messages.
func describe(v cdc.Value) string {
	switch v.Kind {
	case cdc.KindBool:
		return "boolean " + strconv.FormatBool(v.I != 0)
	case cdc.KindInt:
		return "integer " + strconv.FormatInt(v.I, 10)
	case cdc.KindFloat:
		return "number " + FormatJSONFloat(v.Float64())
	case cdc.KindDecimal:
		return "decimal " + v.DecimalText()
	case cdc.KindString:
		s := v.S
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		return "string " + strconv.Quote(s)
	case cdc.KindBytes:
		return fmt.Sprintf("%d bytes", len(v.S))
	case cdc.KindDate:
		return "date " + strconv.FormatInt(v.I, 10)
	case cdc.KindTime:
		return "time " + strconv.FormatInt(v.I, 10) + "µs"
	case cdc.KindTimestamp:
		return "timestamp " + strconv.FormatInt(v.I, 10) + "µs"
	case cdc.KindTimestampTZ:
		return "timestamptz " + strconv.FormatInt(v.I, 10) + "µs"
	case cdc.KindUUID:
		if len(v.S) == 16 {
			return "uuid " + formatUUID(v.S)
		}
		return "uuid"
	case cdc.KindList:
		s := string(appendListJSON(nil, v))
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		return "list " + s
	}
	return fmt.Sprintf("value of kind %d", v.Kind)
}

// decimal is an exact decimal number: ±digits × 10^-scale, digits without
// leading zeros ("" for zero).
type decimal struct {
	neg    bool
	digits string
	scale  int
}

func decimalOf(v cdc.Value) decimal {
	var t string
	scale := 0
	if v.Kind == cdc.KindInt {
		t = strconv.FormatInt(v.I, 10)
	} else {
		t, scale = v.UnscaledText(), int(v.Scale)
	}
	x := decimal{scale: scale}
	if strings.HasPrefix(t, "-") {
		x.neg, t = true, t[1:]
	}
	x.digits = strings.TrimLeft(t, "0")
	if x.digits == "" {
		x.neg = false
	}
	return x
}

// parseDecimalString reads a JSON number text exactly.
func parseDecimalString(s string) (decimal, bool) {
	own := 0
	neg, digits, err := exactDecimalOwn([]byte(s), &own)
	if err != nil {
		return decimal{}, false
	}
	return decimal{neg: neg, digits: string(digits), scale: own}, true
}

// exactDecimalOwn reads a JSON number at its own scale (the scale that
// keeps every digit, never negative).
func exactDecimalOwn(text []byte, own *int) (bool, []byte, error) {
	// Find the smallest non-negative scale that is exact: try the text's
	// fraction length minus exponent, clamped at 0.
	if !ValidNumber(text) {
		return false, nil, ErrNotNumber
	}
	frac, exp := 0, 0
	i := 0
	for i < len(text) && text[i] != '.' && text[i] != 'e' && text[i] != 'E' {
		i++
	}
	if i < len(text) && text[i] == '.' {
		j := i + 1
		for j < len(text) && text[j] >= '0' && text[j] <= '9' {
			j++
		}
		frac = j - i - 1
		i = j
	}
	if i < len(text) {
		e, err := strconv.Atoi(strings.TrimPrefix(string(text[i+1:]), "+"))
		if err != nil || e > 1e6 || e < -1e6 {
			return false, nil, ErrExponent
		}
		exp = e
	}
	s := max(frac-exp, 0)
	*own = s
	return ExactDecimal(text, s, 0, nil)
}

func (x decimal) text() string {
	d := cdc.BigDecimal(x.signed(), int16(x.scale))
	return d.DecimalText()
}

func (x decimal) signed() string {
	if x.digits == "" {
		return "0"
	}
	if x.neg {
		return "-" + x.digits
	}
	return x.digits
}

// rescale returns x at scale s, exactly, or false when digits would be lost.
func (x decimal) rescale(s int) (decimal, bool) {
	if x.digits == "" {
		return decimal{scale: s}, true
	}
	switch {
	case s > x.scale:
		if s-x.scale > MaxDecimalDigits {
			return decimal{}, false
		}
		x.digits += strings.Repeat("0", s-x.scale)
	case s < x.scale:
		drop := x.scale - s
		if drop > len(x.digits) || strings.TrimRight(x.digits[len(x.digits)-drop:], "0") != "" {
			return decimal{}, false
		}
		x.digits = x.digits[:len(x.digits)-drop]
	}
	x.scale = s
	return x, true
}

// equal compares numerically.
func (x decimal) equal(y decimal) bool {
	s := max(x.scale, y.scale)
	a, ok1 := x.rescale(s)
	b, ok2 := y.rescale(s)
	return ok1 && ok2 && a.neg == b.neg && a.digits == b.digits
}

func (x decimal) int64() (int64, bool) {
	return DigitsToInt64(x.neg, []byte(x.digits))
}

func (x decimal) value() cdc.Value {
	if i, ok := x.int64(); ok {
		return cdc.Decimal(i, int16(x.scale))
	}
	return cdc.BigDecimal(x.signed(), int16(x.scale))
}
