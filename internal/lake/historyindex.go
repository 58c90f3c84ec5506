package lake

import (
	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/merge"
)

// histRow is a stored history row: its version's identity and interval,
// and where the row lives (a file id of the local state's history file
// table, and the row position).
type histRow struct {
	seq, toSeq cdc.Seq
	from, to   int64 // µs since the epoch; 0 = null
	hash, tx   string
	file       int32
	pos        int64
}

// version turns a stored row and its values back into a merge.Version.
func (h *histRow) version(vals *cdc.Row) *merge.Version {
	return &merge.Version{Seq: h.seq, From: h.from, ToSeq: h.toSeq, To: h.to, Values: vals, Hash: h.hash, OpenTx: h.tx}
}

// histRowOf is the stored row of version v at (file, pos).
func histRowOf(v *merge.Version, file int32, pos int64) histRow {
	return histRow{seq: v.Seq, toSeq: v.ToSeq, from: v.From, to: v.To, hash: v.Hash, tx: v.OpenTx, file: file, pos: pos}
}
