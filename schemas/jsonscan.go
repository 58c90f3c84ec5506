package schemas

import (
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
		return i, fmt.Errorf("offset %d: unexpected character %q", i, c)
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
			if i+1 >= len(b) {
				return i, errors.New("unexpected end of JSON input in a string")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(b)-i < 6 || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return i, fmt.Errorf("offset %d: invalid \\u escape", i)
				}
				i += 6
			default:
				return i, fmt.Errorf("offset %d: invalid escape \\%c", i, b[i+1])
			}
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

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
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
