package schemas

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/lakemirror/lakemirror/internal/cdc/typing"
)

// Exact number handling. JSON numbers are read from their text, never
// through float64, so that int64 extremes, BIGINT UNSIGNED values and
// decimals survive bit for bit (Kafka Connect JsonConverter writes int64
// and NUMERIC-format decimals as plain JSON numbers). The helpers Coerce
// shares (typing.ExactDecimal, DigitsToInt64, MulChecked, ParseUUID,
// ValidNumber) are in internal/cdc/typing; these are the decoder's own.

var (
	errFraction   = errors.New("has a fraction but the column holds integers")
	errInt64Range = errors.New("out of int64 range")
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

// validBase64 reports whether s is standard base64 that decodes (what
// base64Unscaled accepts).
func validBase64(s []byte) bool {
	if !maybeBase64(s) {
		return false
	}
	var buf [64]byte
	for len(s) > 0 {
		n := min(len(s), 84) // whole quanta: 84 chars decode to 63 bytes
		if _, err := base64.StdEncoding.Decode(buf[:], s[:n]); err != nil {
			return false
		}
		s = s[n:]
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
// decimal digits, typing.MaxDecimalDigits, need 416).
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

// parseFloatText parses a validated JSON number as float64 (bits 64) or as
// the nearest float32 widened to float64 (bits 32). Out-of-range values are
// an error, not ±Inf, and so is a nonzero number too small for the type,
// which would become 0 (1e-400): a value is never silently changed.
func parseFloatText(text []byte, bits int) (float64, error) {
	if !typing.ValidNumber(text) {
		return 0, typing.ErrNotNumber
	}
	f, err := strconv.ParseFloat(string(text), bits)
	if err != nil {
		return 0, fmt.Errorf("out of float%d range", bits)
	}
	if f == 0 && nonzeroMantissa(text) {
		return 0, fmt.Errorf("underflows float%d (it would become 0)", bits)
	}
	return f, nil
}

// nonzeroMantissa: a JSON number's digits before its exponent are not all
// zero.
func nonzeroMantissa(text []byte) bool {
	for _, c := range text {
		switch {
		case c == 'e' || c == 'E':
			return false
		case c >= '1' && c <= '9':
			return true
		}
	}
	return false
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
