package scd2

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/lake/rowdelta"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
	"github.com/lakemirror/lakemirror/internal/merge"
)

// lastClosedVersion reads key k's latest stored version (closed: the key
// has no open version) with its values from the history table, for a
// TOAST placeholder that takes its value. It returns nil when the key has
// no history.
func (w *HistoryWriter) lastClosedVersion(ctx context.Context, tbl *table.Table, sh *tablestate.Shape, k cdc.Key) (*merge.Version, parquetio.RowLoc, error) {
	rows, err := w.state.LiveRows(k)
	if err != nil || len(rows) == 0 {
		return nil, parquetio.RowLoc{}, err
	}
	last := rows[len(rows)-1]
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, parquetio.RowLoc{}, fmt.Errorf("lake: file IO: %w", err)
	}
	var vals *cdc.Row
	if err := tablestate.ReadRowsAt(ctx, fs, w.state.HFiles[last.File], sh, []int64{last.Pos}, func(_ int64, row *cdc.Row) { vals = row }); err != nil {
		return nil, parquetio.RowLoc{}, err
	}
	return last.Version(vals), parquetio.RowLoc{File: last.File, Pos: last.Pos}, nil
}

// commit writes versions and removes stored rows in one row delta, with
// props (plus the pending set, and the result JSON under lakecat.PropBatchResult
// when result is set) in the same commit. It returns where each of
// writes landed (commitFiles).
func (w *HistoryWriter) commit(ctx context.Context, tbl *table.Table, sh *tablestate.Shape, writes []tablestate.KeyedVersion, removed []parquetio.RowLoc,
	props iceberg.Properties, pending map[cdc.Key]bool, result func() (string, error), rowsWritten, posDeletes *int, snapshotID *int64) ([]parquetio.RowLoc, error) {
	*rowsWritten, *posDeletes = len(writes), len(removed)
	hw, err := w.writeFiles(ctx, tbl, sh, writes, removed)
	if err != nil {
		return nil, err
	}
	props[PropPendingRebuild] = lakecat.PendingJSON(pending)
	if result != nil {
		r, err := result()
		if err != nil {
			return nil, err
		}
		props[lakecat.PropBatchResult] = r
	}
	return w.commitFiles(ctx, tbl, hw, props, snapshotID)
}

// writeFiles writes versions as one data file per partition (writes[i]
// at hw.locs[i]) and the stored rows removed as one position-delete file
// per partition; none when there is nothing to write. It only reads the
// local state.
func (w *HistoryWriter) writeFiles(ctx context.Context, tbl *table.Table, sh *tablestate.Shape, writes []tablestate.KeyedVersion, removed []parquetio.RowLoc) (historyWritten, error) {
	hf := newHistoryFile(ctx, tbl, sh)
	hf.queue(writes)
	return w.finishFiles(ctx, tbl, hf, removed)
}

// finishFiles writes the stored rows removed as position-delete files
// while hf encodes what was queued to it, then waits for hf's data files.
// On error hf is stopped.
func (w *HistoryWriter) finishFiles(ctx context.Context, tbl *table.Table, hf *historyFile, removed []parquetio.RowLoc) (historyWritten, error) {
	defer hf.abort() // a no-op once finished
	var hw historyWritten
	var err error
	if hw.deletes, err = rowdelta.WriteDeletes(ctx, tbl, w.parts, removed, w.state.HFiles); err != nil {
		return hw, err
	}
	if hw.data, hw.locs, err = hf.finish(); err != nil {
		return hw, err
	}
	return hw, nil
}

// commitFiles publishes written files with props in one commit. It
// returns each written version's location in the local state's history
// file table (nil: none written).
func (w *HistoryWriter) commitFiles(ctx context.Context, tbl *table.Table, hw historyWritten, props iceberg.Properties, snapshotID *int64) ([]parquetio.RowLoc, error) {
	newTbl, snap, err := rowdelta.CommitRowDelta(ctx, tbl, "history", rowdelta.DataFiles(hw.data), hw.deletes, props)
	if err != nil {
		w.state.Invalidate()
		return nil, err
	}
	w.state.HistorySnap = lakecat.SnapID(newTbl)
	if len(hw.data) == 0 && len(hw.deletes.Add) == 0 {
		return nil, nil
	}
	*snapshotID = snap
	if len(hw.data) == 0 {
		return nil, nil
	}
	w.parts.Add(hw.data)
	fids := make([]int32, len(hw.data))
	for i, d := range hw.data {
		fids[i] = w.state.HFileID(d.DF.FilePath())
	}
	locs := make([]parquetio.RowLoc, len(hw.locs))
	for i, l := range hw.locs {
		locs[i] = parquetio.RowLoc{File: fids[l.File], Pos: l.Pos}
	}
	return locs, nil
}

// buildHistoryRows turns versions into one Arrow record in the history
// table's schema, in the given order.
func buildHistoryRows(tbl *table.Table, sh *tablestate.Shape, writes []tablestate.KeyedVersion) (arrow.RecordBatch, error) {
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("lake: arrow schema: %w", err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Reserve(len(writes))
	field := func(name string) array.Builder { return b.Field(sc.FieldIndices(name)[0]) }
	src := make([]array.Builder, len(sh.Cols))
	for c, col := range sh.Cols {
		src[c] = field(col.Name)
	}
	seqB := field(lakecat.ColSeq).(*array.StringBuilder)
	fromB := field(lakecat.ColValidFrom).(*array.TimestampBuilder)
	toB := field(lakecat.ColValidTo).(*array.TimestampBuilder)
	toSeqB := field(lakecat.ColValidToSeq).(*array.StringBuilder)
	curB := field(lakecat.ColIsCurrent).(*array.BooleanBuilder)
	hashB := field(lakecat.ColRowHash).(*array.StringBuilder)
	txB := field(lakecat.ColSourceTx).(*array.StringBuilder)
	parquetio.ReserveValueData(src, len(writes), func(i int) []cdc.Value { return tablestate.AlignedVals(writes[i].V.Values, sh.Names) })
	var seqBytes, toSeqBytes, hashBytes int
	for _, kv := range writes {
		seqBytes += 2 * len(kv.V.Seq)
		toSeqBytes += 2 * len(kv.V.ToSeq)
		hashBytes += len(kv.V.Hash)
	}
	seqB.ReserveData(seqBytes)
	toSeqB.ReserveData(toSeqBytes)
	hashB.ReserveData(hashBytes)
	var hx parquetio.HexScratch
	for _, kv := range writes {
		v := kv.V
		vals := tablestate.AlignedVals(v.Values, sh.Names)
		for c := range sh.Cols {
			val := cdc.Null()
			if vals != nil {
				if x := vals[c]; x.Kind != cdc.KindUnavailable {
					val = x
				}
			}
			if err := parquetio.AppendValue(src[c], val); err != nil {
				return nil, fmt.Errorf("lake: history key %x column %q: %w", string(kv.Key), sh.Cols[c].Name, err)
			}
		}
		hx.Append(seqB, string(v.Seq))
		parquetio.AppendSourceTs(fromB, v.From)
		if v.Current() {
			toB.AppendNull()
			toSeqB.AppendNull()
		} else {
			parquetio.AppendSourceTs(toB, v.To)
			hx.Append(toSeqB, string(v.ToSeq))
		}
		curB.Append(v.Current())
		hashB.Append(v.Hash)
		if v.OpenTx == "" {
			txB.AppendNull()
		} else {
			txB.Append(v.OpenTx)
		}
	}
	return b.NewRecordBatch(), nil
}
