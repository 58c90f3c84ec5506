package parquetio

import (
	"cmp"
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// RowLoc is one row of a data file: the file's id (an index into the
// table's file list the caller keeps) and the row's 0-based position in it.
type RowLoc struct {
	File int32
	Pos  int64
}

// WritePositionDeletes writes one Parquet position-delete file (Iceberg
// spec, "Position Delete Files": columns file_path and pos, rows sorted by
// file_path then pos) for the given rows (file ids into paths) and returns
// its manifest entry. When every row points at one data file, the entry
// records it as the referenced data file so readers can skip the file for
// other data files.
func WritePositionDeletes(ctx context.Context, tbl *table.Table, rows []RowLoc, paths []string) (iceberg.DataFile, error) {
	return WritePartitionDeletes(ctx, tbl, rows, paths, Partition{})
}

// Partition is the partition a position-delete file belongs to: the spec
// and partition values of the data files its rows point at (Iceberg
// spec, "Scan Planning": a position delete applies to data files of its
// own partition), and the directory it goes to relative to the table's
// data directory. The zero Partition is the table's current spec,
// unpartitioned.
type Partition struct {
	Spec   *iceberg.PartitionSpec
	Values map[int]any
	Dir    string
}

// WritePartitionDeletes is WritePositionDeletes for rows of data files of
// one partition p.
func WritePartitionDeletes(ctx context.Context, tbl *table.Table, rows []RowLoc, paths []string, p Partition) (iceberg.DataFile, error) {
	// sort by path (ranking the few file ids once), then position
	seen := make([]bool, len(paths))
	var order []int32
	for _, r := range rows {
		if !seen[r.File] {
			seen[r.File] = true
			order = append(order, r.File)
		}
	}
	slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(paths[a], paths[b]) })
	rank := make([]int32, len(paths))
	for i, id := range order {
		rank[id] = int32(i)
	}
	slices.SortFunc(rows, func(a, b RowLoc) int {
		if c := cmp.Compare(rank[a.File], rank[b.File]); c != 0 {
			return c
		}
		return cmp.Compare(a.Pos, b.Pos)
	})
	b := array.NewRecordBuilder(memory.DefaultAllocator, table.PositionalDeleteArrowSchema)
	defer b.Release()
	pb := b.Field(0).(*array.StringBuilder)
	ob := b.Field(1).(*array.Int64Builder)
	pb.Reserve(len(rows))
	ob.Reserve(len(rows))
	pathBytes := 0
	for _, r := range rows {
		pathBytes += len(paths[r.File])
	}
	pb.ReserveData(pathBytes)
	for _, r := range rows {
		pb.Append(paths[r.File])
		ob.Append(r.Pos)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	prefix := "pos-deletes"
	if p.Dir != "" {
		prefix = p.Dir + "/" + prefix
	}
	path, err := NewFilePath(tbl, prefix)
	if err != nil {
		return nil, err
	}
	spec := FileSpec{Schema: iceberg.PositionalDeleteSchema, Content: iceberg.EntryContentPosDeletes, Spec: p.Spec, Partition: p.Values}
	if len(order) == 1 {
		spec.Referenced = paths[order[0]]
	}
	return WriteFile(ctx, tbl, path, rec, spec)
}
