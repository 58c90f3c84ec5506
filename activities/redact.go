package activities

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// valueKinds are the words typing.Coerce and the decoders put before a
// value they describe ("integer 5", "uuid 651aed08-…", "list [1,2]").
var valueKinds = []string{"integer", "number", "decimal", "boolean", "date", "time", "timestamp", "timestamptz", "uuid", "list", "string"}

// redactRecordContent returns reason (why a record could not be applied:
// a decode, conform or purge reason) without what the record holds, for
// text that reaches the workflow's state and Temporal history (status,
// the Web UI, failure messages), where the quarantine table's access
// rules do not hold. What it replaces by "…":
//   - every quoted text ("…" in Go syntax: values such as cannot convert
//     string "S3CRET" and the parser's unparsed tails), except the name
//     right after "column " (a column name is the schema's, not a value);
//   - every token that starts with a digit, or a sign and a digit (values
//     like 3.14, dates, positions, offsets; also bounds like
//     decimal(8,4)'s, which costs little);
//   - the token after a value kind word (integer, uuid, list, …) when it
//     looks like a value (starts with a digit, a sign, [ or {, or is true
//     or false, or a hex UUID).
//
// The words of the reason, column names and error kinds stay, so the
// message still says what is wrong and where: the record's coordinates are
// given next to it, and the full reason is in the quarantine table.
func redactRecordContent(reason string) string {
	var b strings.Builder
	s := reason
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		prev := b.String()
		switch {
		case r == '"':
			end := quotedEnd(s)
			if strings.HasSuffix(prev, "column ") && end > 0 {
				b.WriteString(s[:end])
			} else {
				b.WriteString(`"…"`)
			}
			if end < 0 {
				return b.String() // unterminated: drop the rest
			}
			s = s[end:]
			continue
		case tokenStart(prev) && (startsValue(s) || afterKind(prev) && kindValue(s)):
			b.WriteString("…")
			s = s[tokenEnd(s):]
			continue
		}
		b.WriteString(s[:size])
		s = s[size:]
	}
	return b.String()
}

// quotedEnd returns the length of the Go-quoted text at the start of s
// (its closing quote included), or -1 when it is not closed.
func quotedEnd(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// tokenStart reports whether a token begins after text prev.
func tokenStart(prev string) bool {
	if prev == "" {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(prev)
	return unicode.IsSpace(r) || strings.ContainsRune("([{,:=@/", r)
}

// startsValue reports whether s starts with a number: a digit, or a sign
// and a digit.
func startsValue(s string) bool {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	return s != "" && s[0] >= '0' && s[0] <= '9'
}

// afterKind reports whether prev ends with a value kind word and a space.
func afterKind(prev string) bool {
	p, ok := strings.CutSuffix(prev, " ")
	if !ok {
		return false
	}
	for _, k := range valueKinds {
		if w, ok := strings.CutSuffix(p, k); ok && (w == "" || !isWordRune(w[len(w)-1])) {
			return true
		}
	}
	return false
}

// kindValue reports whether s starts with what follows a value kind word.
func kindValue(s string) bool {
	if s == "" {
		return false
	}
	if strings.ContainsRune("-+[{", rune(s[0])) || startsValue(s) {
		return true
	}
	tok := s[:tokenEnd(s)]
	if tok == "true" || tok == "false" {
		return true
	}
	// a hex UUID (8-4-4-4-12)
	if len(tok) >= 36 && tok[8] == '-' && tok[13] == '-' && tok[18] == '-' && tok[23] == '-' {
		return true
	}
	return false
}

// tokenEnd returns the length of the token at the start of s: up to a
// space or a closing delimiter outside brackets and quotes.
func tokenEnd(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			if n := quotedEnd(s[i:]); n > 0 {
				i += n - 1
				continue
			}
			return len(s)
		case c == '[' || c == '{' || c == '(':
			depth++
		case (c == ']' || c == '}' || c == ')') && depth > 0:
			depth--
		case depth == 0 && (c == ' ' || c == ')' || c == ']' || c == '}' || c == ';' || c == ','):
			return i
		case depth == 0 && c == ':' && (i+1 == len(s) || s[i+1] == ' '):
			return i
		}
	}
	return len(s)
}

func isWordRune(c byte) bool {
	return c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
