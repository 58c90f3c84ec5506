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
// is nil), in the image's column order. Each non-NULL value contributes
// its column name, kind tag and a length-prefixed payload; a NULL
// contributes nothing, so a column that is NULL hashes like a column the
// row does not have. That makes the hash independent of columns added to
// the table after the row was written (NULL-by-addition): an unchanged
// row hashes alike before and after the addition, whatever batch either
// image was applied in (docs/design.md, rule 6). NULL and "" still differ
// (the "" carries its column name), values moved between columns differ,
// and a decimal hashes the same however its unscaled value was held. It
// returns 32 hex digits (128 bits of SHA-256). A nil row hashes like a
// row of NULLs.
func RowHash(row *cdc.Row, tracked []string) string {
	var stack [512]byte
	buf := stack[:0]
	add := func(name string, v cdc.Value) {
		if v.Kind == cdc.KindNull {
			return
		}
		buf = binary.AppendUvarint(buf, uint64(len(name)))
		buf = append(buf, name...)
		buf = append(buf, byte(v.Kind))
		switch v.Kind {
		case cdc.KindNull, cdc.KindUnavailable:
		case cdc.KindString, cdc.KindBytes, cdc.KindUUID, cdc.KindList:
			buf = binary.AppendUvarint(buf, uint64(len(v.S)))
			buf = append(buf, v.S...)
		case cdc.KindDecimal:
			buf = appendDecimalText(buf, v)
		default:
			buf = binary.BigEndian.AppendUint64(buf, uint64(v.I))
		}
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
	// one digest of the concatenated column encodings: the same bytes the
	// stream of per-column writes hashed
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:16])
}

// appendDecimalText appends a decimal's "<unscaled>e-<scale>" text,
// length-prefixed.
func appendDecimalText(buf []byte, v cdc.Value) []byte {
	var t [48]byte
	txt := t[:0]
	if v.S != "" {
		txt = append(txt, v.S...)
	} else {
		txt = strconv.AppendInt(txt, v.I, 10)
	}
	txt = append(txt, "e-"...)
	txt = strconv.AppendInt(txt, int64(v.Scale), 10)
	buf = binary.AppendUvarint(buf, uint64(len(txt)))
	return append(buf, txt...)
}
