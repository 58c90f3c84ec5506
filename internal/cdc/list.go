package cdc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
)

// Lists (Iceberg list<element>, from Debezium/Connect "array" columns) are
// values of KindList. Their elements live in S in a canonical binary
// encoding, so a list Value stays a small comparable struct: two lists are
// Equal exactly when their elements are Equal, in order. I holds a 64-bit
// FNV-1a digest of S so that code that hashes or compares only I still
// tells different lists apart (S is authoritative).
//
// The encoding is, per element: one byte holding the element's Kind, then
//
//	KindNull, KindUnavailable                     nothing
//	KindBool, KindInt, KindFloat, dates/times     8 bytes: I, big-endian
//	KindString, KindBytes, KindUUID, KindList     uvarint length, then S
//	KindDecimal                                   2 bytes scale (big-endian), then
//	                                              0x00 + 8 bytes I, or 0x01 + uvarint length + unscaled digits
//
// A decimal whose unscaled text fits int64 is always encoded as I.

// List returns the list of elems (copied into the encoding).
func List(elems ...Value) Value {
	var enc []byte
	for _, e := range elems {
		enc = AppendListElem(enc, e, nil)
	}
	return listOf(string(enc))
}

// ListFromEncoding returns the list whose elements are encoded in enc (as
// built with AppendListElem). It returns an error when enc is not a
// valid encoding.
func ListFromEncoding(enc string) (Value, error) {
	if _, err := decodeList(enc, nil); err != nil {
		return Value{}, err
	}
	return listOf(enc), nil
}

func listOf(enc string) Value {
	h := fnv.New64a()
	h.Write([]byte(enc))
	return Value{Kind: KindList, S: enc, I: int64(h.Sum64())}
}

// AppendListElem appends the encoding of one list element v to dst.
// payload, when non-nil, is used instead of v.S (for text, bytes, uuid,
// list and big-decimal elements), so decoders need not make a string per
// element.
func AppendListElem(dst []byte, v Value, payload []byte) []byte {
	dst = append(dst, byte(v.Kind))
	switch v.Kind {
	case KindNull, KindUnavailable:
	case KindString, KindBytes, KindUUID, KindList:
		if payload != nil {
			dst = binary.AppendUvarint(dst, uint64(len(payload)))
			return append(dst, payload...)
		}
		dst = binary.AppendUvarint(dst, uint64(len(v.S)))
		dst = append(dst, v.S...)
	case KindDecimal:
		s := v.S
		if payload != nil {
			s = string(payload)
		}
		dst = binary.BigEndian.AppendUint16(dst, uint16(v.Scale))
		i, big := v.I, s
		if big != "" {
			if n, err := strconv.ParseInt(big, 10, 64); err == nil {
				i, big = n, ""
			}
		}
		if big == "" {
			dst = append(dst, 0)
			dst = binary.BigEndian.AppendUint64(dst, uint64(i))
		} else {
			dst = append(dst, 1)
			dst = binary.AppendUvarint(dst, uint64(len(big)))
			dst = append(dst, big...)
		}
	default:
		dst = binary.BigEndian.AppendUint64(dst, uint64(v.I))
	}
	return dst
}

// Elems returns the elements of a list value (nil for other kinds or for
// a malformed encoding, which the constructors never produce).
func (v Value) Elems() []Value {
	if v.Kind != KindList {
		return nil
	}
	out, err := decodeList(v.S, []Value{})
	if err != nil {
		return nil
	}
	return out
}

var errListEncoding = errors.New("cdc: malformed list encoding")

// decodeList decodes enc, appending to out when out is non-nil (else it
// only validates).
func decodeList(enc string, out []Value) ([]Value, error) {
	for i := 0; i < len(enc); {
		k := Kind(enc[i])
		i++
		var v Value
		v.Kind = k
		switch k {
		case KindNull, KindUnavailable:
		case KindBool, KindInt, KindFloat, KindDate, KindTime, KindTimestamp, KindTimestampTZ:
			if len(enc)-i < 8 {
				return nil, errListEncoding
			}
			v.I = int64(binary.BigEndian.Uint64([]byte(enc[i : i+8])))
			i += 8
			if k == KindBool && v.I != 0 && v.I != 1 {
				return nil, errListEncoding
			}
		case KindString, KindBytes, KindUUID, KindList:
			n, w := binary.Uvarint([]byte(enc[i:min(len(enc), i+binary.MaxVarintLen64)]))
			if w <= 0 || n > uint64(len(enc)-i-w) {
				return nil, errListEncoding
			}
			i += w
			v.S = enc[i : i+int(n)]
			i += int(n)
			if k == KindList {
				if _, err := decodeList(v.S, nil); err != nil {
					return nil, err
				}
				v = listOf(v.S)
			}
		case KindDecimal:
			if len(enc)-i < 3 {
				return nil, errListEncoding
			}
			v.Scale = int16(binary.BigEndian.Uint16([]byte(enc[i : i+2])))
			i += 2
			form := enc[i]
			i++
			switch form {
			case 0:
				if len(enc)-i < 8 {
					return nil, errListEncoding
				}
				v.I = int64(binary.BigEndian.Uint64([]byte(enc[i : i+8])))
				i += 8
			case 1:
				n, w := binary.Uvarint([]byte(enc[i:min(len(enc), i+binary.MaxVarintLen64)]))
				if w <= 0 || n == 0 || n > uint64(len(enc)-i-w) {
					return nil, errListEncoding
				}
				i += w
				v.S = enc[i : i+int(n)]
				i += int(n)
			default:
				return nil, errListEncoding
			}
		default:
			return nil, fmt.Errorf("cdc: list element of unknown kind %d", k)
		}
		if out != nil {
			out = append(out, v)
		}
	}
	return out, nil
}
