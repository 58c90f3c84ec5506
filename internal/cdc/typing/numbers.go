package typing

import (
	"errors"
	"math"
)

// Exact number handling. JSON numbers are read from their text, never
// through float64, so that int64 extremes, BIGINT UNSIGNED values and
// decimals survive bit for bit (Kafka Connect JsonConverter writes int64
// and NUMERIC-format decimals as plain JSON numbers).

// MaxDecimalDigits bounds the digits of a decimal whose column declares no
// precision (a guard against "1e999999999"-style input): ExactDecimal with
// precision <= 0 allows at most this many unscaled digits.
const MaxDecimalDigits = 1000

// The errors of ExactDecimal (ErrNotNumber also of other number readers);
// callers compare them with == or errors.Is and usually word their own
// message around them.
var (
	// ErrNotNumber: the text is not exactly one RFC 8259 number.
	ErrNotNumber = errors.New("not a valid JSON number")
	// ErrTooManyFraction: non-zero fraction digits beyond the scale.
	ErrTooManyFraction = errors.New("has more fraction digits than the scale")
	// ErrTooManyDigits: more unscaled digits than the precision (or than
	// MaxDecimalDigits).
	ErrTooManyDigits = errors.New("has more digits than the precision")
	// ErrExponent: an exponent too large to handle (beyond about 1e8).
	ErrExponent = errors.New("exponent out of range")
)

// ExactDecimal converts the JSON number text to an unscaled integer at the
// given scale, exactly: "123.4567" at scale 4 is 1234567, "1.5E+3" at scale
// 0 is 1500. It fails with ErrTooManyFraction when text has more non-zero
// fraction digits than scale allows, with ErrTooManyDigits when the result
// has more than precision digits (precision <= 0: at most
// MaxDecimalDigits), with ErrNotNumber when text is not one JSON number and
// with ErrExponent for an exponent beyond about 1e8. The unscaled digits
// (ASCII, no sign, no leading zeros, "" for zero, which is never negative)
// are appended to buf and returned with the sign; on error buf is returned
// at its original length.
func ExactDecimal(text []byte, scale, precision int, buf []byte) (neg bool, digits []byte, err error) {
	if !ValidNumber(text) {
		return false, buf, ErrNotNumber
	}
	i := 0
	if text[0] == '-' {
		neg = true
		i = 1
	}
	start := len(buf)
	frac := 0
	inFrac := false
	for ; i < len(text); i++ {
		c := text[i]
		if c == '.' {
			inFrac = true
			continue
		}
		if c == 'e' || c == 'E' {
			break
		}
		if len(buf) == start && c == '0' {
			// leading zero: skip, but it still counts as a fraction digit
		} else {
			buf = append(buf, c)
		}
		if inFrac {
			frac++
		}
	}
	exp := 0
	if i < len(text) {
		e := text[i+1:]
		eneg := false
		if e[0] == '+' || e[0] == '-' {
			eneg = e[0] == '-'
			e = e[1:]
		}
		for _, c := range e {
			if exp > 1e8 {
				return false, buf[:start], ErrExponent
			}
			exp = exp*10 + int(c-'0')
		}
		if eneg {
			exp = -exp
		}
	}
	own := frac - exp // the text's own scale
	d := buf[start:]
	if len(d) == 0 {
		return false, buf[:start], nil // zero, whatever the scale
	}
	limit := precision
	if limit <= 0 {
		limit = MaxDecimalDigits
	}
	switch {
	case own > scale:
		drop := own - scale
		if drop > len(d) {
			return false, buf[:start], ErrTooManyFraction
		}
		for _, c := range d[len(d)-drop:] {
			if c != '0' {
				return false, buf[:start], ErrTooManyFraction
			}
		}
		buf = buf[:len(buf)-drop]
	case own < scale:
		add := scale - own
		if len(d)+add > limit {
			return false, buf[:start], ErrTooManyDigits
		}
		for range add {
			buf = append(buf, '0')
		}
	}
	d = buf[start:]
	if len(d) > limit {
		return false, buf[:start], ErrTooManyDigits
	}
	if len(d) == 0 {
		neg = false
	}
	return neg, d, nil
}

// DigitsToInt64 converts unscaled ASCII digits (no sign, no leading zeros,
// as ExactDecimal returns them) and a sign to int64. ok is false when the
// value does not fit int64 (more than 19 digits, or beyond the range).
func DigitsToInt64(neg bool, digits []byte) (v int64, ok bool) {
	if len(digits) > 19 {
		return 0, false
	}
	var u uint64 // 19 digits always fit uint64
	for _, c := range digits {
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// MulChecked returns a*b and ok = true, or 0 and false when the product
// overflows int64 (unit conversions: days to µs, ms to µs).
func MulChecked(a, b int64) (product int64, ok bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	c := a * b
	if c/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return c, true
}

// ParseUUID reads the canonical 8-4-4-4-12 hex form (io.debezium.data.Uuid;
// either letter case) and appends its 16 bytes to dst. ok is false, and dst
// is returned at its original length, when s is not that form.
func ParseUUID(dst, s []byte) (out []byte, ok bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return dst, false
	}
	start := len(dst)
	for i := 0; i < 36; {
		if s[i] == '-' {
			i++
			continue
		}
		hi, ok1 := unhex(s[i])
		lo, ok2 := unhex(s[i+1])
		if !ok1 || !ok2 {
			return dst[:start], false
		}
		dst = append(dst, hi<<4|lo)
		i += 2
	}
	return dst, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// formatUUID renders 16 bytes in the canonical form.
func formatUUID(b string) string {
	out := make([]byte, 0, 36)
	for i := 0; i < 16; i++ {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hexDigits[b[i]>>4], hexDigits[b[i]&0xF])
	}
	return string(out)
}
