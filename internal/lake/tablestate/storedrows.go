package tablestate

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	iceio "github.com/apache/iceberg-go/io"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
)

// ReadStoredRows reads the current values of the given keys' stored rows
// (located through the index) and returns them aligned to the table's
// source columns. Only the row groups that hold a wanted position are
// read. Columns a data file predates (added later by schema evolution)
// read as NULL.
func ReadStoredRows(ctx context.Context, fs iceio.IO, ix *keyindex.Index, sh *Shape, keys []cdc.Key) (map[cdc.Key]*cdc.Row, error) {
	byFile := map[int32][]cdc.Key{}
	for _, k := range keys {
		e, ok := ix.Lookup(k)
		if !ok {
			return nil, fmt.Errorf("lake: no stored row for key %x", string(k))
		}
		byFile[e.File] = append(byFile[e.File], k)
	}
	out := make(map[cdc.Key]*cdc.Row, len(keys))
	for fid, ks := range byFile {
		path := ix.FilePath(fid)
		want := map[int64]cdc.Key{}
		positions := make([]int64, 0, len(ks))
		for _, k := range ks {
			e, _ := ix.Lookup(k)
			want[e.Pos] = k
			positions = append(positions, e.Pos)
		}
		slices.Sort(positions)
		if err := ReadRowsAt(ctx, fs, path, sh, positions, func(pos int64, row *cdc.Row) {
			out[want[pos]] = row
		}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ReadRowsAt calls fn with the source-column values of each wanted
// position of one data file.
func ReadRowsAt(ctx context.Context, fs iceio.IO, path string, sh *Shape, positions []int64, fn func(int64, *cdc.Row)) error {
	p, err := parquetio.Open(fs, path)
	if err != nil {
		return err
	}
	defer p.Close()
	var cols []int
	var dst []int // column of sh for each read column
	for j, c := range sh.Cols {
		if i := p.ColumnIndex(c.Name); i >= 0 {
			cols = append(cols, i)
			dst = append(dst, j)
		}
	}
	rgs := p.RowGroupsOf(positions)
	pi := 0
	return p.Scan(ctx, cols, rgs, func(rec arrow.RecordBatch, first int64) error {
		end := first + rec.NumRows()
		for pi < len(positions) && positions[pi] < first {
			pi++
		}
		for ; pi < len(positions) && positions[pi] < end; pi++ {
			r := int(positions[pi] - first)
			row := &cdc.Row{Cols: sh.Names, Vals: make([]cdc.Value, len(sh.Cols))}
			for c := range cols {
				v, err := parquetio.ValueAt(rec.Column(c), r)
				if err != nil {
					return fmt.Errorf("lake: %s column %q: %w", path, sh.Cols[dst[c]].Name, err)
				}
				row.Vals[dst[c]] = v
			}
			fn(positions[pi], row)
		}
		return nil
	})
}
