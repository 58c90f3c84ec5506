package lake

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/merge"
)

// commitRows writes the outcomes' rows (values kept from stored where the
// outcome says so) and the position deletes of the rows they replace, and
// publishes them with the properties props returns (called once the
// counts in res are final) in one commit; then moves the index.
func (w *MirrorWriter) commitRows(ctx context.Context, tbl *table.Table, sh *shape, outs []merge.Outcome, stored map[cdc.Key]*cdc.Row,
	props func() (iceberg.Properties, error), res *MirrorResult) error {
	var dataFile, delFile iceberg.DataFile
	var dels []filePos
	if len(outs) > 0 {
		rec, err := w.buildRows(tbl, sh, outs, stored, res)
		if err != nil {
			return err
		}
		dataFile, err = writeDataFile(ctx, tbl, "mirror", rec)
		rec.Release()
		if err != nil {
			return err
		}
		for _, o := range outs {
			if o.Replaces {
				e, _ := w.index.Lookup(o.Key)
				dels = append(dels, filePos{path: w.index.FilePath(e.File), pos: e.Pos})
			}
		}
		if len(dels) > 0 {
			if delFile, err = writePositionDeletes(ctx, tbl, dels); err != nil {
				return err
			}
		}
		res.RowsWritten, res.PositionDeletes = len(outs), len(dels)
	}
	p, err := props()
	if err != nil {
		return err
	}
	newTbl, err := commitRowDelta(ctx, tbl, "mirror", dataFile, delFile, p)
	if err != nil {
		w.index = nil // the table may or may not have moved: rebuild next time
		return err
	}
	if dataFile != nil {
		fid := w.index.fileID(dataFile.FilePath())
		for i, o := range outs {
			w.index.set(o.Key, o.Seq, o.Deleted, fid, int64(i))
		}
		w.index.SnapshotID = newTbl.CurrentSnapshot().SnapshotID
		res.SnapshotID = w.index.SnapshotID
	}
	return nil
}

// storedValuesFor reads the stored rows whose values a new version keeps:
// deletes without values, and TOAST placeholders.
func (w *MirrorWriter) storedValuesFor(ctx context.Context, tbl *table.Table, sh *shape, outs []merge.Outcome) (map[cdc.Key]*cdc.Row, error) {
	var keys []cdc.Key
	for _, o := range outs {
		if !o.Replaces {
			continue
		}
		if o.ValuesFromStored || hasUnavailable(o.Values) {
			keys = append(keys, o.Key)
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("lake: file IO: %w", err)
	}
	return readStoredRows(ctx, fs, w.index, sh, keys)
}

func hasUnavailable(r *cdc.Row) bool {
	if r == nil {
		return false
	}
	for _, v := range r.Vals {
		if v.Kind == cdc.KindUnavailable {
			return true
		}
	}
	return false
}

// buildRows turns the outcomes into one Arrow record in the table's
// schema, in outcome (key) order, and fills the per-kind counts.
func (w *MirrorWriter) buildRows(tbl *table.Table, sh *shape, outs []merge.Outcome, stored map[cdc.Key]*cdc.Row, res *MirrorResult) (arrowRecord, error) {
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("lake: arrow schema: %w", err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Reserve(len(outs))
	n := len(sh.cols)
	field := func(name string) array.Builder { return b.Field(sc.FieldIndices(name)[0]) }
	srcB := make([]array.Builder, n)
	for c, col := range sh.cols {
		srcB[c] = field(col.Name)
	}
	seqB := field(ColSeq).(*array.StringBuilder)
	delB := field(ColDeleted).(*array.BooleanBuilder)
	tsB := field(ColSourceTs).(*array.TimestampBuilder)
	ingB := field(ColIngestedAt).(*array.TimestampBuilder)
	now := w.now().UnixMicro()
	for _, o := range outs {
		vals := o.Values
		old := stored[o.Key]
		if o.ValuesFromStored {
			vals = old
		}
		for c := 0; c < n; c++ {
			var v cdc.Value
			if vals != nil {
				v = vals.Vals[c]
			}
			if v.Kind == cdc.KindUnavailable {
				v = cdc.Null()
				if old != nil {
					v = old.Vals[c]
				}
			}
			if err := appendValue(srcB[c], v); err != nil {
				return nil, fmt.Errorf("lake: key %x column %q: %w", string(o.Key), sh.cols[c].Name, err)
			}
		}
		seqB.Append(o.Seq.Hex())
		delB.Append(o.Deleted)
		appendSourceTs(tsB, o.SourceTs)
		ingB.Append(arrowTimestamp(now))
		switch {
		case o.Deleted:
			res.Deleted++
		case o.Replaces:
			res.Updated++
		default:
			res.Inserted++
		}
		if h := o.Seq.Hex(); h > res.Watermark {
			res.Watermark = h
		}
		res.MaxSourceTs = max(res.MaxSourceTs, o.SourceTs)
	}
	return b.NewRecordBatch(), nil
}
