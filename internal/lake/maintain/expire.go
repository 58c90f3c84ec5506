package maintain

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// commitExpiry expires tbl's snapshots older than olderThan beyond the
// newest retainLast of each branch, in one commit, then deletes the files
// only the expired snapshots referenced (DeleteExpiredFiles, in place of
// iceberg-go's own clean-up), and returns the table as committed. Serves
// the scheduled Expire and the batch commits' AutoExpire. Errors: staging
// the expiry (gc.enabled=false among them) and committing it (the table
// is nil then); deleting the files (the expiry has landed: the table is
// returned with the error, and what was not deleted is left for the
// orphan clean-up).
func commitExpiry(ctx context.Context, tbl *table.Table, retainLast int, olderThan time.Duration) (*table.Table, error) {
	tx := tbl.NewTransaction()
	if err := tx.ExpireSnapshots(table.WithRetainLast(retainLast), table.WithOlderThan(olderThan), table.WithPostCommit(false)); err != nil {
		return nil, fmt.Errorf("lake: expire snapshots of %s: %w", lakecat.IdentString(tbl.Identifier()), err)
	}
	out, err := lakecat.CommitTx(ctx, tbl, tx)
	if err != nil {
		return nil, fmt.Errorf("lake: commit expiry of %s: %w", lakecat.IdentString(tbl.Identifier()), err)
	}
	if _, err := DeleteExpiredFiles(ctx, tbl, out); err != nil {
		return out, fmt.Errorf("lake: delete the files of %s's expired snapshots: %w", lakecat.IdentString(tbl.Identifier()), err)
	}
	return out, nil
}

// ExpireOptions bound snapshot expiry and orphan cleanup. Defaults are
// safe: keep at least 10 snapshots and everything younger than 5 days,
// delete only orphan files older than 3 days (an in-flight write is never
// that old).
type ExpireOptions struct {
	RetainLast   int
	OlderThan    time.Duration
	OrphanMinAge time.Duration
	CleanOrphans bool
}

// Expire drops snapshots older than OlderThan beyond the last RetainLast
// (their unreferenced files are deleted after the commit) and, when asked,
// deletes files under the table location that no snapshot references and
// that are older than OrphanMinAge (left by failed commits). Bookkeeping
// survives: the last batch is in the table properties.
func Expire(ctx context.Context, cat catalog.Catalog, ident table.Identifier, o ExpireOptions) (payload.ExpireResult, error) {
	var res payload.ExpireResult
	tbl, err := lakecat.LoadTable(ctx, cat, ident)
	if err != nil || tbl == nil {
		return res, err
	}
	if o.RetainLast <= 0 {
		o.RetainLast = 10
	}
	if o.OlderThan <= 0 {
		o.OlderThan = 5 * 24 * time.Hour
	}
	if o.OrphanMinAge <= 0 {
		o.OrphanMinAge = 72 * time.Hour
	}
	res.SnapshotsBefore = len(tbl.Metadata().Snapshots())
	out, err := commitExpiry(ctx, tbl, o.RetainLast, o.OlderThan)
	if out == nil {
		return res, err
	}
	tbl = out
	res.SnapshotsAfter = len(tbl.Metadata().Snapshots())
	if err != nil {
		return res, err
	}
	if o.CleanOrphans {
		out, err := tbl.DeleteOrphanFiles(ctx, table.WithFilesOlderThan(o.OrphanMinAge))
		if err != nil {
			return res, fmt.Errorf("lake: orphan cleanup of %s: %w", lakecat.IdentString(ident), err)
		}
		res.OrphansDeleted, res.OrphanBytes = len(out.DeletedFiles), out.TotalSizeBytes
	}
	return res, nil
}
