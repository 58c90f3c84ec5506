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
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
)

// loadMirror indexes every live row of the mirror's current snapshot and
// records its values in the log. It returns the rows read.
func (s *State) loadMirror(ctx context.Context, tbl *table.Table) (int, error) {
	sh, err := shapeOf(tbl.Schema(), s.keyCols)
	if err != nil {
		return 0, err
	}
	fs, dataFiles, deleted, err := liveFiles(ctx, tbl, "mirror")
	if err != nil {
		return 0, err
	}
	var total int64
	for _, df := range dataFiles {
		total += df.Count()
	}
	s.ix.Reserve(int(total))
	n := 0
	for _, df := range dataFiles {
		path := df.FilePath()
		fid := s.ix.FileID(path)
		extra := []string{ColSeq, sh.softDelete}
		err := scanLiveRows(ctx, fs, path, "mirror", s.keyCols, extra, sh, deleted[path], func(pos int64, k cdc.Key, sys []arrow.Array, r int, vals *cdc.Row) error {
			seqArr, ok1 := sys[0].(*array.String)
			delArr, ok2 := sys[1].(*array.Boolean)
			if !ok1 || !ok2 {
				return fmt.Errorf("lake: %s: unexpected %s/%s types", path, ColSeq, sh.softDelete)
			}
			seq, err := cdc.ParseSeqHex(seqArr.Value(r))
			if err != nil {
				return fmt.Errorf("lake: %s row %d: %w", path, pos, err)
			}
			if old, ok := s.ix.Lookup(k); ok {
				s.ix.Duplicates++
				if old.Seq >= seq {
					return nil
				}
			}
			s.ix.Set(k, seq, delArr.Value(r), fid, pos)
			n++
			w := s.begin(k, 0, recMirror)
			w.mirrorRow(vals)
			if err := s.commitRec(k); err != nil {
				return err
			}
			return s.buildSafePoint(n)
		})
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// loadHistory records every live row of the history table's current
// snapshot in the log (one record per row: the row, and for the current
// version its values as the key's open version). It returns the rows read.
func (s *State) loadHistory(ctx context.Context, tbl *table.Table) (int, error) {
	sh, err := shapeOf(tbl.Schema(), s.keyCols)
	if err != nil {
		return 0, err
	}
	fs, files, deleted, err := liveFiles(ctx, tbl, "history")
	if err != nil {
		return 0, err
	}
	n := 0
	extra := []string{lakecat.ColSeq, lakecat.ColValidToSeq, lakecat.ColValidFrom, lakecat.ColValidTo, lakecat.ColRowHash, lakecat.ColSourceTx}
	for _, df := range files {
		path := df.FilePath()
		fid := s.hfileID(path)
		err := scanLiveRows(ctx, fs, path, "history", s.keyCols, extra, sh, deleted[path], func(pos int64, k cdc.Key, sys []arrow.Array, r int, vals *cdc.Row) error {
			h, err := histRowAt(path, sys, r)
			if err != nil {
				return err
			}
			h.file, h.pos = fid, pos
			n++
			flags := uint8(recRows)
			if h.toSeq == "" {
				flags |= recOpen
			}
			w := s.begin(k, 0, flags)
			w.rows([]histRow{h}, nil)
			if h.toSeq == "" {
				w.openVersion(&h, vals, nil)
			}
			if err := s.commitRec(k); err != nil {
				return err
			}
			return s.buildSafePoint(n)
		})
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// buildSafePoint lets the index move to disk, or empty its RAM part,
// every 65,536 rows of a build (which holds no entry numbers): a table
// larger than its budget is built within it. Errors: the index's disk.
func (s *State) buildSafePoint(rows int) error {
	if rows%(1<<16) != 0 || s.budget == nil {
		return nil
	}
	if err := s.flush(); err != nil {
		return err
	}
	return s.ix.Release()
}

// histRowAt reads the version columns (_seq, _valid_to_seq, _valid_from,
// _valid_to, _row_hash, _source_tx, in that order in sys) of row r.
func histRowAt(path string, sys []arrow.Array, r int) (histRow, error) {
	var h histRow
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
	if h.seq, err = cdc.ParseSeqHex(seqA.Value(r)); err != nil {
		return h, err
	}
	if !toA.IsNull(r) {
		if h.toSeq, err = cdc.ParseSeqHex(toA.Value(r)); err != nil {
			return h, err
		}
	}
	if !fromA.IsNull(r) {
		h.from = int64(fromA.Value(r))
	}
	if !tA.IsNull(r) {
		h.to = int64(tA.Value(r))
	}
	h.hash = hashA.Value(r)
	if !txA.IsNull(r) {
		h.tx = txA.Value(r)
	}
	return h, nil
}

// scanLiveRows reads one data file's live rows (skipping the sorted
// positions dels): for each, fn gets its position, its encoded key, the
// arrays of the extra columns (in order) with the row's index in them, and
// its source-column values aligned to sh (columns the file predates are
// NULL; vals is reused between calls). Errors: file IO, a missing key or
// extra column, unreadable values, and fn's.
func scanLiveRows(ctx context.Context, fs iceio.IO, path, kind string, keyCols, extra []string, sh *shape, dels []int64,
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
	for j, c := range sh.cols {
		if i := leaf(c.Name); i >= 0 {
			src = append(src, colOf(i))
			dst = append(dst, j)
		}
	}
	keyVals := make([]cdc.Value, nk)
	vals := &cdc.Row{Cols: sh.names, Vals: make([]cdc.Value, len(sh.cols))}
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
					return fmt.Errorf("lake: %s column %q: %w", path, sh.cols[j].Name, err)
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

func sortHistRows(rows []histRow) {
	slices.SortFunc(rows, func(a, b histRow) int { return a.seq.Compare(b.seq) })
}
