package lake

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// histRow is what the history index holds per stored version: its
// identity and interval, and where the row lives.
type histRow struct {
	seq, toSeq cdc.Seq
	from, to   int64 // µs since the epoch; 0 = null
	hash, tx   string
	file       int32
	pos        int64
}

// HistoryIndex maps each key of a history table to its stored versions,
// ascending by _seq. Like KeyIndex it reflects one Iceberg snapshot
// (SnapshotID) and is rebuilt when the table moved. Not safe for
// concurrent use.
type HistoryIndex struct {
	SnapshotID int64
	keys       map[cdc.Key][]histRow
	files      []string
	fileIDs    map[string]int32
}

func newHistoryIndex(snapshotID int64) *HistoryIndex {
	return &HistoryIndex{SnapshotID: snapshotID, keys: map[cdc.Key][]histRow{}, fileIDs: map[string]int32{}}
}

func (ix *HistoryIndex) fileID(path string) int32 {
	if id, ok := ix.fileIDs[path]; ok {
		return id
	}
	id := int32(len(ix.files))
	ix.files = append(ix.files, path)
	ix.fileIDs[path] = id
	return id
}

// Versions returns the stored versions of key k, ascending by _seq.
func (ix *HistoryIndex) Versions(k cdc.Key) []histRow { return ix.keys[k] }

// Keys is the number of keys with history.
func (ix *HistoryIndex) Keys() int { return len(ix.keys) }

// knows reports whether position s opened or closed a stored version of
// key k: a re-delivered change that needs no rebuild.
func (ix *HistoryIndex) knows(k cdc.Key, s cdc.Seq) bool {
	for _, v := range ix.keys[k] {
		if v.seq == s || v.toSeq == s {
			return true
		}
	}
	return false
}

// BuildHistoryIndex reads the key columns and version columns of every
// live row of the history table's current snapshot.
func BuildHistoryIndex(ctx context.Context, tbl *table.Table, keyCols []string) (*HistoryIndex, error) {
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return newHistoryIndex(0), nil
	}
	fs, files, deleted, err := liveFiles(ctx, tbl, "history")
	if err != nil {
		return nil, err
	}
	ix := newHistoryIndex(snap.SnapshotID)
	for _, df := range files {
		if err := ix.addFile(ctx, fs, df.FilePath(), keyCols, deleted[df.FilePath()]); err != nil {
			return nil, err
		}
	}
	for k, vs := range ix.keys {
		slices.SortFunc(vs, func(a, b histRow) int { return a.seq.Compare(b.seq) })
		ix.keys[k] = vs
	}
	return ix, nil
}

func (ix *HistoryIndex) addFile(ctx context.Context, fs iceio.IO, path string, keyCols []string, dels []int64) error {
	names := append(slices.Clone(keyCols), ColSeq, ColValidToSeq, ColValidFrom, ColValidTo, ColRowHash, ColSourceTx)
	nk := len(keyCols)
	id := ix.fileID(path)
	return scanLiveKeys(ctx, fs, path, "history", names, nk, dels, func(rec arrow.RecordBatch) (func(int, int64, cdc.Key) error, error) {
		str := func(c int) (*array.String, error) {
			a, ok := rec.Column(c).(*array.String)
			if !ok {
				return nil, fmt.Errorf("lake: %s column %q is %s, want string", path, names[c], rec.Column(c).DataType())
			}
			return a, nil
		}
		ts := func(c int) (*array.Timestamp, error) {
			a, ok := rec.Column(c).(*array.Timestamp)
			if !ok {
				return nil, fmt.Errorf("lake: %s column %q is %s, want timestamp", path, names[c], rec.Column(c).DataType())
			}
			return a, nil
		}
		seqA, err1 := str(nk)
		toA, err2 := str(nk + 1)
		fromA, err3 := ts(nk + 2)
		tA, err4 := ts(nk + 3)
		hashA, err5 := str(nk + 4)
		txA, err6 := str(nk + 5)
		for _, err := range []error{err1, err2, err3, err4, err5, err6} {
			if err != nil {
				return nil, err
			}
		}
		return func(r int, pos int64, k cdc.Key) error {
			h := histRow{hash: hashA.Value(r), file: id, pos: pos}
			var err error
			if h.seq, err = cdc.ParseSeqHex(seqA.Value(r)); err != nil {
				return err
			}
			if !toA.IsNull(r) {
				if h.toSeq, err = cdc.ParseSeqHex(toA.Value(r)); err != nil {
					return err
				}
			}
			if !fromA.IsNull(r) {
				h.from = int64(fromA.Value(r))
			}
			if !tA.IsNull(r) {
				h.to = int64(tA.Value(r))
			}
			if !txA.IsNull(r) {
				h.tx = txA.Value(r)
			}
			ix.keys[k] = append(ix.keys[k], h)
			return nil
		}, nil
	})
}
