package lake

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/merge"
)

// IndexEntry is what the primary-key index holds per key: the stored
// row's position and guard state.
type IndexEntry struct {
	Seq     cdc.Seq
	File    int32 // index into KeyIndex.files
	Pos     int64 // row position in that data file
	Deleted bool
}

// KeyIndex maps each primary key of a mirror table to its live row
// (design.md, "Write path"). It reflects exactly one Iceberg snapshot of
// the mirror (SnapshotID); a writer that finds the table at another
// snapshot rebuilds it. Not safe for concurrent use.
type KeyIndex struct {
	SnapshotID int64 // mirror snapshot this index reflects; 0 for a table without snapshots
	entries    map[cdc.Key]IndexEntry
	files      []string
	fileIDs    map[string]int32
	Duplicates int // live rows found for an already-indexed key during a rebuild (should be 0)
}

func newKeyIndex(snapshotID int64, sizeHint int) *KeyIndex {
	return &KeyIndex{SnapshotID: snapshotID, entries: make(map[cdc.Key]IndexEntry, sizeHint), fileIDs: map[string]int32{}}
}

// Len is the number of keys (live and soft-deleted rows).
func (ix *KeyIndex) Len() int { return len(ix.entries) }

// Lookup returns the entry of key k.
func (ix *KeyIndex) Lookup(k cdc.Key) (IndexEntry, bool) {
	e, ok := ix.entries[k]
	return e, ok
}

// Stored returns the guard state of key k for merge.Fold.
func (ix *KeyIndex) Stored(k cdc.Key) merge.Stored {
	e, ok := ix.entries[k]
	if !ok {
		return merge.Stored{}
	}
	return merge.Stored{Found: true, Seq: e.Seq, Deleted: e.Deleted}
}

// FilePath returns the data file path of a file id.
func (ix *KeyIndex) FilePath(id int32) string { return ix.files[id] }

func (ix *KeyIndex) fileID(path string) int32 {
	if id, ok := ix.fileIDs[path]; ok {
		return id
	}
	id := int32(len(ix.files))
	ix.files = append(ix.files, path)
	ix.fileIDs[path] = id
	return id
}

// set records that key k now lives at (path, pos).
func (ix *KeyIndex) set(k cdc.Key, seq cdc.Seq, deleted bool, fileID int32, pos int64) {
	ix.entries[k] = IndexEntry{Seq: seq, Deleted: deleted, File: fileID, Pos: pos}
}

// Each calls fn for every key in unspecified order.
func (ix *KeyIndex) Each(fn func(cdc.Key, IndexEntry)) {
	for k, e := range ix.entries {
		fn(k, e)
	}
}

// BuildKeyIndex reads the mirror's current Iceberg snapshot: for every
// data file, the key columns, _seq and _deleted in file order, skipping
// rows removed by position deletes. Cost: one read of those columns of
// every live data file. It returns an error when the table carries
// equality deletes or deletion vectors (this pipeline never writes them)
// or a file cannot be read.
func BuildKeyIndex(ctx context.Context, tbl *table.Table, keyCols []string) (*KeyIndex, error) {
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return newKeyIndex(0, 0), nil
	}
	fs, dataFiles, deleted, err := liveFiles(ctx, tbl, "mirror")
	if err != nil {
		return nil, err
	}
	rows := int64(0)
	for _, df := range dataFiles {
		rows += df.Count()
	}
	ix := newKeyIndex(snap.SnapshotID, int(rows))
	for _, df := range dataFiles {
		if err := ix.addFile(ctx, fs, df.FilePath(), keyCols, deleted[df.FilePath()]); err != nil {
			return nil, err
		}
	}
	return ix, nil
}

// addFile indexes the live rows of one data file. dels is the sorted list
// of its positions removed by position deletes.
func (ix *KeyIndex) addFile(ctx context.Context, fs iceio.IO, path string, keyCols []string, dels []int64) error {
	nk := len(keyCols)
	id := ix.fileID(path)
	names := append(slices.Clone(keyCols), ColSeq, ColDeleted)
	return scanLiveKeys(ctx, fs, path, "data", names, nk, dels, func(rec arrow.RecordBatch) (func(int, int64, cdc.Key) error, error) {
		seqArr, ok := rec.Column(nk).(*array.String)
		if !ok {
			return nil, fmt.Errorf("lake: %s: _seq is %s, want string", path, rec.Column(nk).DataType())
		}
		delArr, ok := rec.Column(nk + 1).(*array.Boolean)
		if !ok {
			return nil, fmt.Errorf("lake: %s: _deleted is %s, want boolean", path, rec.Column(nk+1).DataType())
		}
		return func(r int, pos int64, k cdc.Key) error {
			seq, err := cdc.ParseSeqHex(seqArr.Value(r))
			if err != nil {
				return fmt.Errorf("lake: %s row %d: %w", path, pos, err)
			}
			if old, ok := ix.entries[k]; ok {
				ix.Duplicates++
				if old.Seq >= seq {
					return nil
				}
			}
			ix.set(k, seq, delArr.Value(r), id, pos)
			return nil
		}, nil
	})
}

// readPositionDeletes reads position-delete files and returns, per data
// file path in want, the sorted positions they remove.
func readPositionDeletes(ctx context.Context, fs iceio.IO, files map[string]iceberg.DataFile, want map[string]bool) (map[string][]int64, error) {
	out := map[string][]int64{}
	for path := range files {
		p, err := openParquet(fs, path)
		if err != nil {
			return nil, err
		}
		fp, pc := p.columnIndex("file_path"), p.columnIndex("pos")
		if fp < 0 || pc < 0 {
			p.Close()
			return nil, fmt.Errorf("lake: position-delete file %s lacks file_path/pos columns", path)
		}
		err = p.scan(ctx, []int{fp, pc}, nil, func(rec arrow.RecordBatch, _ int64) error {
			paths, ok1 := rec.Column(0).(*array.String)
			pos, ok2 := rec.Column(1).(*array.Int64)
			if !ok1 || !ok2 {
				return fmt.Errorf("lake: position-delete file %s has unexpected column types", path)
			}
			for r := 0; r < int(rec.NumRows()); r++ {
				if fpath := paths.Value(r); want[fpath] {
					out[fpath] = append(out[fpath], pos.Value(r))
				}
			}
			return nil
		})
		p.Close()
		if err != nil {
			return nil, err
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out, nil
}
