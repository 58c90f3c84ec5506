package tablestate

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/localstate"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
)

// loadMirror adds every live row of the mirror's current snapshot to the
// build's sorter (its key, `_seq`, soft-delete flag, place and values).
// It returns the rows read.
func (s *State) loadMirror(ctx context.Context, tbl *table.Table, bs *localstate.BuildSorter) (int, error) {
	sh, err := ShapeOf(tbl.Schema(), s.keyCols)
	if err != nil {
		return 0, err
	}
	fs, dataFiles, deleted, err := LiveFiles(ctx, tbl, "mirror")
	if err != nil {
		return 0, err
	}
	var total int64
	for _, df := range dataFiles {
		total += df.Count()
	}
	s.Ix.Reserve(int(min(total, s.buildReserveKeys())))
	n := 0
	var buf []byte
	for _, df := range dataFiles {
		path := df.FilePath()
		fid := s.Ix.FileID(path)
		extra := []string{lakecat.ColSeq, sh.SoftDelete}
		err := scanLiveRows(ctx, fs, path, "mirror", s.keyCols, extra, sh, deleted[path], func(pos int64, k cdc.Key, sys []arrow.Array, r int, vals *cdc.Row) error {
			seqArr, ok1 := sys[0].(*array.String)
			delArr, ok2 := sys[1].(*array.Boolean)
			if !ok1 || !ok2 {
				return fmt.Errorf("lake: %s: unexpected %s/%s types", path, lakecat.ColSeq, sh.SoftDelete)
			}
			seq, err := cdc.ParseSeqHex(seqArr.Value(r))
			if err != nil {
				return fmt.Errorf("lake: %s row %d: %w", path, pos, err)
			}
			n++
			buf = mirrorItem(&s.w, buf[:0], seq, delArr.Value(r), fid, pos, vals)
			if err := bs.Add(k, localstate.BuildMirrorRow, buf); err != nil {
				return err
			}
			return s.buildTick(ctx, n, 0)
		})
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// loadHistory adds every live row of the history table's current
// snapshot to the build's sorter (the row, and for the current version
// its values). It returns the rows read.
func (s *State) loadHistory(ctx context.Context, tbl *table.Table, bs *localstate.BuildSorter, before int) (int, error) {
	sh, err := ShapeOf(tbl.Schema(), s.keyCols)
	if err != nil {
		return 0, err
	}
	fs, files, deleted, err := LiveFiles(ctx, tbl, "history")
	if err != nil {
		return 0, err
	}
	n := 0
	var buf []byte
	extra := []string{lakecat.ColSeq, lakecat.ColValidToSeq, lakecat.ColValidFrom, lakecat.ColValidTo, lakecat.ColRowHash, lakecat.ColSourceTx}
	for _, df := range files {
		path := df.FilePath()
		fid := s.HFileID(path)
		err := scanLiveRows(ctx, fs, path, "history", s.keyCols, extra, sh, deleted[path], func(pos int64, k cdc.Key, sys []arrow.Array, r int, vals *cdc.Row) error {
			h, err := histRowAt(path, sys, r)
			if err != nil {
				return err
			}
			h.File, h.Pos = fid, pos
			n++
			buf = historyItem(&s.w, buf[:0], &h, vals)
			if err := bs.Add(k, localstate.BuildHistoryRow, buf); err != nil {
				return err
			}
			return s.buildTick(ctx, before+n, 0)
		})
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// buildReserveKeys is how many keys a build reserves room for in RAM at
// most: all of them without a budget, else what a quarter of the table
// budget holds at about 64 bytes a key (the index grows past it, and
// spills, as keys come).
func (s *State) buildReserveKeys() int64 {
	if s.Budget == nil {
		return 1 << 62
	}
	return s.Budget.Table() / 4 / 64
}

// buildTickRows is how many rows a build reads between two buildTicks
// (a variable for tests).
var buildTickRows = 1 << 16

// buildTick is called after each row a build reads (rows so far) and
// each key it writes (keys so far, rows then all of them): every 65,536
// rows or keys it tells the build's progress callback (SetBuildProgress)
// and checks ctx. Errors: ctx's.
func (s *State) buildTick(ctx context.Context, rows, keys int) error {
	if (rows+keys)%buildTickRows != 0 {
		return nil
	}
	s.progress.rows.Store(int64(rows))
	s.progress.keys.Store(int64(keys))
	if s.onProgress != nil {
		s.onProgress(rows, keys)
	}
	return ctx.Err()
}

// writeBuilt writes what the build read, grouped by key in key order: per
// key one chain record (its mirror row, its history rows, its open
// version) and its index entry. A key with several live mirror rows keeps
// the one of the highest `_seq` (the first read among equals), counted in
// Index.Duplicates. Every 65,536 keys is a safe point of the index.
// Errors: local IO, malformed items, ctx's.
func (s *State) writeBuilt(ctx context.Context, bs *localstate.BuildSorter, rows int) error {
	keys := 0
	var rowsBuf [][]byte // the key's history rows as a record holds them
	return bs.Each(func(g *localstate.BuildGroup) error {
		var mirror *keyindex.Entry
		var mrow []byte
		for i, p := range g.Mirrors {
			seq, del, fid, pos, row, err := parseMirrorItem(p)
			if err != nil {
				return err
			}
			if i > 0 {
				s.Ix.Duplicates++
				if mirror.Seq >= seq {
					continue
				}
			}
			mirror = &keyindex.Entry{Seq: seq, Deleted: del, File: fid, Pos: pos}
			mrow = row
		}
		open := -1
		var openVals []byte
		rowsBuf = rowsBuf[:0]
		for i, p := range g.History {
			isOpen, hrow, vals, err := parseHistoryItem(p)
			if err != nil {
				return err
			}
			rowsBuf = append(rowsBuf, hrow)
			if isOpen {
				open, openVals = i, vals
			}
		}
		var flags uint8
		if mirror != nil {
			flags |= localstate.RecMirror
		}
		if len(rowsBuf) > 0 {
			flags |= localstate.RecRows
		}
		if open >= 0 {
			flags |= localstate.RecOpen
		}
		w := &s.w
		w.Begin(0, 0, flags)
		if mirror != nil {
			w.Section()
			w.Buf = append(w.Buf, mrow...)
			w.End()
		}
		if len(rowsBuf) > 0 {
			w.Section()
			w.Uvarint(uint64(len(rowsBuf)))
			for _, r := range rowsBuf {
				w.Buf = append(w.Buf, r...)
			}
			w.Uvarint(0) // none removed
			w.End()
		}
		if open >= 0 {
			w.Section()
			if mirror != nil && bytes.Equal(openVals, mrow) {
				w.Buf = append(w.Buf, localstate.OpenAtRow)
				w.Uvarint(uint64(open))
			} else {
				w.Buf = append(w.Buf, localstate.OpenRow)
				w.Buf = append(w.Buf, rowsBuf[open]...)
				w.Buf = append(w.Buf, openVals...)
			}
			w.End()
		}
		ref, err := s.log.Append(w.Buf)
		if err != nil {
			return err
		}
		s.Ix.AddNew(g.Key, ref, mirror)
		keys++
		if keys%(1<<16) == 0 {
			if err := s.buildSafePoint(keys); err != nil {
				return err
			}
			s.progress.rows.Store(int64(rows))
			s.progress.keys.Store(int64(keys))
			if s.onProgress != nil {
				s.onProgress(rows, keys)
			}
			return ctx.Err()
		}
		return nil
	})
}

// mirrorItem appends to b (with w) a build item's payload for a mirror row: its
// `_seq` (as a string), soft-delete flag, file id, position, and values
// (as a chain record's row).
func mirrorItem(w *localstate.RecWriter, b []byte, seq cdc.Seq, deleted bool, fid int32, pos int64, vals *cdc.Row) []byte {
	save := w.Buf
	w.Buf = b
	w.Str(string(seq))
	if deleted {
		w.Buf = append(w.Buf, 1)
	} else {
		w.Buf = append(w.Buf, 0)
	}
	w.Uvarint(uint64(uint32(fid)))
	w.Uvarint(uint64(pos))
	w.Row(vals)
	b, w.Buf = w.Buf, save
	return b
}

// parseMirrorItem reads mirrorItem's payload; row is the values as a
// chain record's row (p's storage).
func parseMirrorItem(p []byte) (seq cdc.Seq, deleted bool, fid int32, pos int64, row []byte, err error) {
	r := localstate.RecReader{B: p}
	seq = cdc.Seq(r.Str())
	deleted = r.Byte1() != 0
	fid = int32(uint32(r.Uvarint()))
	pos = int64(r.Uvarint())
	if r.Err != nil {
		return "", false, 0, 0, nil, localstate.ErrBadRun
	}
	return seq, deleted, fid, pos, r.B, nil
}

// historyItem appends to b (with w) a build item's payload for a history row:
// whether it is the open version, the length of the row as a chain
// record holds it, the row, and for the open version its values. It uses
// w's record buffer as scratch (no record is being written during a
// build's reads).
func historyItem(w *localstate.RecWriter, b []byte, h *localstate.HistRow, vals *cdc.Row) []byte {
	open := h.ToSeq == ""
	w.Buf = w.Buf[:0]
	w.HistRow(h)
	if open {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(w.Buf)))
	b = append(b, w.Buf...)
	if open {
		w.Buf = w.Buf[:0]
		w.Row(vals)
		b = append(b, w.Buf...)
	}
	return b
}

// parseHistoryItem reads historyItem's payload: row and vals are in p's
// storage (vals empty unless open).
func parseHistoryItem(p []byte) (open bool, row, vals []byte, err error) {
	r := localstate.RecReader{B: p}
	open = r.Byte1() == 1
	row = r.Raw(int(r.Uvarint()))
	if r.Err != nil {
		return false, nil, nil, localstate.ErrBadRun
	}
	return open, row, r.B, nil
}

// buildSafePoint lets the index move to disk, or empty its RAM part,
// every 65,536 keys of a build (which holds no entry numbers): a table
// larger than its budget is built within it. Errors: the index's disk.
func (s *State) buildSafePoint(keys int) error {
	if keys%(1<<16) != 0 || s.Budget == nil {
		return nil
	}
	if err := s.flush(); err != nil {
		return err
	}
	return s.Ix.Release()
}

// histRowAt reads the version columns (_seq, _valid_to_seq, _valid_from,
// _valid_to, _row_hash, _source_tx, in that order in sys) of row r.
func histRowAt(path string, sys []arrow.Array, r int) (localstate.HistRow, error) {
	var h localstate.HistRow
	str := func(i int) (*array.String, error) {
		a, ok := sys[i].(*array.String)
		if !ok {
			return nil, fmt.Errorf("lake: history file %s: column %d is %s, want string", path, i, sys[i].DataType())
		}
		return a, nil
	}
	ts := func(i int) (*array.Timestamp, error) {
		a, ok := sys[i].(*array.Timestamp)
		if !ok {
			return nil, fmt.Errorf("lake: history file %s: column %d is %s, want timestamp", path, i, sys[i].DataType())
		}
		return a, nil
	}
	seqA, err := str(0)
	if err != nil {
		return h, err
	}
	toA, err := str(1)
	if err != nil {
		return h, err
	}
	fromA, err := ts(2)
	if err != nil {
		return h, err
	}
	tA, err := ts(3)
	if err != nil {
		return h, err
	}
	hashA, err := str(4)
	if err != nil {
		return h, err
	}
	txA, err := str(5)
	if err != nil {
		return h, err
	}
	if h.Seq, err = cdc.ParseSeqHex(seqA.Value(r)); err != nil {
		return h, err
	}
	if !toA.IsNull(r) {
		if h.ToSeq, err = cdc.ParseSeqHex(toA.Value(r)); err != nil {
			return h, err
		}
	}
	if !fromA.IsNull(r) {
		h.From = int64(fromA.Value(r))
	}
	if !tA.IsNull(r) {
		h.To = int64(tA.Value(r))
	}
	h.Hash = hashA.Value(r)
	if !txA.IsNull(r) {
		h.Tx = txA.Value(r)
	}
	return h, nil
}

// scanLiveRows reads one data file's live rows (skipping the sorted
// positions dels): for each, fn gets its position, its encoded key, the
// arrays of the extra columns (in order) with the row's index in them, and
// its source-column values aligned to sh (columns the file predates are
// NULL; vals is reused between calls). Errors: file IO, a missing key or
// extra column, unreadable values, and fn's.
func scanLiveRows(ctx context.Context, fs iceio.IO, path, kind string, keyCols, extra []string, sh *Shape, dels []int64,
	fn func(pos int64, k cdc.Key, sys []arrow.Array, r int, vals *cdc.Row) error) error {
	p, err := parquetio.Open(fs, path)
	if err != nil {
		return err
	}
	defer p.Close()
	// the record holds each leaf once, in first-requested order: at is
	// the record column of each requested leaf
	var cols []int
	at := map[int]int{}
	colOf := func(leaf int) int {
		if c, ok := at[leaf]; ok {
			return c
		}
		at[leaf] = len(cols)
		cols = append(cols, leaf)
		return at[leaf]
	}
	// columns by Iceberg field id (a column renamed since the file was
	// written, such as _deleted to _is_deleted), by name in a file
	// without field ids
	byID := p.HasFieldIDs()
	leaf := func(name string) int {
		if id, ok := sh.ids[name]; ok && byID {
			return p.LeafIndexByID(id)
		}
		return p.LeafIndex(name)
	}
	var fixed []int // record column of each key column, then of each extra column
	for _, n := range append(slices.Clone(keyCols), extra...) {
		i := leaf(n)
		if i < 0 {
			return fmt.Errorf("lake: %s file %s has no column %q", kind, path, n)
		}
		fixed = append(fixed, colOf(i))
	}
	nk, ne := len(keyCols), len(extra)
	var src, dst []int // record column and shape column of each source column read
	for j, c := range sh.Cols {
		if i := leaf(c.Name); i >= 0 {
			src = append(src, colOf(i))
			dst = append(dst, j)
		}
	}
	keyVals := make([]cdc.Value, nk)
	vals := &cdc.Row{Cols: sh.Names, Vals: make([]cdc.Value, len(sh.Cols))}
	sys := make([]arrow.Array, ne)
	var buf []byte
	di := 0
	return p.Scan(ctx, cols, nil, func(rec arrow.RecordBatch, first int64) error {
		for i := range sys {
			sys[i] = rec.Column(fixed[nk+i])
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			pos := first + int64(r)
			for di < len(dels) && dels[di] < pos {
				di++
			}
			if di < len(dels) && dels[di] == pos {
				continue
			}
			var err error
			for c := 0; c < nk; c++ {
				if keyVals[c], err = parquetio.ValueAt(rec.Column(fixed[c]), r); err != nil {
					return err
				}
			}
			if buf, err = cdc.EncodeKey(buf[:0], keyVals...); err != nil {
				return err
			}
			clear(vals.Vals)
			for c, j := range dst {
				v, err := parquetio.ValueAt(rec.Column(src[c]), r)
				if err != nil {
					return fmt.Errorf("lake: %s column %q: %w", path, sh.Cols[j].Name, err)
				}
				vals.Vals[j] = v
			}
			if err := fn(pos, cdc.Key(buf), sys, r, vals); err != nil {
				return err
			}
		}
		return nil
	})
}

func sortHistRows(rows []localstate.HistRow) {
	slices.SortFunc(rows, func(a, b localstate.HistRow) int { return a.Seq.Compare(b.Seq) })
}

// buildChunkBytes is the most a build holds in its sort chunk: a quarter
// of the table's index budget, within 4 to 256 MiB (64 MiB without a
// budget).
func buildChunkBytes(b *keyindex.Budget) int {
	if testBuildChunk > 0 {
		return testBuildChunk
	}
	if b == nil {
		return 64 << 20
	}
	return int(min(max(b.Table()/4, 4<<20), 256<<20))
}

// testBuildChunk, when positive, is every build's chunk size (tests: many
// small runs).
var testBuildChunk int
