package sample

import (
	"bufio"
	"io"
)

// WriteJSONLines writes the values of msgs one per line, a tombstone as the
// line `null` (the format `starter demo --events FILE` reads). Keys are
// not written. It returns the first write error.
func WriteJSONLines(w io.Writer, msgs []Message) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	for _, m := range msgs {
		if m.Value == nil {
			bw.WriteString("null\n")
			continue
		}
		bw.Write(m.Value)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
