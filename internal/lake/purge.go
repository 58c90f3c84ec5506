package lake

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/lake/rowdelta"
)

// PropPurgeHorizon is lakecat.PropPurgeHorizon: the highest `_seq`
// among the soft-deleted rows the tombstone purges removed (hex).
const PropPurgeHorizon = lakecat.PropPurgeHorizon

// DefaultRetentionFloor is the shortest purge retention accepted unless
// configured otherwise: it must exceed Kafka retention and any replay an
// operator would run.
const DefaultRetentionFloor = 7 * 24 * time.Hour

// Purge physically removes the mirror's soft-deleted rows whose delete is
// older than retention (docs/design.md rule 5): the delete's source commit time
// (`_source_ts`, else `_ingested_at`) before now − retention. The removed
// keys and their rows' positions are first appended to the purged-keys
// table; then the rows are removed with one position-delete commit,
// whatever key they belong to (keys never touched again included), and
// the purge horizon is raised in the same commit. It refuses a retention shorter than floor. Only the
// soft-deleted rows' timestamp columns are read.
func (w *MirrorWriter) Purge(ctx context.Context, retention, floor time.Duration) (PurgeResult, error) {
	return w.purge(ctx, retention, floor, false)
}

// PurgeDryRun counts what Purge would remove now (the soft-deleted rows
// whose delete is older than retention) and the horizon it would set,
// without writing anything: no purged-keys rows, no position deletes, no
// commit, no table property; the worker's key index is read, not
// changed. The same errors as Purge.
func (w *MirrorWriter) PurgeDryRun(ctx context.Context, retention, floor time.Duration) (PurgeResult, error) {
	return w.purge(ctx, retention, floor, true)
}

func (w *MirrorWriter) purge(ctx context.Context, retention, floor time.Duration, dryRun bool) (PurgeResult, error) {
	w.state.Settle()
	res := PurgeResult{DryRun: dryRun}
	if floor <= 0 {
		floor = DefaultRetentionFloor
	}
	if retention < floor {
		return res, &RetentionError{Retention: retention, Floor: floor}
	}
	tbl, err := lakecat.LoadTable(ctx, w.cat, w.name.Mirror())
	if err != nil || tbl == nil {
		return res, err
	}
	if !dryRun && !w.ownsPending() {
		if err := w.noBatchBetweenCommits(ctx, tbl); err != nil {
			return res, err
		}
	}
	if err := w.ensureIndex(ctx, tbl); err != nil {
		return res, err
	}
	cutoff := w.now().Add(-retention)
	res.Cutoff = cutoff.UTC().Format(time.RFC3339)
	ix := w.state.Ix
	byFile := map[int32][]int64{}
	keyAt := map[parquetio.RowLoc]cdc.Key{}
	ix.Each(func(k cdc.Key, e keyindex.Entry) {
		if e.Deleted {
			res.Deleted++
			byFile[e.File] = append(byFile[e.File], e.Pos)
			keyAt[parquetio.RowLoc{File: e.File, Pos: e.Pos}] = k
		}
	})
	fs, err := tbl.FS(ctx)
	if err != nil {
		return res, fmt.Errorf("lake: file IO: %w", err)
	}
	var purge []parquetio.RowLoc
	horizon := cdc.Seq("")
	if h := tbl.Properties()[PropPurgeHorizon]; h != "" {
		if horizon, err = cdc.ParseSeqHex(h); err != nil {
			return res, err
		}
	}
	for fid, positions := range byFile {
		path := ix.FilePath(fid)
		slices.Sort(positions)
		old, err := deletedBefore(ctx, fs, path, positions, cutoff.UnixMicro())
		if err != nil {
			return res, err
		}
		for _, pos := range old {
			fp := parquetio.RowLoc{File: fid, Pos: pos}
			purge = append(purge, fp)
			if e, _ := ix.Lookup(keyAt[fp]); e.Seq > horizon {
				horizon = e.Seq
			}
		}
	}
	res.Horizon = horizon.Hex()
	if dryRun {
		res.DryRun, res.Purged = true, len(purge)
		return res, nil
	}
	if len(purge) == 0 {
		return res, nil
	}
	del, err := rowdelta.WriteDeletes(ctx, tbl, w.parts, purge, ix.Files())
	if err != nil {
		return res, err
	}
	tableProps := iceberg.Properties{PropPurgeHorizon: horizon.Hex(), PropLastPurge: w.now().UTC().Format(time.RFC3339Nano)}
	recorded, err := lakecat.LoadTable(ctx, w.cat, w.name.Purged())
	if err != nil {
		return res, err
	}
	if recorded == nil && tbl.Properties()[PropPurgeHorizon] != "" && tbl.Properties()[PropPurgeLegacy] == "" {
		// purges before this one removed keys nobody recorded: keep their rule
		tableProps[PropPurgeLegacy] = tbl.Properties()[PropPurgeHorizon]
	}
	keys, seqs := make([]cdc.Key, len(purge)), make([]cdc.Seq, len(purge))
	for i, fp := range purge {
		keys[i] = keyAt[fp]
		e, _ := ix.Lookup(keys[i])
		seqs[i] = e.Seq
	}
	if err := w.recordPurged(ctx, keys, seqs, w.now()); err != nil {
		return res, err
	}
	props := iceberg.Properties{PropPurgeHorizon: horizon.Hex(), "lakemirror.maintenance": "purge"}
	tx := tbl.NewTransaction()
	rd := tx.NewRowDelta(props).AddDeletes(del.Add...)
	if len(del.Replaced) > 0 {
		rd.RemoveDeletes(del.Replaced...)
	}
	if err := rd.Commit(ctx); err != nil {
		return res, fmt.Errorf("lake: stage purge: %w", err)
	}
	if err := tx.SetProperties(tableProps); err != nil {
		return res, fmt.Errorf("lake: stage purge horizon: %w", err)
	}
	newTbl, err := lakecat.CommitTx(ctx, tbl, tx)
	if err != nil {
		w.state.Invalidate()
		return res, fmt.Errorf("lake: commit purge: %w", err)
	}
	for _, fp := range purge {
		// the key's chain stays (its history records, and its past changes:
		// a late change of the key, re-created, folds them as bronze has them)
		ix.DropMirror(keyAt[fp])
	}
	ix.SnapshotID = newTbl.CurrentSnapshot().SnapshotID
	w.state.MirrorSnap = ix.SnapshotID
	res.Purged, res.SnapshotID = len(purge), ix.SnapshotID
	return res, nil
}

