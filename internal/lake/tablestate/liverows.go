package tablestate

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/lake/rowdelta"
)

// liveFiles plans tbl's current Iceberg snapshot and returns its file IO,
// its data files (each once, in plan order) and, per data file path, the
// sorted row positions its position deletes or deletion vector remove. kind names the table
// in errors ("mirror", "history").
//
// Position deletes and deletion vectors both apply. Errors: planning
// and file IO failures, unreadable delete files or deletion vectors, and
// a data file with equality deletes (this pipeline writes none).
func LiveFiles(ctx context.Context, tbl *table.Table, kind string) (iceio.IO, []iceberg.DataFile, map[string][]int64, error) {
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("lake: plan %s scan: %w", kind, err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("lake: file IO: %w", err)
	}
	var files, dvs []iceberg.DataFile
	seen := map[string]bool{}
	delFiles := map[string]iceberg.DataFile{}
	for _, t := range tasks {
		if len(t.EqualityDeleteFiles) > 0 {
			return nil, nil, nil, fmt.Errorf("lake: %s data file %s has equality deletes, which this pipeline does not write", kind, t.File.FilePath())
		}
		for _, d := range t.DeleteFiles {
			delFiles[d.FilePath()] = d
		}
		dvs = append(dvs, t.DeletionVectorFiles...)
		if !seen[t.File.FilePath()] {
			seen[t.File.FilePath()] = true
			files = append(files, t.File)
		}
	}
	deleted, err := readPositionDeletes(ctx, fs, delFiles, seen)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(dvs) > 0 {
		byDV, err := rowdelta.ReadDVs(fs, dvs, seen)
		if err != nil {
			return nil, nil, nil, err
		}
		for path, pos := range byDV {
			// a v3 table's position-delete files (none this pipeline
			// writes) and its deletion vector both apply
			deleted[path] = append(deleted[path], pos...)
			slices.Sort(deleted[path])
			deleted[path] = slices.Compact(deleted[path])
		}
	}
	return fs, files, deleted, nil
}

// readPositionDeletes reads position-delete files and returns, per data
// file path in want, the sorted positions they remove.
func readPositionDeletes(ctx context.Context, fs iceio.IO, files map[string]iceberg.DataFile, want map[string]bool) (map[string][]int64, error) {
	out := map[string][]int64{}
	for path := range files {
		p, err := parquetio.Open(fs, path)
		if err != nil {
			return nil, err
		}
		fp, pc := p.ColumnIndex("file_path"), p.ColumnIndex("pos")
		if fp < 0 || pc < 0 {
			p.Close()
			return nil, fmt.Errorf("lake: position-delete file %s lacks file_path/pos columns", path)
		}
		err = p.Scan(ctx, []int{fp, pc}, nil, func(rec arrow.RecordBatch, _ int64) error {
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
