package localstate

import (
	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/merge"
)

// HistRow is a stored history row: its version's identity and interval,
// and where the row lives (a file id of the local state's history file
// table, and the row position).
type HistRow struct {
	Seq, ToSeq cdc.Seq
	From, To   int64 // µs since the epoch; 0 = null
	Hash, Tx   string
	File       int32
	Pos        int64
}

// Version turns a stored row and its values back into a merge.Version.
func (h *HistRow) Version(vals *cdc.Row) *merge.Version {
	return &merge.Version{Seq: h.Seq, From: h.From, ToSeq: h.ToSeq, To: h.To, Values: vals, Hash: h.Hash, OpenTx: h.Tx}
}

// HistRowOf is the stored row of version v at (file, pos).
func HistRowOf(v *merge.Version, file int32, pos int64) HistRow {
	return HistRow{Seq: v.Seq, ToSeq: v.ToSeq, From: v.From, To: v.To, Hash: v.Hash, Tx: v.OpenTx, File: file, Pos: pos}
}
