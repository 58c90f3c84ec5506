package schemas

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/lakemirror/lakemirror/internal/cdc/typing"
)

// maxJSONDepth bounds nesting in the raw scanner, as fastjson.MaxDepth does
// in the parser, so hostile input cannot exhaust the stack.
const maxJSONDepth = fastjson.MaxDepth

var errJSONDepth = errors.New("JSON nested too deeply")

// skipWS returns the index of the first non-whitespace byte of b at or
// after i (RFC 8259 whitespace: space, tab, LF, CR).
func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue validates the JSON value that starts at b[i] (no leading
// whitespace) strictly per RFC 8259 and returns the index just past it.
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return i, errors.New("unexpected end of JSON input")
	}
	if depth > maxJSONDepth {
		return i, errJSONDepth
	}
	switch c := b[i]; {
	case c == '{':
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return i, fmt.Errorf("offset %d: want an object key", i)
			}
			var err error
			if i, err = skipString(b, i); err != nil {
				return i, err
			}
			i = skipWS(b, i)
			if i >= len(b) || b[i] != ':' {
				return i, fmt.Errorf("offset %d: want ':' after an object key", i)
			}
			i = skipWS(b, i+1)
			if i, err = skipValue(b, i, depth+1); err != nil {
				return i, err
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return i, errors.New("unexpected end of JSON input in an object")
			}
			if b[i] == '}' {
				return i + 1, nil
			}
			if b[i] != ',' {
				return i, fmt.Errorf("offset %d: want ',' or '}' in an object", i)
			}
			i = skipWS(b, i+1)
		}
	case c == '[':
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		for {
			var err error
			if i, err = skipValue(b, i, depth+1); err != nil {
				return i, err
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return i, errors.New("unexpected end of JSON input in an array")
			}
			if b[i] == ']' {
				return i + 1, nil
			}
			if b[i] != ',' {
				return i, fmt.Errorf("offset %d: want ',' or ']' in an array", i)
			}
			i = skipWS(b, i+1)
		}
	case c == '"':
		return skipString(b, i)
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		n := typing.NumberLen(b[i:])
		if n == 0 {
			return i, fmt.Errorf("offset %d: invalid number", i)
		}
		return i + n, nil
	default:
		return i, fmt.Errorf("offset %d: unexpected character", i)
	}
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, fmt.Errorf("offset %d: invalid literal", i)
	}
	return i + len(lit), nil
}

// skipString validates the string starting at the quote b[i] (escapes,
// no raw control characters, valid UTF-8) and returns the index past its
// closing quote.
func skipString(b []byte, i int) (int, error) {
	start := i
	i++
	ascii := true
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			if !ascii && !utf8.Valid(b[start+1:i]) {
				return i, fmt.Errorf("offset %d: string is not valid UTF-8", start)
			}
			return i + 1, nil
		case c == '\\':
			n, err := escapeLen(b, i)
			if err != nil {
				return i, err
			}
			i += n
		case c < 0x20:
			return i, fmt.Errorf("offset %d: control character in a string", i)
		default:
			if c >= 0x80 {
				ascii = false
			}
			i++
		}
	}
	return i, errors.New("unexpected end of JSON input in a string")
}

// checkEscapes checks every string escape of the JSON text b (RFC 8259
// section 7) and returns the first one that does not decode to exactly
// one text: an unknown escape (\x), a \u escape without four hex digits,
// or a UTF-16 surrogate that is not half of a pair (\ud800 alone, \ud800
// followed by anything but a low surrogate, or a low surrogate \udc00
// first). fastjson decodes such escapes best-effort (it keeps \ud800 as
// those six characters, so the value collides with a text that really
// holds them, and turns \ud800\u0041 into U+FFFD, dropping the A), so the
// decoder calls this before parsing. A lone surrogate is what Debezium's
// JsonConverter (Jackson) writes for a Java string holding one, which a
// SQL Server nvarchar or an Oracle NVARCHAR2 can hold but PostgreSQL and
// MySQL text cannot: there is no UTF-8 text for it, so no Iceberg string
// can hold it exactly, and the record goes to the quarantine instead of
// being stored as another text. Outside strings JSON has no backslash, so
// the scan needs no parse; a text without backslashes costs one
// IndexByte. Errors give the byte offset of the escape in b.
func checkEscapes(b []byte) error {
	i := bytes.IndexByte(b, '\\')
	for i >= 0 {
		n, err := escapeLen(b, i)
		if err != nil {
			return err
		}
		i += n
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 {
			return nil
		}
		i += j
	}
	return nil
}

