package rowdelta

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/maintain"
)

// CommitRowDelta publishes a batch in one Iceberg commit of tbl: a row
// delta adding data and deletes.Add and removing deletes.Replaced (the
// deletion vectors the added ones replace; any may be empty; none is
// staged when all are; nil files are left out) with the batch's bookkeeping keys of props in its snapshot
// summary (summaryOf), and all of props set as table properties, together
// with the metadata retention properties when the table lacks them. It
// returns the table as committed, after the snapshot expiry (maintain.AutoExpire)
// and the manifest merge (maintain.AutoMergeManifests) that commit made due, and
// the Iceberg snapshot id of the row delta itself (0 when none was
// staged). what names the commit in errors ("mirror", "history", "bronze
// batch b1").
//
// Errors: staging failures, and commit failures including conflicts with
// another writer (retryable: reload the table and try again).
func CommitRowDelta(ctx context.Context, tbl *table.Table, what string, data []iceberg.DataFile, dels DeleteSet, props iceberg.Properties) (*table.Table, int64, error) {
	data, deletes, replaced := nonNil(data), nonNil(dels.Add), nonNil(dels.Replaced)
	for k, v := range lakecat.MetadataRetention {
		if _, ok := tbl.Properties()[k]; !ok {
			props[k] = v
		}
	}
	tx := tbl.NewTransaction()
	staged := len(data) > 0 || len(deletes) > 0
	if staged {
		rd := tx.NewRowDelta(summaryOf(props))
		if len(data) > 0 {
			rd.AddRows(data...)
		}
		if len(deletes) > 0 {
			rd.AddDeletes(deletes...)
		}
		if len(replaced) > 0 {
			rd.RemoveDeletes(replaced...)
		}
		if err := rd.Commit(ctx); err != nil {
			return nil, 0, fmt.Errorf("lake: stage %s row delta: %w", what, err)
		}
	}
	if err := tx.SetProperties(props); err != nil {
		return nil, 0, fmt.Errorf("lake: stage %s properties: %w", what, err)
	}
	newTbl, err := lakecat.CommitTx(ctx, tbl, tx)
	if err != nil {
		return nil, 0, fmt.Errorf("lake: commit %s: %w", what, err)
	}
	var snap int64
	if staged {
		snap = lakecat.SnapID(newTbl)
	}
	// The batch has landed; an expiry or a manifest merge that fails (a
	// conflict with another writer) leaves its work for a later commit or
	// the scheduled job, and never fails the batch. Each returns the
	// table as committed, done or not.
	newTbl, _ = maintain.AutoExpire(ctx, newTbl)
	newTbl, _ = maintain.AutoMergeManifests(ctx, newTbl)
	return newTbl, snap, nil
}

// summaryKeys are the properties a batch's snapshot summary carries: what
// identifies the batch and its result, so that any Iceberg tool shows per
// commit which batch it was. State that is only ever read as the table's
// current value (the pending-rebuild set, bronze's covered offsets, the
// truncates, schema decisions) stays out: every snapshot's summary is
// kept in every later metadata.json until the snapshot expires, so a
// large value there would make each commit's metadata grow with the
// table's age.
var summaryKeys = []string{lakecat.PropBatchID, lakecat.PropBatchSeq, lakecat.PropEndOffsets, lakecat.PropBatchResult, lakecat.PropBatchTally, lakecat.PropTopic, lakecat.PropLoadCursor, "lakemirror.rebuild-keys", lakecat.PropAppliedPosition}

// summaryOf is the snapshot summary of a commit with properties props.
func summaryOf(props iceberg.Properties) iceberg.Properties {
	out := iceberg.Properties{}
	for _, k := range summaryKeys {
		if v, ok := props[k]; ok {
			out[k] = v
		}
	}
	return out
}

// nonNil returns files without its nil entries.
func nonNil(files []iceberg.DataFile) []iceberg.DataFile {
	out := files[:0:0]
	for _, f := range files {
		if f != nil {
			out = append(out, f)
		}
	}
	return out
}

// DataFiles returns the data files of written files.
func DataFiles(files []FileOut) []iceberg.DataFile {
	out := make([]iceberg.DataFile, 0, len(files))
	for _, f := range files {
		out = append(out, f.DF)
	}
	return out
}
