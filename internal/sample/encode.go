package sample

import (
	"encoding/base64"
	"encoding/binary"
	"strconv"
	"time"
	"unicode/utf8"
)

// DebeziumVersion is the connector version written in source.version.
const DebeziumVersion = "2.7.3.Final"

// appendKey writes the Kafka key: {"order_id":N}, or its schema envelope.
func appendKey(b []byte, id int64, envelope bool) []byte {
	if envelope {
		b = append(b, `{"schema":`+keySchema+`,"payload":`...)
	}
	b = append(b, `{"order_id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, '}')
	if envelope {
		b = append(b, '}')
	}
	return b
}

// appendValue writes the change event value (Debezium envelope payload:
// before, after, source, transaction, op, ts_ms, ts_us, ts_ns), or its
// schema envelope.
func appendValue(b []byte, c *change, envelope bool) []byte {
	if envelope {
		b = append(b, `{"schema":`+valueSchema+`,"payload":`...)
	}
	b = append(b, `{"before":`...)
	b = appendImage(b, c.id, &c.before, c.hasBefore, c.keyOnly)
	b = append(b, `,"after":`...)
	b = appendImage(b, c.id, &c.after, c.hasAfter, false)
	b = append(b, `,"source":{"version":"`+DebeziumVersion+`","connector":"postgresql","name":"shop","ts_ms":`...)
	b = strconv.AppendInt(b, c.commitUs/1000, 10)
	b = append(b, `,"snapshot":"false","db":"shop","sequence":"[`...)
	if c.prevCommit == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, `\"`...)
		b = strconv.AppendUint(b, c.prevCommit, 10)
		b = append(b, `\"`...)
	}
	b = append(b, `,\"`...)
	b = strconv.AppendUint(b, c.lsn, 10)
	b = append(b, `\"]","ts_us":`...)
	b = strconv.AppendInt(b, c.commitUs, 10)
	b = append(b, `,"ts_ns":`...)
	b = strconv.AppendInt(b, c.commitUs*1000, 10)
	b = append(b, `,"schema":"public","table":"orders","txId":`...)
	b = strconv.AppendInt(b, c.txID, 10)
	b = append(b, `,"lsn":`...)
	b = strconv.AppendUint(b, c.lsn, 10)
	b = append(b, `,"xmin":null},"transaction":null,"op":"`...)
	b = append(b, c.op)
	b = append(b, `","ts_ms":`...)
	b = strconv.AppendInt(b, c.procNs/1_000_000, 10)
	b = append(b, `,"ts_us":`...)
	b = strconv.AppendInt(b, c.procNs/1000, 10)
	b = append(b, `,"ts_ns":`...)
	b = strconv.AppendInt(b, c.procNs, 10)
	b = append(b, '}')
	if envelope {
		b = append(b, '}')
	}
	return b
}

// appendImage writes a row struct, null when !present; keyOnly writes
// only order_id with every other field null.
func appendImage(b []byte, id int64, r *orderRow, present, keyOnly bool) []byte {
	if !present {
		return append(b, "null"...)
	}
	b = append(b, `{"order_id":`...)
	b = strconv.AppendInt(b, id, 10)
	if keyOnly {
		return append(b, `,"customer":null,"status":null,"amount":null,"note":null,"updated_at":null}`...)
	}
	b = append(b, `,"customer":`...)
	b = appendString(b, r.customer)
	b = append(b, `,"status":`...)
	b = appendString(b, r.status)
	b = append(b, `,"amount":"`...)
	b = appendDecimal(b, r.cents)
	b = append(b, `","note":`...)
	if r.note == nil {
		b = append(b, "null"...)
	} else {
		b = appendString(b, *r.note)
	}
	b = append(b, `,"updated_at":"`...)
	b = appendZonedTimestamp(b, r.updatedAt)
	return append(b, `"}`...)
}

// appendDecimal writes a Connect Decimal as the JsonConverter does
// (decimal.format=BASE64): standard base64 of the unscaled value's
// minimal big-endian two's-complement bytes (Java BigInteger.toByteArray).
func appendDecimal(b []byte, unscaled int64) []byte {
	var raw [8]byte
	binary.BigEndian.PutUint64(raw[:], uint64(unscaled))
	i := 0
	for i < 7 && ((raw[i] == 0x00 && raw[i+1]&0x80 == 0) || (raw[i] == 0xff && raw[i+1]&0x80 != 0)) {
		i++
	}
	return base64.StdEncoding.AppendEncode(b, raw[i:])
}

// appendZonedTimestamp writes an io.debezium.time.ZonedTimestamp: ISO-8601
// in UTC with "Z", the fraction trimmed of trailing zeros (Java's
// ISO_OFFSET_DATE_TIME), e.g. 2026-01-15T09:00:00.01234Z.
func appendZonedTimestamp(b []byte, micros int64) []byte {
	return time.UnixMicro(micros).UTC().AppendFormat(b, "2006-01-02T15:04:05.999999Z07:00")
}

// appendString writes s as a JSON string the way Jackson does: only '"',
// '\\' and control characters are escaped; other text stays raw UTF-8.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		case c < utf8.RuneSelf:
			b = append(b, c)
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			b = utf8.AppendRune(b, r) // invalid bytes become U+FFFD
			i += n
			continue
		}
		i++
	}
	return append(b, '"')
}