// deletedBefore returns the positions (of the given, sorted) whose delete
// time (`_source_ts`, else `_ingested_at`) is before cutoff (µs).
func deletedBefore(ctx context.Context, fs iceio.IO, path string, positions []int64, cutoff int64) ([]int64, error) {
	p, err := parquetio.Open(fs, path)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	src, ing := p.ColumnIndex(lakecat.ColSourceTs), p.ColumnIndex(lakecat.ColIngestedAt)
	if src < 0 || ing < 0 {
		return nil, fmt.Errorf("lake: %s lacks %s/%s", path, lakecat.ColSourceTs, lakecat.ColIngestedAt)
	}
	var out []int64
	pi := 0
	err = p.Scan(ctx, []int{src, ing}, p.RowGroupsOf(positions), func(rec arrow.RecordBatch, first int64) error {
		s, i := rec.Column(0).(*array.Timestamp), rec.Column(1).(*array.Timestamp)
		end := first + rec.NumRows()
		for pi < len(positions) && positions[pi] < first {
			pi++
		}
		for ; pi < len(positions) && positions[pi] < end; pi++ {
			r := int(positions[pi] - first)
			t := int64(i.Value(r))
			if !s.IsNull(r) {
				t = int64(s.Value(r))
			}
			if t < cutoff {
				out = append(out, positions[pi])
			}
		}
		return nil
	})
	return out, err
}

// noBatchBetweenCommits returns ErrBatchBetweenCommits when the mirror
// holds a batch its history does not (batchBetweenCommits; a worker
// stopped between the two commits, the batch not yet retried): a purge
// then would take the retried batch's changes of a key it removes for
// changes that could resurrect a purged row, and their history versions
// would be lost. Errors: also catalog failures and malformed bookkeeping.
func (w *MirrorWriter) noBatchBetweenCommits(ctx context.Context, mirror *table.Table) error {
	history, err := lakecat.LoadTable(ctx, w.cat, w.name.History())
	if err != nil || history == nil {
		return err
	}
	between, err := batchBetweenCommits(mirror, history)
	if err != nil || !between {
		return err
	}
	return ErrBatchBetweenCommits
}

// batchBetweenCommits reports whether the mirror holds a batch the
// history does not: the history's checkpoint is at a lower batch seq, or
// at the same seq under another batch id (a crash between the two
// commits). Errors: malformed bookkeeping.
func batchBetweenCommits(mirror, history *table.Table) (bool, error) {
	mcp, err := ReadCheckpoint(mirror)
	if err != nil {
		return false, err
	}
	hcp, err := ReadCheckpoint(history)
	if err != nil {
		return false, err
	}
	return hcp.BatchSeq < mcp.BatchSeq || hcp.BatchID != mcp.BatchID && hcp.BatchSeq == mcp.BatchSeq, nil
}
