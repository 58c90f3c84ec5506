package lake

import (
	"cmp"
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// filePos is one row to remove: a data file and a row position in it.
type filePos struct {
	path string
	pos  int64
}

// writePositionDeletes writes one Parquet position-delete file (Iceberg
// spec, "Position Delete Files": columns file_path and pos, rows sorted by
// file_path then pos) for the given rows and returns its manifest entry.
// When every row points at one data file, the entry records it as the
// referenced data file so readers can skip the file for other data files.
func writePositionDeletes(ctx context.Context, tbl *table.Table, rows []filePos) (iceberg.DataFile, error) {
	slices.SortFunc(rows, func(a, b filePos) int {
		if c := cmp.Compare(a.path, b.path); c != 0 {
			return c
		}
		return cmp.Compare(a.pos, b.pos)
	})
	b := array.NewRecordBuilder(memory.DefaultAllocator, table.PositionalDeleteArrowSchema)
	defer b.Release()
	pb := b.Field(0).(*array.StringBuilder)
	ob := b.Field(1).(*array.Int64Builder)
	pb.Reserve(len(rows))
	ob.Reserve(len(rows))
	single := true
	for i, r := range rows {
		pb.Append(r.path)
		ob.Append(r.pos)
		if i > 0 && r.path != rows[0].path {
			single = false
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	path, err := newFilePath(tbl, "pos-deletes")
	if err != nil {
		return nil, err
	}
	spec := fileSpec{schema: iceberg.PositionalDeleteSchema, content: iceberg.EntryContentPosDeletes}
	if single && len(rows) > 0 {
		spec.referenced = rows[0].path
	}
	return writeParquet(ctx, tbl, path, rec, spec)
}
