package lake

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
	"github.com/lakemirror/lakemirror/internal/lake/localstate"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/lake/rowdelta"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
	"github.com/lakemirror/lakemirror/internal/merge"
)

// commitRows writes the outcomes' files (see writeRows) and commits them
// (see commitFiles). It returns each outcome's resolved values.
func (w *MirrorWriter) commitRows(ctx context.Context, tbl *table.Table, sh *tablestate.Shape, entries []uint32, outs []merge.Outcome, stored map[cdc.Key]*cdc.Row,
	props func() (iceberg.Properties, error), res *MirrorResult) ([]*cdc.Row, error) {
	f, err := w.writeRows(ctx, tbl, sh, entries, outs, stored, res)
	if err != nil {
		return nil, err
	}
	return f.resolved, w.commitFiles(ctx, tbl, entries, outs, f, props, res)
}

// mirrorFiles are a batch's mirror files, written and not yet committed.
type mirrorFiles struct {
	data     []rowdelta.FileOut     // one per partition (one for an unpartitioned table)
	locs     []rowdelta.RowLocation // where outcome i's row landed in data
	deletes  rowdelta.DeleteSet     // one position-delete file per partition of the replaced rows' files, or their deletion vectors
	resolved []*cdc.Row             // each outcome's values, placeholders filled
}

// writeRows writes the outcomes' rows (values kept from stored where the
// outcome says so) as one data file per partition of the table's spec
// (rowdelta.WriteRecord) and the rows they replace (found through entries[i],
// outs[i]'s index entry) as one position-delete file per partition of
// their files (rowdelta.WriteDeletes), and fills the per-kind counts of res. It
// only reads the index.
func (w *MirrorWriter) writeRows(ctx context.Context, tbl *table.Table, sh *tablestate.Shape, entries []uint32, outs []merge.Outcome, stored map[cdc.Key]*cdc.Row,
	res *MirrorResult) (mirrorFiles, error) {
	var f mirrorFiles
	if len(outs) == 0 {
		return f, nil
	}
	ix := w.state.Ix
	rec, vals, err := w.buildRows(tbl, sh, outs, stored, res)
	if err != nil {
		return f, err
	}
	f.resolved = vals
	f.data, f.locs, err = rowdelta.WriteRecord(ctx, tbl, "mirror", rec)
	rec.Release()
	if err != nil {
		return f, err
	}
	var dels []parquetio.RowLoc
	for i, o := range outs {
		if o.Replaces {
			fid, p := ix.LocAt(entries[i])
			dels = append(dels, parquetio.RowLoc{File: fid, Pos: p})
		}
	}
	if f.deletes, err = rowdelta.WriteDeletes(ctx, tbl, w.parts, dels, ix.Files()); err != nil {
		return f, err
	}
	res.RowsWritten, res.PositionDeletes = len(outs), len(dels)
	return f, nil
}

// commitFiles publishes written files with the properties props returns
// (called once the counts in res are final) in one commit, then moves the
// key index entries.
func (w *MirrorWriter) commitFiles(ctx context.Context, tbl *table.Table, entries []uint32, outs []merge.Outcome, f mirrorFiles,
	props func() (iceberg.Properties, error), res *MirrorResult) error {
	p, err := props()
	if err != nil {
		return err
	}
	newTbl, snap, err := rowdelta.CommitRowDelta(ctx, tbl, "mirror", rowdelta.DataFiles(f.data), f.deletes, p)
	if err != nil {
		w.state.Invalidate() // the table may or may not have moved: rebuild next time
		return err
	}
	ix := w.state.Ix
	if len(f.data) > 0 {
		w.parts.Add(f.data)
		fids := make([]int32, len(f.data))
		for i, d := range f.data {
			fids[i] = ix.FileID(d.DF.FilePath())
		}
		for i, o := range outs {
			l := f.locs[i]
			ix.SetAt(entries[i], o.Seq, o.Deleted, fids[l.File], l.Pos)
		}
		res.SnapshotID = snap
	}
	ix.SnapshotID = lakecat.SnapID(newTbl) // after a manifest merge the commit made due: the state follows the table
	w.state.MirrorSnap = ix.SnapshotID
	return nil
}

// storedValuesFor reads the stored rows whose values a new version keeps:
// deletes without values, and TOAST placeholders. They come from the
// local state log (see State), never from the table.
func (w *MirrorWriter) storedValuesFor(ctx context.Context, tbl *table.Table, sh *tablestate.Shape, outs []merge.Outcome) (map[cdc.Key]*cdc.Row, error) {
	var keys []cdc.Key
	for _, o := range outs {
		if !o.Replaces {
			continue
		}
		if o.ValuesFromStored || localstate.HasUnavailable(o.Values) {
			keys = append(keys, o.Key)
		}
	}
	return w.storedRows(ctx, tbl, sh, keys)
}

