package cdc

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Key is an encoded primary key: the key columns' values, in key-column
// order, in a binary form where equal keys have equal bytes and byte order
// follows value order for integers, strings, dates and timestamps. It is
// the map key of the merge rules and of the primary-key index.
type Key string

// Key encoding tags, one byte before each value.
const (
	keyNull    = 0x00
	keyFalse   = 0x01
	keyTrue    = 0x02
	keyNumber  = 0x10 // int, date, time, timestamps: 8 bytes, sign bit flipped
	keyFloat   = 0x11
	keyDecimal = 0x12
	keyText    = 0x20 // string, bytes, uuid: escaped, terminated
)

// EncodeKey appends the encoding of vals to dst and returns it. It fails
// for a TOAST placeholder (a key is always sent by Debezium).
func EncodeKey(dst []byte, vals ...Value) ([]byte, error) {
	for _, v := range vals {
		switch v.Kind {
		case KindNull:
			dst = append(dst, keyNull)
		case KindBool:
			if v.I != 0 {
				dst = append(dst, keyTrue)
			} else {
				dst = append(dst, keyFalse)
			}
		case KindInt, KindDate, KindTime, KindTimestamp, KindTimestampTZ:
			dst = append(dst, keyNumber)
			dst = binary.BigEndian.AppendUint64(dst, uint64(v.I)^(1<<63))
		case KindFloat:
			dst = append(dst, keyFloat)
			bits := uint64(v.I)
			if math.Float64frombits(bits) < 0 {
				bits = ^bits
			} else {
				bits ^= 1 << 63
			}
			dst = binary.BigEndian.AppendUint64(dst, bits)
		case KindDecimal:
			dst = append(dst, keyDecimal)
			dst = appendEscaped(dst, v.DecimalText())
		case KindString, KindBytes, KindUUID, KindList:
			dst = append(dst, keyText)
			dst = appendEscaped(dst, v.S)
		default:
			return dst, fmt.Errorf("cdc: a key column holds an unavailable (TOAST placeholder) value")
		}
	}
	return dst, nil
}

// appendEscaped writes s with 0x00 escaped as 0x00 0xFF and ends it with
// 0x00 0x01, so that concatenated keys stay prefix-free and ordered.
func appendEscaped(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			dst = append(dst, 0, 0xFF)
		} else {
			dst = append(dst, s[i])
		}
	}
	return append(dst, 0, 1)
}

// KeyOf returns the Key of row for the key columns, in that order. It
// returns an error naming the first key column the image lacks.
func KeyOf(row *Row, keyCols []string) (Key, error) {
	if row == nil {
		return "", fmt.Errorf("cdc: no row image to take the key from")
	}
	var buf [64]byte
	dst := buf[:0]
	for _, c := range keyCols {
		v, ok := row.Get(c)
		if !ok {
			return "", fmt.Errorf("cdc: key column %q is missing from the row image", c)
		}
		var err error
		if dst, err = EncodeKey(dst, v); err != nil {
			return "", fmt.Errorf("cdc: key column %q: %w", c, err)
		}
	}
	return Key(dst), nil
}
