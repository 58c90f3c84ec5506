package cdc

import (
	"math"
	"strconv"
)

// Kind is the logical type of a Value, independent of the source database
// and of the wire format it was decoded from.
type Kind uint8

// The value kinds. The comment says where the payload lives and its unit.
const (
	KindNull        Kind = iota // SQL NULL; no payload
	KindBool                    // I: 0 or 1
	KindInt                     // I: the integer (8 to 64-bit sources)
	KindFloat                   // I: math.Float64bits of the value
	KindString                  // S: UTF-8 text (also JSON, XML, enum, set)
	KindBytes                   // S: raw bytes
	KindDecimal                 // I: unscaled value, Scale: digits after the point; S: unscaled base-10 text when it does not fit int64 (I is then 0)
	KindDate                    // I: days since 1970-01-01
	KindTime                    // I: µs since midnight
	KindTimestamp               // I: µs since 1970-01-01T00:00:00, no time zone
	KindTimestampTZ             // I: µs since the epoch, UTC
	KindUUID                    // S: 16 raw bytes
	KindUnavailable             // a TOAST "unchanged" placeholder: the source did not send the value
	KindList                    // S: the elements in the canonical list encoding (see List); I: a 64-bit digest of S
)

// Value is one column value. It is a small tagged union that holds every
// kind without allocation except text, bytes and very large decimals.
type Value struct {
	Kind  Kind
	Scale int16 // decimal scale, KindDecimal only
	I     int64
	S     string
}

// Constructors for each kind; units as documented on the Kind constants.

// Null returns the NULL value.
func Null() Value { return Value{} }

// Bool returns a boolean value.
func Bool(b bool) Value {
	if b {
		return Value{Kind: KindBool, I: 1}
	}
	return Value{Kind: KindBool}
}

// Int returns an integer value.
func Int(i int64) Value { return Value{Kind: KindInt, I: i} }

// Float returns a double value.
func Float(f float64) Value { return Value{Kind: KindFloat, I: int64(math.Float64bits(f))} }

// String returns a text value.
func String(s string) Value { return Value{Kind: KindString, S: s} }

// Bytes returns a binary value (the bytes are referenced, not copied).
func Bytes(b []byte) Value { return Value{Kind: KindBytes, S: string(b)} }

// Decimal returns a decimal with the given unscaled value and scale: the
// value is unscaled × 10^-scale.
func Decimal(unscaled int64, scale int16) Value {
	return Value{Kind: KindDecimal, I: unscaled, Scale: scale}
}

// BigDecimal returns a decimal whose unscaled value is the base-10 integer
// text digits (optional leading '-'); it is stored as int64 when it fits.
func BigDecimal(digits string, scale int16) Value {
	if i, err := strconv.ParseInt(digits, 10, 64); err == nil {
		return Decimal(i, scale)
	}
	return Value{Kind: KindDecimal, S: digits, Scale: scale}
}

// Date returns a date value, days since 1970-01-01.
func Date(days int64) Value { return Value{Kind: KindDate, I: days} }

// Time returns a time-of-day value, µs since midnight.
func Time(micros int64) Value { return Value{Kind: KindTime, I: micros} }

// Timestamp returns a timestamp without time zone, µs since the epoch.
func Timestamp(micros int64) Value { return Value{Kind: KindTimestamp, I: micros} }

// TimestampTZ returns an instant, µs since the epoch (UTC).
func TimestampTZ(micros int64) Value { return Value{Kind: KindTimestampTZ, I: micros} }

// Unavailable returns the TOAST placeholder value.
func Unavailable() Value { return Value{Kind: KindUnavailable} }

// IsNull reports whether v is SQL NULL.
func (v Value) IsNull() bool { return v.Kind == KindNull }

// Float64 returns the payload of a KindFloat value.
func (v Value) Float64() float64 { return math.Float64frombits(uint64(v.I)) }

// IsBigDecimal reports whether a decimal's unscaled value is held as text.
func (v Value) IsBigDecimal() bool { return v.Kind == KindDecimal && v.S != "" }

// UnscaledText returns a decimal's unscaled value as base-10 text.
func (v Value) UnscaledText() string {
	if v.S != "" {
		return v.S
	}
	return strconv.FormatInt(v.I, 10)
}

// IsEmpty reports whether v is NULL or its kind's zero value (empty text
// or bytes, 0, false, the epoch): what Debezium puts in a required
// column a key-only before image leaves out when the schema gives no
// default (JdbcValueConverters.convertValue's fallback).
func (v Value) IsEmpty() bool { return v.Kind == KindNull || v.I == 0 && v.S == "" }

// Equal reports whether two values are identical (same kind, same payload).
// NULL equals NULL here: this is identity of stored values, not SQL equality.
func (v Value) Equal(w Value) bool { return v == w }

// DecimalText renders a decimal as plain text with its scale, e.g. "25.50".
func (v Value) DecimalText() string {
	digits := v.UnscaledText()
	neg := false
	if len(digits) > 0 && digits[0] == '-' {
		neg, digits = true, digits[1:]
	}
	s := int(v.Scale)
	if s > 0 {
		for len(digits) <= s {
			digits = "0" + digits
		}
		digits = digits[:len(digits)-s] + "." + digits[len(digits)-s:]
	} else if s < 0 {
		for range -s {
			digits += "0"
		}
	}
	if neg {
		return "-" + digits
	}
	return digits
}
