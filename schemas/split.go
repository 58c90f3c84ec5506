package schemas

import (
	"fmt"
	"strings"
)

// SplitValues splits a file of record values into one []byte per value.
// It accepts one JSON value per line (JSON Lines, as Kafka console
// consumers print them) and concatenated, possibly pretty-printed values
// (JSON text sequences with or without whitespace between them), and any
// mix of both. A value that is the literal null is a Kafka tombstone and
// yields a nil element. The elements alias data. A syntax error is
// reported with its line and column.
func SplitValues(data []byte) ([][]byte, error) {
	var out [][]byte
	i := 0
	for {
		i = skipWS(data, i)
		if i >= len(data) {
			return out, nil
		}
		end, err := skipValue(data, i, 1)
		if err != nil {
			line, col := lineCol(data, i)
			return nil, fmt.Errorf("schemas: value starting at line %d, column %d: %v", line, col, err)
		}
		if string(data[i:end]) == "null" {
			out = append(out, nil)
		} else {
			out = append(out, data[i:end:end])
		}
		i = end
		if i < len(data) && !isSeparator(data[i]) && data[i] != '{' && data[i] != '[' {
			line, col := lineCol(data, i)
			return nil, fmt.Errorf("schemas: line %d, column %d: unexpected %q after a value", line, col, data[i])
		}
	}
}

func isSeparator(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func lineCol(data []byte, i int) (int, int) {
	if i > len(data) {
		i = len(data)
	}
	before := string(data[:i])
	line := strings.Count(before, "\n") + 1
	col := i - strings.LastIndexByte(before, '\n')
	return line, col
}
