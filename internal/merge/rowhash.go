package merge

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// RowHash is the `_row_hash` of the history table: a canonical, null-safe
// digest of the tracked columns of a row image (all columns when tracked
// is nil), in the image's column order. Each value contributes its kind
// tag and a length-prefixed payload, so NULL and "" differ, NULLs swapped
// between columns differ, and a decimal hashes the same however its
// unscaled value was held. It returns 32 hex digits (128 bits of SHA-256).
// A nil row hashes like a row of NULLs of no columns.
func RowHash(row *cdc.Row, tracked []string) string {
	h := sha256.New()
	var buf []byte
	add := func(name string, v cdc.Value) {
		buf = buf[:0]
		buf = binary.AppendUvarint(buf, uint64(len(name)))
		buf = append(buf, name...)
		buf = append(buf, byte(v.Kind))
		switch v.Kind {
		case cdc.KindNull, cdc.KindUnavailable:
		case cdc.KindString, cdc.KindBytes, cdc.KindUUID, cdc.KindList:
			buf = binary.AppendUvarint(buf, uint64(len(v.S)))
			buf = append(buf, v.S...)
		case cdc.KindDecimal:
			t := v.UnscaledText() + "e-" + strconv.Itoa(int(v.Scale))
			buf = binary.AppendUvarint(buf, uint64(len(t)))
			buf = append(buf, t...)
		default:
			buf = binary.BigEndian.AppendUint64(buf, uint64(v.I))
		}
		h.Write(buf)
	}
	if row != nil {
		if tracked == nil {
			for i, n := range row.Cols.Names {
				add(n, row.Vals[i])
			}
		} else {
			for _, n := range tracked {
				v, _ := row.Get(n)
				add(n, v)
			}
		}
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:16])
}
