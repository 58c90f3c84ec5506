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
// file_path then pos) for the given rows (file ids into paths) and returns
// its manifest entry. When every row points at one data file, the entry
// records it as the referenced data file so readers can skip the file for
// other data files.
func writePositionDeletes(ctx context.Context, tbl *table.Table, rows []rowLoc, paths []string) (iceberg.DataFile, error) {
	// sort by path (ranking the few file ids once), then position
	seen := make([]bool, len(paths))
	var order []int32
	for _, r := range rows {
		if !seen[r.file] {
			seen[r.file] = true
			order = append(order, r.file)
		}
	}
	slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(paths[a], paths[b]) })
	rank := make([]int32, len(paths))
	for i, id := range order {
		rank[id] = int32(i)
	}
	slices.SortFunc(rows, func(a, b rowLoc) int {
		if c := cmp.Compare(rank[a.file], rank[b.file]); c != 0 {
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
	pathBytes := 0
	for _, r := range rows {
		pathBytes += len(paths[r.file])
	}
	pb.ReserveData(pathBytes)
	for _, r := range rows {
		pb.Append(paths[r.file])
		ob.Append(r.pos)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	path, err := newFilePath(tbl, "pos-deletes")
	if err != nil {
		return nil, err
	}
	spec := fileSpec{schema: iceberg.PositionalDeleteSchema, content: iceberg.EntryContentPosDeletes}
	if len(order) == 1 {
		spec.referenced = paths[order[0]]
	}
	return writeParquet(ctx, tbl, path, rec, spec)
}
