package schemas

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// Exact number handling. JSON numbers are read from their text, never
// through float64, so that int64 extremes, BIGINT UNSIGNED values and
// decimals survive bit for bit (Kafka Connect JsonConverter writes int64
// and NUMERIC-format decimals as plain JSON numbers).

// maxDecimalDigits bounds the digits of a decimal whose column declares no
// precision (a guard against "1e999999999"-style input).
const maxDecimalDigits = 1000

var (
	errNotNumber    = errors.New("not a valid JSON number")
	errFraction     = errors.New("has a fraction but the column holds integers")
	errInt64Range   = errors.New("out of int64 range")
	errTooManyFrac  = errors.New("has more fraction digits than the scale")
	errTooManyDigit = errors.New("has more digits than the precision")
	errExponent     = errors.New("exponent out of range")
)

// parseJSONInt reads an RFC 8259 integer literal (no fraction, no
// exponent). ok is false when text is not such a literal; overflow is true
// when it is one but does not fit int64.
func parseJSONInt(text []byte) (v int64, ok, overflow bool) {
	i := 0
	neg := false
	if len(text) > 0 && text[0] == '-' {
		neg = true
		i = 1
	}
	if i >= len(text) || (text[i] == '0' && len(text) > i+1) {
		return 0, false, false
	}
	var u uint64
	for ; i < len(text); i++ {
		c := text[i]
		if c < '0' || c > '9' {
			return 0, false, false
		}
		if u > (math.MaxUint64-9)/10 {
			overflow = true
			continue
		}
		u = u*10 + uint64(c-'0')
	}
	if overflow {
		return 0, true, true
	}
	if neg {
		if u > 1<<63 {
			return 0, true, true
		}
		return -int64(u), true, false
	}
	if u > math.MaxInt64 {
		return 0, true, true
	}
	return int64(u), true, false
}

// exactDecimal converts the JSON number text to an unscaled integer at the
// given scale, exactly: "123.4567" at scale 4 is 1234567, "1.5E+3" at scale
// 0 is 1500. It fails when text has more non-zero fraction digits than
// scale allows or when the result has more than precision digits
// (precision <= 0: at most maxDecimalDigits). The unscaled digits (no sign,
// no leading zeros, "" for zero) are appended to buf and returned.
func exactDecimal(text []byte, scale, precision int, buf []byte) (neg bool, digits []byte, err error) {
	if !validNumber(text) {
		return false, buf, errNotNumber
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
				return false, buf[:start], errExponent
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
		limit = maxDecimalDigits
	}
	switch {
	case own > scale:
		drop := own - scale
		if drop > len(d) {
			return false, buf[:start], errTooManyFrac
		}
		for _, c := range d[len(d)-drop:] {
			if c != '0' {
				return false, buf[:start], errTooManyFrac
			}
		}
		buf = buf[:len(buf)-drop]
	case own < scale:
		add := scale - own
		if len(d)+add > limit {
			return false, buf[:start], errTooManyDigit
		}
		for range add {
			buf = append(buf, '0')
		}
	}
	d = buf[start:]
	if len(d) > limit {
		return false, buf[:start], errTooManyDigit
	}
	if len(d) == 0 {
		neg = false
	}
	return neg, d, nil
}

// digitsToInt64 converts unscaled digits (no leading zeros) and a sign to
// int64 when they fit.
func digitsToInt64(neg bool, digits []byte) (int64, bool) {
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

// maybeBase64 reports whether s could be padded standard base64 (what
// Debezium's decimal.handling.mode=precise sends): a length that is a
// multiple of 4 and only the alphabet's bytes. A string for which it is
// false never decodes (so "5285.06" is read as a number without trying).
func maybeBase64(s []byte) bool {
	if len(s)%4 != 0 {
		return false
	}
	for _, c := range s {
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '=') {
			return false
		}
	}
	return true
}

// base64Unscaled decodes a Kafka Connect Decimal in its BASE64 form: the
// unscaled value as big-endian two's-complement bytes (Java
// BigInteger.toByteArray). See unscaledFromBytes.
func base64Unscaled(s []byte, scratch []byte) (small int64, bigText string, digits int, err error) {
	n := base64.StdEncoding.DecodedLen(len(s))
	if cap(scratch) < n {
		scratch = make([]byte, n)
	}
	b := scratch[:n]
	m, err := base64.StdEncoding.Decode(b, s)
	if err != nil {
		return 0, "", 0, fmt.Errorf("invalid base64 decimal: %v", err)
	}
	return unscaledFromBytes(b[:m])
}

// maxUnscaledBytes bounds a decimal's two's-complement bytes (1000
// decimal digits, maxDecimalDigits, need 416).
const maxUnscaledBytes = 420

// unscaledFromBytes reads big-endian two's-complement bytes (a Connect
// Decimal, an Avro decimal, a VariableScaleDecimal's value). It returns
// the value as int64 when it fits, else its base-10 text (bigText is
// non-empty). digits is the number of decimal digits of the unscaled
// value (for precision checks).
func unscaledFromBytes(b []byte) (small int64, bigText string, digits int, err error) {
	if len(b) == 0 {
		return 0, "", 0, errors.New("empty decimal bytes")
	}
	if len(b) > maxUnscaledBytes {
		return 0, "", 0, fmt.Errorf("decimal of %d bytes is too large", len(b))
	}
	if len(b) <= 8 {
		var u uint64
		for _, c := range b {
			u = u<<8 | uint64(c)
		}
		shift := uint(64 - 8*len(b))
		v := int64(u<<shift) >> shift // sign-extend
		return v, "", int64Digits(v), nil
	}
	x := new(big.Int).SetBytes(b)
	if b[0]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	if x.IsInt64() {
		v := x.Int64()
		return v, "", int64Digits(v), nil
	}
	t := x.String()
	d := len(t)
	if t[0] == '-' {
		d--
	}
	return 0, t, d, nil
}

// int64Digits counts the decimal digits of |v| (1 for 0).
func int64Digits(v int64) int {
	u := uint64(v)
	if v < 0 {
		u = -u
	}
	n := 1
	for u >= 10 {
		u /= 10
		n++
	}
	return n
}

// floorDiv divides rounding toward negative infinity (Debezium NanoTime /
// NanoTimestamp to µs: -1 ns is -1 µs, not 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// mulChecked returns a*b and whether it did not overflow.
func mulChecked(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	c := a * b
	if c/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return c, true
}

// parseFloatText parses a validated JSON number as float64 (bits 64) or as
// the nearest float32 widened to float64 (bits 32). Out-of-range values are
// an error, not ±Inf.
func parseFloatText(text []byte, bits int) (float64, error) {
	if !validNumber(text) {
		return 0, errNotNumber
	}
	f, err := strconv.ParseFloat(string(text), bits)
	if err != nil {
		return 0, fmt.Errorf("out of float%d range", bits)
	}
	return f, nil
}

// nonFinite maps the strings Jackson writes for non-finite doubles
// ("NaN", "Infinity", "-Infinity") to their value.
func nonFinite(s []byte) (float64, bool) {
	switch string(s) {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	return 0, false
}

// parseUUID reads the canonical 8-4-4-4-12 hex form (io.debezium.data.Uuid)
// into 16 bytes appended to dst.
func parseUUID(dst, s []byte) ([]byte, bool) {
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
