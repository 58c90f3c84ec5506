package rowdelta

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
)

// FilePartitions knows the partition (spec id and values) of a table's
// data files, by path: a position delete must go to a delete file of the
// partition of the data file it points at (Iceberg spec, "Scan
// Planning"). Files this process wrote are added as they are committed;
// others (written before the worker started, or by a compaction) are
// read once from the table's manifests when a delete first needs them.
// Safe for concurrent use.
type FilePartitions struct {
	mu     sync.Mutex
	byPath map[string]filePartition
}

type filePartition struct {
	specID int
	values map[int]any
}

// NewFilePartitions knows no file yet.
func NewFilePartitions() *FilePartitions {
	return &FilePartitions{byPath: map[string]filePartition{}}
}

// Add records written files' partitions.
func (fp *FilePartitions) Add(files []FileOut) {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	for _, f := range files {
		if f.DF != nil {
			fp.byPath[f.DF.FilePath()] = filePartition{specID: f.SpecID, values: f.Values}
		}
	}
}

// EverPartitioned reports whether any partition spec of tbl has fields
// (a table that never was partitioned needs no lookups).
func EverPartitioned(tbl *table.Table) bool {
	for _, s := range tbl.Metadata().PartitionSpecs() {
		if !s.IsUnpartitioned() {
			return true
		}
	}
	return false
}

// lookup returns the partitions of paths, reading tbl's live data files
// from its manifests when one is not known yet. Errors: planning the
// table's files; a path that is not a live data file of tbl.
func (fp *FilePartitions) lookup(ctx context.Context, tbl *table.Table, paths []string) (map[string]filePartition, error) {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	out := make(map[string]filePartition, len(paths))
	var missing []string
	for _, p := range paths {
		if part, ok := fp.byPath[p]; ok {
			out[p] = part
		} else {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("lake: plan %s scan for partitions: %w", lakecat.IdentString(tbl.Identifier()), err)
	}
	for _, t := range tasks {
		vals := map[int]any{}
		for id, v := range t.File.Partition() {
			vals[id] = v
		}
		fp.byPath[t.File.FilePath()] = filePartition{specID: int(t.File.SpecID()), values: vals}
	}
	for _, p := range missing {
		part, ok := fp.byPath[p]
		if !ok {
			return nil, fmt.Errorf("lake: %s: data file %s is not live in the table; its rows cannot be deleted", lakecat.IdentString(tbl.Identifier()), p)
		}
		out[p] = part
	}
	return out, nil
}

// WriteDeletes writes the deletes of rows (file ids into paths) in the
// table's delete format: on a format-version 3 table as deletion vectors
// (writeDVs: one per data file, replacing the file's live one), otherwise
// as position deletes, one delete file per partition of the files they
// point at (one file for a table that was never partitioned). Errors:
// the partition lookup's and the writer's.
func WriteDeletes(ctx context.Context, tbl *table.Table, fp *FilePartitions, rows []parquetio.RowLoc, paths []string) (DeleteSet, error) {
	if len(rows) == 0 {
		return DeleteSet{}, nil
	}
	if usesDVs(tbl) {
		return writeDVs(ctx, tbl, fp, rows, paths)
	}
	add, err := writePositionDeletes(ctx, tbl, fp, rows, paths)
	return DeleteSet{Add: add}, err
}

// writePositionDeletes is WriteDeletes for a v2 table: Parquet
// position-delete files.
func writePositionDeletes(ctx context.Context, tbl *table.Table, fp *FilePartitions, rows []parquetio.RowLoc, paths []string) ([]iceberg.DataFile, error) {
	if !EverPartitioned(tbl) {
		df, err := parquetio.WritePositionDeletes(ctx, tbl, rows, paths)
		if err != nil {
			return nil, err
		}
		return []iceberg.DataFile{df}, nil
	}
	var used []string
	seen := make(map[int32]bool)
	for _, r := range rows {
		if !seen[r.File] {
			seen[r.File] = true
			used = append(used, paths[r.File])
		}
	}
	parts, err := fp.lookup(ctx, tbl, used)
	if err != nil {
		return nil, err
	}
	specs := tbl.Metadata().PartitionSpecs()
	type group struct {
		part filePartition
		rows []parquetio.RowLoc
	}
	// the group of each file is found once (its key built from the
	// partition values), not once per row: a batch deletes tens of
	// thousands of rows from a few dozen files
	var groups []*group
	byKey := map[string]*group{}
	byFile := make(map[int32]*group, len(used))
	var key []byte
	for _, r := range rows {
		g := byFile[r.File]
		if g == nil {
			part := parts[paths[r.File]]
			key = appendKeyValue(key[:0], int32(part.specID))
			for _, id := range sortedFieldIDs(part.values) {
				key = appendKeyValue(appendKeyValue(key, int32(id)), part.values[id])
			}
			if g = byKey[string(key)]; g == nil {
				g = &group{part: part}
				byKey[string(key)] = g
				groups = append(groups, g)
			}
			byFile[r.File] = g
		}
		g.rows = append(g.rows, r)
	}
	out := make([]iceberg.DataFile, 0, len(groups))
	for _, g := range groups {
		i := slices.IndexFunc(specs, func(s iceberg.PartitionSpec) bool { return s.ID() == g.part.specID })
		if i < 0 {
			return nil, fmt.Errorf("lake: %s: partition spec %d of a data file is not in the table's metadata", lakecat.IdentString(tbl.Identifier()), g.part.specID)
		}
		spec := specs[i]
		p := parquetio.Partition{Spec: &spec, Values: g.part.values}
		if !spec.IsUnpartitioned() {
			p.Dir = partitionPath(&spec, tbl.Schema(), g.part.values)
		}
		df, err := parquetio.WritePartitionDeletes(ctx, tbl, g.rows, paths, p)
		if err != nil {
			return nil, err
		}
		out = append(out, df)
	}
	return out, nil
}

func sortedFieldIDs(m map[int]any) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
