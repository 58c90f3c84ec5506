package compact

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/rowdelta"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// Options tune a compaction.
type Options struct {
	TargetFileBytes int64 // desired data file size; default 128 MiB
}

// Compact rewrites a table's data files so that position deletes are
// applied and files approach the target size, in one atomic `replace`
// snapshot (Iceberg spec, "Rewrite"): every data file that has a delete
// file or is smaller than 75% of the target is rewritten, and delete files
// left referencing only rewritten files are removed. The commit is
// conflict-checked by iceberg-go: if a concurrent writer committed deletes
// against a file being rewritten, or any commit landed since planning, it
// fails and nothing is lost; call again. A table with nothing to do
// returns a zero result. The key indexes of writers notice the new
// snapshot and rebuild. A partitioned or sorted table (or one that was
// partitioned) is compacted by compactLaid, which also rewrites the files
// of older partition specs into the current one.
func Compact(ctx context.Context, cat catalog.Catalog, ident table.Identifier, o Options) (payload.CompactResult, error) {
	var res payload.CompactResult
	tbl, err := lakecat.LoadTable(ctx, cat, ident)
	if err != nil || tbl == nil || tbl.CurrentSnapshot() == nil {
		return res, err
	}
	target := o.TargetFileBytes
	if target <= 0 {
		target = 128 << 20
	}
	if rowdelta.EverPartitioned(tbl) || !tbl.SortOrder().IsUnsorted() {
		return compactLaid(ctx, tbl, target)
	}
	cfg := compaction.DefaultConfig()
	cfg.TargetFileSizeBytes, cfg.MinFileSizeBytes, cfg.MaxFileSizeBytes = target, target*3/4, target*9/5
	cfg.MinInputFiles, cfg.DeleteFileThreshold = 1, 1
	plan, err := compaction.Analyze(ctx, tbl, cfg)
	if err != nil {
		return res, fmt.Errorf("lake: plan compaction of %s: %w", lakecat.IdentString(ident), err)
	}
	res.FilesBefore = plan.TotalInputFiles
	if n, err := DeleteFileCount(ctx, tbl); err == nil {
		res.DeleteFilesBefore = n
	}
	groups := make([]table.CompactionTaskGroup, 0, len(plan.Groups))
	for _, g := range plan.Groups {
		if len(g.Tasks) == 1 && !hasDeletes(g.Tasks[0]) {
			continue // a single file without deletes gains nothing from a rewrite
		}
		groups = append(groups, table.CompactionTaskGroup{PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes})
	}
	if len(groups) == 0 {
		return res, nil
	}
	out, err := tbl.RewriteDataFiles(ctx, groups, table.RewriteDataFilesOptions{
		SnapshotProps: iceberg.Properties{"lakemirror.maintenance": "compaction", "lakemirror.compacted-at": time.Now().UTC().Format(time.RFC3339)}})
	lakecat.CacheTable(ctx, ident, nil) // committed (or maybe) outside lakecat.CommitTx
	if err != nil {
		return res, fmt.Errorf("lake: compact %s: %w", lakecat.IdentString(ident), err)
	}
	res.Rewritten, res.Added = out.RemovedDataFiles, out.AddedDataFiles
	res.RemovedDeleteFiles = out.RemovedPositionDeleteFiles + out.RemovedDeletionVectorFiles
	res.BytesBefore, res.BytesAfter = out.BytesBefore, out.BytesAfter
	if out.Table != nil && out.Table.CurrentSnapshot() != nil {
		res.SnapshotID = out.Table.CurrentSnapshot().SnapshotID
	}
	return res, nil
}

func hasDeletes(t table.FileScanTask) bool {
	return len(t.DeleteFiles) > 0 || len(t.EqualityDeleteFiles) > 0 || len(t.DeletionVectorFiles) > 0
}

// DeleteFileCount counts the distinct position-delete files and the
// deletion vectors (each blob once: several share a Puffin file) the
// current snapshot's scan applies (CompactResult.DeleteFilesBefore). Errors are
// the scan planning's.
func DeleteFileCount(ctx context.Context, tbl *table.Table) (int, error) {
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return 0, err
	}
	seen := map[string]bool{}
	dvs := 0
	for _, t := range tasks {
		for _, d := range t.DeleteFiles {
			seen[d.FilePath()] = true
		}
		dvs += len(t.DeletionVectorFiles)
	}
	return len(seen) + dvs, nil
}
