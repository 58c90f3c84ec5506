package compact

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/lake/rowdelta"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// compactRows is how many live rows a partitioned compaction writes at a
// time: each chunk becomes one file per partition it holds.
const compactRows = 1 << 20

// compactLaid is Compact for a table that is or was partitioned, or is
// sorted: iceberg-go's rewrite writes one unpartitioned, unsorted stream
// per group, so the live rows of the files to rewrite (every file of an
// older partition spec, every file with deletes, every file smaller than
// three quarters of target) are read with their deletes applied, written
// again through rowdelta.WriteRecord (one file per partition of the current spec,
// sorted by the sort order) and swapped in by one `replace` commit, which
// also drops the delete files that applied only to rewritten files. The
// commit is conflict-checked like every other: a concurrent batch makes
// it fail, and nothing is lost.
func compactLaid(ctx context.Context, tbl *table.Table, target int64) (payload.CompactResult, error) {
	var res payload.CompactResult
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return res, fmt.Errorf("lake: plan compaction of %s: %w", lakecat.IdentString(tbl.Identifier()), err)
	}
	spec := tbl.Spec()
	res.FilesBefore = len(tasks)
	deleteUsers := map[string]map[string]bool{} // delete file → the data files it applies to
	deleteFiles := map[string]iceberg.DataFile{}
	var dvs []iceberg.DataFile // deletion vectors: each applies to its one data file
	var chosen []table.FileScanTask
	small := 0
	for _, t := range tasks {
		for _, d := range t.DeleteFiles {
			if deleteUsers[d.FilePath()] == nil {
				deleteUsers[d.FilePath()] = map[string]bool{}
			}
			deleteUsers[d.FilePath()][t.File.FilePath()] = true
			deleteFiles[d.FilePath()] = d
		}
		dvs = append(dvs, t.DeletionVectorFiles...)
		switch {
		case int(t.File.SpecID()) != spec.ID(), hasDeletes(t):
			chosen = append(chosen, t)
		case t.File.FileSizeBytes() < target*3/4:
			chosen = append(chosen, t)
			small++
		}
	}
	res.DeleteFilesBefore = len(deleteFiles) + len(dvs)
	if len(chosen) == 0 || (len(chosen) == 1 && small == 1) {
		return res, nil // a single small file of the current spec gains nothing
	}
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return res, fmt.Errorf("lake: arrow schema: %w", err)
	}
	_, recs, err := tbl.Scan().ReadTasks(ctx, chosen)
	if err != nil {
		return res, fmt.Errorf("lake: read %s for compaction: %w", lakecat.IdentString(tbl.Identifier()), err)
	}
	var added []iceberg.DataFile
	var pending []arrow.RecordBatch
	rows := int64(0)
	flush := func() error {
		if rows == 0 {
			return nil
		}
		rec, err := parquetio.ConcatRecords(sc, pending)
		for _, p := range pending {
			p.Release()
		}
		pending, rows = pending[:0], 0
		if err != nil {
			return err
		}
		defer rec.Release()
		files, _, err := rowdelta.WriteRecord(ctx, tbl, "compacted", rec)
		if err != nil {
			return err
		}
		added = append(added, rowdelta.DataFiles(files)...)
		return nil
	}
	for rec, err := range recs {
		if err != nil {
			return res, fmt.Errorf("lake: read %s for compaction: %w", lakecat.IdentString(tbl.Identifier()), err)
		}
		if rec.NumCols() != int64(len(sc.Fields())) {
			rec.Release()
			return res, fmt.Errorf("lake: compaction of %s read %d columns, the schema has %d", lakecat.IdentString(tbl.Identifier()), rec.NumCols(), len(sc.Fields()))
		}
		pending = append(pending, array.NewRecordBatch(sc, rec.Columns(), rec.NumRows()))
		rows += rec.NumRows()
		rec.Release()
		if rows >= compactRows {
			if err := flush(); err != nil {
				return res, err
			}
		}
	}
	if err := flush(); err != nil {
		return res, err
	}
	rewritten := map[string]bool{}
	tx := tbl.NewTransaction()
	rw := tx.NewRewrite(iceberg.Properties{"lakemirror.maintenance": "compaction", "lakemirror.compacted-at": time.Now().UTC().Format(time.RFC3339)})
	for _, t := range chosen {
		rewritten[t.File.FilePath()] = true
		rw.DeleteFile(t.File)
		res.BytesBefore += t.File.FileSizeBytes()
	}
	for path, users := range deleteUsers {
		all := true
		for u := range users {
			all = all && rewritten[u]
		}
		if all {
			rw.DeleteFile(deleteFiles[path])
			res.RemovedDeleteFiles++
		}
	}
	for _, d := range dvs {
		// a deletion vector of a rewritten file goes with it (every file
		// with deletes is rewritten)
		if ref := d.ReferencedDataFile(); ref != nil && rewritten[*ref] {
			rw.DeleteFile(d)
			res.RemovedDeleteFiles++
		}
	}
	for _, df := range added {
		rw.AddDataFile(df)
		res.BytesAfter += df.FileSizeBytes()
	}
	if err := rw.Commit(ctx); err != nil {
		return res, fmt.Errorf("lake: stage compaction of %s: %w", lakecat.IdentString(tbl.Identifier()), err)
	}
	out, err := lakecat.CommitTx(ctx, tbl, tx)
	if err != nil {
		return res, fmt.Errorf("lake: compact %s: %w", lakecat.IdentString(tbl.Identifier()), err)
	}
	res.Rewritten, res.Added = len(chosen), len(added)
	if out.CurrentSnapshot() != nil {
		res.SnapshotID = out.CurrentSnapshot().SnapshotID
	}
	return res, nil
}
