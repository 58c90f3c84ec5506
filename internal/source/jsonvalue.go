package source

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Column values as Debezium's PostgreSQL connector writes them through
// JsonConverter: the encodings the schemas decoder reads back exactly.

// appendColumnValue appends the JSON of v in column ci.
func appendColumnValue(b []byte, ci *ColumnInfo, v cdc.Value) ([]byte, error) {
	if v.Kind == cdc.KindNull {
		return append(b, "null"...), nil
	}
	if !ci.Array {
		return appendScalar(b, ci, v)
	}
	if v.Kind != cdc.KindList {
		return nil, fmt.Errorf("want a list, got a value of kind %d", v.Kind)
	}
	b = append(b, '[')
	for i, e := range v.Elems() {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if e.Kind == cdc.KindNull {
			b = append(b, "null"...)
		} else if b, err = appendScalar(b, ci, e); err != nil {
			return nil, fmt.Errorf("element %d: %w", i+1, err)
		}
	}
	return append(b, ']'), nil
}

// appendScalar appends one non-NULL value (or array element) of ci.
func appendScalar(b []byte, ci *ColumnInfo, v cdc.Value) ([]byte, error) {
	want := func(k cdc.Kind) error {
		if v.Kind != k {
			return fmt.Errorf("a %s value (%s) holds a value of kind %d, want kind %d", ci.Read, ci.PGType, v.Kind, k)
		}
		return nil
	}
	switch {
	case ci.Logical == logicalVarDecimal:
		if err := want(cdc.KindString); err != nil {
			return nil, err
		}
		u, scale, err := parseDecimalText(v.S)
		if err != nil {
			return nil, err
		}
		b = append(b, `{"scale":`...)
		b = strconv.AppendInt(b, int64(scale), 10)
		b = append(b, `,"value":"`...)
		b = base64.StdEncoding.AppendEncode(b, twosComplement(u))
		return append(b, `"}`...), nil
	case ci.Logical == logicalDecimal:
		var u *big.Int
		var err error
		switch v.Kind {
		case cdc.KindDecimal: // decimal(p,s), p ≤ 38
			if int(v.Scale) != ci.Scale {
				return nil, fmt.Errorf("decimal of scale %d in a column of scale %d", v.Scale, ci.Scale)
			}
			u, err = unscaledOf(v)
		case cdc.KindString: // the exact text of a decimal beyond 38 digits
			var scale int
			if u, scale, err = parseDecimalText(v.S); err == nil && scale != ci.Scale {
				if u, err = rescale(u, int32(-scale), ci.Scale); err != nil {
					return nil, err
				}
			}
		default:
			return nil, want(cdc.KindDecimal)
		}
		if err != nil {
			return nil, err
		}
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, twosComplement(u))
		return append(b, '"'), nil
	case ci.Logical == logicalUUID:
		if err := want(cdc.KindUUID); err != nil {
			return nil, err
		}
		return appendUUID(b, v.S)
	case ci.Logical == logicalZonedTimestamp:
		if err := want(cdc.KindTimestampTZ); err != nil {
			return nil, err
		}
		return appendZonedTimestamp(b, v.I, ci.Precision), nil
	case ci.Logical == logicalDate:
		if err := want(cdc.KindDate); err != nil {
			return nil, err
		}
		return strconv.AppendInt(b, v.I, 10), nil
	case ci.Logical == logicalMicroTime, ci.Logical == logicalTime:
		if err := want(cdc.KindTime); err != nil {
			return nil, err
		}
		return appendMicrosAs(b, v.I, ci.Logical == logicalTime)
	case ci.Logical == logicalMicroTimestamp, ci.Logical == logicalTimestamp:
		if err := want(cdc.KindTimestamp); err != nil {
			return nil, err
		}
		return appendMicrosAs(b, v.I, ci.Logical == logicalTimestamp)
	}
	switch ci.Connect {
	case "boolean":
		if err := want(cdc.KindBool); err != nil {
			return nil, err
		}
		return strconv.AppendBool(b, v.I != 0), nil
	case "int16", "int32", "int64":
		if err := want(cdc.KindInt); err != nil {
			return nil, err
		}
		return strconv.AppendInt(b, v.I, 10), nil
	case "float", "double":
		if err := want(cdc.KindFloat); err != nil {
			return nil, err
		}
		return appendFloat(b, v.Float64(), ci.Connect == "float"), nil
	case "string":
		if err := want(cdc.KindString); err != nil {
			return nil, err
		}
		return appendJSONString(b, v.S), nil
	case "bytes":
		if err := want(cdc.KindBytes); err != nil {
			return nil, err
		}
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, []byte(v.S))
		return append(b, '"'), nil
	}
	return nil, fmt.Errorf("no JSON form for Connect type %q", ci.Connect)
}

