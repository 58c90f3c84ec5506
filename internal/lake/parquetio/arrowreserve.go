package parquetio

import (
	"encoding/hex"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Sizing the Arrow builders of a data file before appending: a builder
// that grows by doubling copies its buffer about once over and zeroes
// every new allocation, which was a tenth of the write path's CPU
// (docs/design.md, "Write path").

// HexScratch appends hex encodings to string builders without a string
// per value: the digits go to a reused buffer that the builder copies.
type HexScratch struct{ buf []byte }

// Append appends s (raw bytes, e.g. a cdc.Seq or a key) hex-encoded to b:
// 2·len(s) bytes, the same text as hex.EncodeToString(s).
func (h *HexScratch) Append(b *array.StringBuilder, s string) {
	n := hex.EncodedLen(len(s))
	if cap(h.buf) < n {
		h.buf = make([]byte, n, 2*n)
	}
	h.buf = h.buf[:n]
	EncodeHex(h.buf, s)
	b.BinaryBuilder.Append(h.buf)
}

// ReserveValueData reserves, in every string or binary builder of
// builders (one per column of rows' values, in the same order), the
// bytes its column's values need across rows: the exact data size, so
// the builder allocates its value buffer once. vals(i) returns row i's
// values (nil for a row without values); other builders are left alone.
func ReserveValueData(builders []array.Builder, n int, vals func(i int) []cdc.Value) {
	type col struct {
		b     *array.BinaryBuilder
		c     int
		bytes int
	}
	var cols []col
	for c, b := range builders {
		switch b := b.(type) {
		case *array.StringBuilder:
			cols = append(cols, col{b: b.BinaryBuilder, c: c})
		case *array.BinaryBuilder:
			cols = append(cols, col{b: b, c: c})
		}
	}
	if len(cols) == 0 {
		return
	}
	for i := 0; i < n; i++ {
		v := vals(i)
		if v == nil {
			continue
		}
		for j := range cols {
			if c := cols[j].c; c < len(v) {
				cols[j].bytes += len(v[c].S)
			}
		}
	}
	for _, c := range cols {
		c.b.ReserveData(c.bytes)
	}
}