// escapeLen returns the length of the escape that starts with the
// backslash b[i]: 2 for \n and its kind, 6 for \uXXXX, 12 for a
// surrogate pair \uD8xx\uDCxx. Errors: see checkEscapes.
func escapeLen(b []byte, i int) (int, error) {
	if i+1 >= len(b) {
		return 0, errors.New("unexpected end of JSON input in a string")
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, nil
	case 'u':
	default:
		return 0, fmt.Errorf(`offset %d: unknown escape (a backslash before another character than "\/bfnrtu)`, i)
	}
	r, ok := hex4(b, i+2)
	if !ok {
		return 0, fmt.Errorf("offset %d: invalid \\u escape", i)
	}
	switch {
	case r < 0xd800 || r > 0xdfff:
		return 6, nil
	case r <= 0xdbff:
		if len(b)-i >= 12 && b[i+6] == '\\' && b[i+7] == 'u' {
			if lo, ok := hex4(b, i+8); ok && lo >= 0xdc00 && lo <= 0xdfff {
				return 12, nil
			}
		}
	}
	return 0, fmt.Errorf("offset %d: a \\u escape of U+%04X, a lone UTF-16 surrogate, not a character: "+
		"the source text is not Unicode text (a Java string the JSON converter wrote as it was) "+
		"and has no exact UTF-8 form for an Iceberg string", i, r)
}

// hex4 reads the four hex digits at b[i:i+4].
func hex4(b []byte, i int) (rune, bool) {
	if len(b)-i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// appendCompactJSON appends v as compact JSON text: object keys in their
// received order, strings re-escaped per RFC 8259, numbers as received.
func appendCompactJSON(dst []byte, v *fastjson.Value) []byte {
	switch v.Type() {
	case fastjson.TypeObject:
		o, _ := v.Object()
		dst = append(dst, '{')
		first := true
		o.Visit(func(k []byte, vv *fastjson.Value) {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = typing.AppendJSONString(dst, k)
			dst = append(dst, ':')
			dst = appendCompactJSON(dst, vv)
		})
		return append(dst, '}')
	case fastjson.TypeArray:
		a, _ := v.Array()
		dst = append(dst, '[')
		for i, vv := range a {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendCompactJSON(dst, vv)
		}
		return append(dst, ']')
	case fastjson.TypeString:
		s, _ := v.StringBytes()
		return typing.AppendJSONString(dst, s)
	case fastjson.TypeNumber:
		return v.MarshalTo(dst)
	case fastjson.TypeTrue:
		return append(dst, "true"...)
	case fastjson.TypeFalse:
		return append(dst, "false"...)
	default:
		return append(dst, "null"...)
	}
}

// jsonTypeName names a fastjson type for error messages.
func jsonTypeName(v *fastjson.Value) string {
	if v == nil {
		return "nothing"
	}
	switch v.Type() {
	case fastjson.TypeObject:
		return "an object"
	case fastjson.TypeArray:
		return "an array"
	case fastjson.TypeString:
		return "a string"
	case fastjson.TypeNumber:
		return "a number"
	case fastjson.TypeTrue, fastjson.TypeFalse:
		return "a boolean"
	default:
		return "null"
	}
}

// isNull reports whether v is absent or JSON null.
func isNull(v *fastjson.Value) bool { return v == nil || v.Type() == fastjson.TypeNull }
