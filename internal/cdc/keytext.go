package cdc

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// KeyText renders an encoded key for people: "col=value" per key column,
// joined by ",", e.g. "order_id=1001" or "region=eu,id=7". Numbers
// (integers, and dates, times and timestamps, which the encoding keeps as
// their integer: days, µs since the epoch) print in decimal, floats and
// decimals as their text, strings bare unless they hold a ',', '=', a
// quote, a space or an unprintable character (then Go-quoted), null as
// null. cols names the key columns in key order; a key with more values
// than cols names the extra ones "?". Errors: a key that is not an
// encoding EncodeKey makes (truncated, an unknown tag).
func KeyText(k Key, cols []string) (string, error) {
	vals, err := decodeKeyTexts(string(k))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(',')
		}
		name := "?"
		if i < len(cols) {
			name = cols[i]
		}
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(v)
	}
	return b.String(), nil
}

// HexKeyText is KeyText for a key given as the hex of its encoding (how
// validation and reconciliation findings name keys). Errors: h is not hex,
// or KeyText's.
func HexKeyText(h string, cols []string) (string, error) {
	raw, err := hex.DecodeString(h)
	if err != nil {
		return "", fmt.Errorf("cdc: key %q is not hex: %w", h, err)
	}
	return KeyText(Key(raw), cols)
}

// decodeKeyTexts splits an encoded key into its values' texts.
func decodeKeyTexts(s string) ([]string, error) {
	var out []string
	for i := 0; i < len(s); {
		tag := s[i]
		i++
		switch tag {
		case keyNull:
			out = append(out, "null")
		case keyFalse:
			out = append(out, "false")
		case keyTrue:
			out = append(out, "true")
		case keyNumber, keyFloat:
			if len(s)-i < 8 {
				return nil, fmt.Errorf("cdc: encoded key truncated in a number at byte %d", i)
			}
			u := binary.BigEndian.Uint64([]byte(s[i : i+8]))
			i += 8
			if tag == keyNumber {
				out = append(out, strconv.FormatInt(int64(u^(1<<63)), 10))
				break
			}
			if u&(1<<63) != 0 {
				u ^= 1 << 63
			} else {
				u = ^u
			}
			out = append(out, strconv.FormatFloat(math.Float64frombits(u), 'g', -1, 64))
		case keyDecimal, keyText:
			var b strings.Builder
			for {
				if i+1 >= len(s) {
					return nil, fmt.Errorf("cdc: encoded key truncated in a text value at byte %d", i)
				}
				if s[i] == 0 {
					if s[i+1] == 1 {
						i += 2
						break
					}
					if s[i+1] != 0xFF {
						return nil, fmt.Errorf("cdc: encoded key has a bad escape at byte %d", i)
					}
					b.WriteByte(0)
					i += 2
					continue
				}
				b.WriteByte(s[i])
				i++
			}
			out = append(out, quoteKeyText(b.String(), tag == keyText))
		default:
			return nil, fmt.Errorf("cdc: encoded key has unknown tag 0x%02x at byte %d", tag, i-1)
		}
	}
	return out, nil
}

// quoteKeyText returns v bare, or Go-quoted when it would be ambiguous in
// "a=1,b=2" (or is empty text).
func quoteKeyText(v string, text bool) string {
	if text && (v == "" || v == "null") {
		return strconv.Quote(v)
	}
	for _, r := range v {
		if r == ',' || r == '=' || r == '"' || r == ' ' || !strconv.IsPrint(r) {
			return strconv.Quote(v)
		}
	}
	return v
}