// appendMicrosAs appends µs, or ms when ms (io.debezium.time.Time and
// Timestamp, for time(p)/timestamp(p) with p ≤ 3, whose values are whole
// ms).
func appendMicrosAs(b []byte, us int64, ms bool) ([]byte, error) {
	if !ms {
		return strconv.AppendInt(b, us, 10), nil
	}
	if us%1000 != 0 {
		return nil, fmt.Errorf("%d µs is not a whole number of ms", us)
	}
	return strconv.AppendInt(b, us/1000, 10), nil
}

// appendFloat appends a float or double: the shortest text that reads
// back as the same float32 (float) or float64 (double); NaN and
// ±Infinity as the strings JsonConverter uses for them.
func appendFloat(b []byte, f float64, single bool) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	if single {
		return strconv.AppendFloat(b, f, 'g', -1, 32)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// appendUUID appends the canonical 8-4-4-4-12 lowercase text of 16 bytes.
func appendUUID(b []byte, raw string) ([]byte, error) {
	if len(raw) != 16 {
		return nil, fmt.Errorf("uuid of %d bytes", len(raw))
	}
	var s [36]byte
	hex.Encode(s[0:8], []byte(raw[0:4]))
	hex.Encode(s[9:13], []byte(raw[4:6]))
	hex.Encode(s[14:18], []byte(raw[6:8]))
	hex.Encode(s[19:23], []byte(raw[8:10]))
	hex.Encode(s[24:36], []byte(raw[10:16]))
	s[8], s[13], s[18], s[23] = '-', '-', '-', '-'
	b = append(b, '"')
	b = append(b, s[:]...)
	return append(b, '"'), nil
}

// appendZonedTimestamp appends an io.debezium.time.ZonedTimestamp: ISO-8601
// in UTC with "Z", the fraction at the column's precision digits (all 6
// when the value has more), years outside 0000..9999 signed
// ("+10000-01-01T00:00:00Z", "-0043-03-15T00:00:00Z": astronomical year
// numbering, as java.time writes them).
func appendZonedTimestamp(b []byte, us int64, precision int) []byte {
	t := time.Unix(floorDiv(us, 1_000_000), 0).UTC()
	frac := us - floorDiv(us, 1_000_000)*1_000_000
	y := t.Year()
	b = append(b, '"')
	switch {
	case y < 0:
		b = append(b, '-')
		b = appendPadded(b, int64(-y), 4)
	case y > 9999:
		b = append(b, '+')
		b = strconv.AppendInt(b, int64(y), 10)
	default:
		b = appendPadded(b, int64(y), 4)
	}
	b = append(b, '-')
	b = appendPadded(b, int64(t.Month()), 2)
	b = append(b, '-')
	b = appendPadded(b, int64(t.Day()), 2)
	b = append(b, 'T')
	b = appendPadded(b, int64(t.Hour()), 2)
	b = append(b, ':')
	b = appendPadded(b, int64(t.Minute()), 2)
	b = append(b, ':')
	b = appendPadded(b, int64(t.Second()), 2)
	digits := min(max(precision, 0), 6)
	if frac%pow10(6-digits) != 0 {
		digits = 6 // more digits than the declared precision: keep them all
	}
	if digits > 0 {
		b = append(b, '.')
		b = appendPadded(b, frac/pow10(6-digits), digits)
	}
	return append(b, `Z"`...)
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

func appendPadded(b []byte, n int64, width int) []byte {
	s := strconv.FormatInt(n, 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// appendJSONString appends s as a JSON string (s is valid UTF-8; the
// control characters, '"' and '\' are escaped).
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			if c < utf8.RuneSelf {
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 { // invalid UTF-8: U+FFFD (never from ReadChunk, which checks)
				b = append(b, s[start:i]...)
				b = append(b, `\ufffd`...)
				i += size
				start = i
				continue
			}
			i += size
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