// storedRows returns the stored mirror values of keys (each must have a
// mirror row), from the local state log; keys the log has no values for
// (never expected) are read from the table.
func (w *MirrorWriter) storedRows(ctx context.Context, tbl *table.Table, sh *tablestate.Shape, keys []cdc.Key) (map[cdc.Key]*cdc.Row, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	out := make(map[cdc.Key]*cdc.Row, len(keys))
	var missing []cdc.Key
	for _, k := range keys {
		r, err := w.state.MirrorValues(k, sh)
		if err != nil {
			return nil, err
		}
		if r == nil {
			missing = append(missing, k)
			continue
		}
		out[k] = r
	}
	if len(missing) > 0 {
		fs, err := tbl.FS(ctx)
		if err != nil {
			return nil, fmt.Errorf("lake: file IO: %w", err)
		}
		rows, err := tablestate.ReadStoredRows(ctx, fs, w.state.Ix, sh, missing)
		if err != nil {
			return nil, err
		}
		for k, r := range rows {
			out[k] = r
		}
	}
	return out, nil
}

// buildRows turns the outcomes into one Arrow record in the table's
// schema, in outcome (key) order, and fills the per-kind counts.
func (w *MirrorWriter) buildRows(tbl *table.Table, sh *tablestate.Shape, outs []merge.Outcome, stored map[cdc.Key]*cdc.Row, res *MirrorResult) (arrow.RecordBatch, []*cdc.Row, error) {
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return nil, nil, fmt.Errorf("lake: arrow schema: %w", err)
	}
	resolved := make([]*cdc.Row, len(outs))
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Reserve(len(outs))
	n := len(sh.Cols)
	field := func(name string) array.Builder { return b.Field(sc.FieldIndices(name)[0]) }
	srcB := make([]array.Builder, n)
	for c, col := range sh.Cols {
		srcB[c] = field(col.Name)
	}
	seqB := field(lakecat.ColSeq).(*array.StringBuilder)
	delB := field(sh.SoftDelete).(*array.BooleanBuilder)
	tsB := field(lakecat.ColSourceTs).(*array.TimestampBuilder)
	ingB := field(lakecat.ColIngestedAt).(*array.TimestampBuilder)
	now := w.now().UnixMicro()
	parquetio.ReserveValueData(srcB, len(outs), func(i int) []cdc.Value {
		if o := &outs[i]; o.ValuesFromStored {
			if r := stored[o.Key]; r != nil {
				return r.Vals
			}
		} else if o.Values != nil {
			return o.Values.Vals
		}
		return nil
	})
	seqBytes := 0
	for i := range outs {
		seqBytes += 2 * len(outs[i].Seq)
	}
	seqB.ReserveData(seqBytes)
	var hx parquetio.HexScratch
	var watermark cdc.Seq
	for i, o := range outs {
		vals := o.Values
		old := stored[o.Key]
		if o.ValuesFromStored {
			vals = old
		}
		row := vals
		if vals == nil || vals.Cols.Len() != n {
			row = &cdc.Row{Cols: sh.Names, Vals: make([]cdc.Value, n)}
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
				} else {
					res.UnknownPlaceholders++
				}
				if row == vals {
					row = &cdc.Row{Cols: vals.Cols, Vals: append([]cdc.Value(nil), vals.Vals...)}
				}
			}
			if row != vals { // vals is shared with the history writer, which reads it concurrently
				row.Vals[c] = v
			}
			if err := parquetio.AppendValue(srcB[c], v); err != nil {
				return nil, nil, fmt.Errorf("lake: key %x column %q: %w", string(o.Key), sh.Cols[c].Name, err)
			}
		}
		resolved[i] = row
		hx.Append(seqB, string(o.Seq))
		delB.Append(o.Deleted)
		parquetio.AppendSourceTs(tsB, o.SourceTs)
		ingB.Append(parquetio.Timestamp(now))
		switch {
		case o.Deleted:
			res.Deleted++
		case o.Replaces:
			res.Updated++
		default:
			res.Inserted++
		}
		if o.Seq > watermark { // byte order is the order of the hex text
			watermark = o.Seq
		}
		res.MaxSourceTs = max(res.MaxSourceTs, o.SourceTs)
	}
	if h := watermark.Hex(); h > res.Watermark {
		res.Watermark = h
	}
	return b.NewRecordBatch(), resolved, nil
}
