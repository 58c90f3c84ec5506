package lake

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/merge"
)

// keyedVersion is a version to write for a key.
type keyedVersion struct {
	key cdc.Key
	v   merge.Version
}

// keyedRow is a stored history row of a key (to remove).
type keyedRow struct {
	key cdc.Key
	row histRow
}

// version turns a stored row and its values back into a merge.Version.
func (h *histRow) version(vals *cdc.Row) *merge.Version {
	return &merge.Version{Seq: h.seq, From: h.from, ToSeq: h.toSeq, To: h.to, Values: vals, Hash: h.hash, OpenTx: h.tx}
}

// ensureIndex makes w.index reflect tbl's current snapshot.
func (w *HistoryWriter) ensureIndex(ctx context.Context, tbl *table.Table) error {
	var cur int64
	if s := tbl.CurrentSnapshot(); s != nil {
		cur = s.SnapshotID
	}
	if w.index != nil && w.index.SnapshotID == cur {
		return nil
	}
	ix, err := BuildHistoryIndex(ctx, tbl, w.keyCols)
	if err != nil {
		return err
	}
	w.index = ix
	return nil
}

// readVersionValues reads the source-column values of each key's latest
// stored version.
func (w *HistoryWriter) readVersionValues(ctx context.Context, tbl *table.Table, sh *shape, keys []cdc.Key) (map[cdc.Key]*cdc.Row, error) {
	out := map[cdc.Key]*cdc.Row{}
	if len(keys) == 0 {
		return out, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("lake: file IO: %w", err)
	}
	byFile := map[int32]map[int64]cdc.Key{}
	for _, k := range keys {
		vs := w.index.Versions(k)
		last := vs[len(vs)-1]
		if byFile[last.file] == nil {
			byFile[last.file] = map[int64]cdc.Key{}
		}
		byFile[last.file][last.pos] = k
	}
	for fid, want := range byFile {
		positions := make([]int64, 0, len(want))
		for p := range want {
			positions = append(positions, p)
		}
		slices.Sort(positions)
		if err := readRowsAt(ctx, fs, w.index.files[fid], sh, positions, func(pos int64, row *cdc.Row) {
			out[want[pos]] = row
		}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readPending returns the table's pending-rebuild keys.
func readPending(tbl *table.Table) (map[cdc.Key]bool, error) {
	out := map[cdc.Key]bool{}
	t := tbl.Properties()[PropPendingRebuild]
	if t == "" {
		return out, nil
	}
	var hexKeys []string
	if err := json.Unmarshal([]byte(t), &hexKeys); err != nil {
		return nil, fmt.Errorf("lake: bad %s: %w", PropPendingRebuild, err)
	}
	for _, h := range hexKeys {
		b, err := hex.DecodeString(h)
		if err != nil {
			return nil, fmt.Errorf("lake: bad key %q in %s: %w", h, PropPendingRebuild, err)
		}
		out[cdc.Key(b)] = true
	}
	return out, nil
}

func pendingJSON(p map[cdc.Key]bool) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, hex.EncodeToString([]byte(k)))
	}
	sort.Strings(keys)
	b, _ := json.Marshal(keys)
	return string(b)
}

// commit writes versions and removes stored rows in one row delta, with
// props (plus the pending set, and the result JSON under PropBatchResult
// when result is set) in the same commit, then updates the index.
func (w *HistoryWriter) commit(ctx context.Context, tbl *table.Table, sh *shape, writes []keyedVersion, removed []keyedRow,
	props iceberg.Properties, pending map[cdc.Key]bool, result func() (string, error), rowsWritten, posDeletes *int, snapshotID *int64) error {
	var dataFile, delFile iceberg.DataFile
	*rowsWritten, *posDeletes = len(writes), len(removed)
	if len(writes) > 0 {
		rec, err := buildHistoryRows(tbl, sh, writes)
		if err != nil {
			return err
		}
		dataFile, err = writeDataFile(ctx, tbl, "history", rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	if len(removed) > 0 {
		dels := make([]filePos, len(removed))
		for i, r := range removed {
			dels[i] = filePos{path: w.index.files[r.row.file], pos: r.row.pos}
		}
		var err error
		if delFile, err = writePositionDeletes(ctx, tbl, dels); err != nil {
			return err
		}
	}
	props[PropPendingRebuild] = pendingJSON(pending)
	if result != nil {
		r, err := result()
		if err != nil {
			return err
		}
		props[PropBatchResult] = r
	}
	newTbl, err := commitRowDelta(ctx, tbl, "history", dataFile, delFile, props)
	if err != nil {
		w.index = nil
		return err
	}
	if dataFile == nil && delFile == nil {
		return nil
	}
	for _, r := range removed {
		vs := w.index.keys[r.key]
		vs = slices.DeleteFunc(vs, func(h histRow) bool { return h.file == r.row.file && h.pos == r.row.pos })
		if len(vs) == 0 {
			delete(w.index.keys, r.key)
		} else {
			w.index.keys[r.key] = vs
		}
	}
	if dataFile != nil {
		fid := w.index.fileID(dataFile.FilePath())
		for i, kv := range writes {
			v := kv.v
			w.index.keys[kv.key] = append(w.index.keys[kv.key], histRow{seq: v.Seq, toSeq: v.ToSeq, from: v.From, to: v.To,
				hash: v.Hash, tx: v.OpenTx, file: fid, pos: int64(i)})
		}
		for _, kv := range writes {
			vs := w.index.keys[kv.key]
			slices.SortFunc(vs, func(a, b histRow) int { return a.seq.Compare(b.seq) })
		}
	}
	w.index.SnapshotID = newTbl.CurrentSnapshot().SnapshotID
	*snapshotID = w.index.SnapshotID
	return nil
}

// buildHistoryRows turns versions into one Arrow record in the history
// table's schema, in the given order.
func buildHistoryRows(tbl *table.Table, sh *shape, writes []keyedVersion) (arrowRecord, error) {
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("lake: arrow schema: %w", err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Reserve(len(writes))
	field := func(name string) array.Builder { return b.Field(sc.FieldIndices(name)[0]) }
	src := make([]array.Builder, len(sh.cols))
	for c, col := range sh.cols {
		src[c] = field(col.Name)
	}
	seqB := field(ColSeq).(*array.StringBuilder)
	fromB := field(ColValidFrom).(*array.TimestampBuilder)
	toB := field(ColValidTo).(*array.TimestampBuilder)
	toSeqB := field(ColValidToSeq).(*array.StringBuilder)
	curB := field(ColIsCurrent).(*array.BooleanBuilder)
	hashB := field(ColRowHash).(*array.StringBuilder)
	txB := field(ColSourceTx).(*array.StringBuilder)
	for _, kv := range writes {
		v := kv.v
		for c := range sh.cols {
			val := cdc.Null()
			if v.Values != nil {
				if x, ok := v.Values.Get(sh.cols[c].Name); ok && x.Kind != cdc.KindUnavailable {
					val = x
				}
			}
			if err := appendValue(src[c], val); err != nil {
				return nil, fmt.Errorf("lake: history key %x column %q: %w", string(kv.key), sh.cols[c].Name, err)
			}
		}
		seqB.Append(v.Seq.Hex())
		appendSourceTs(fromB, v.From)
		if v.Current() {
			toB.AppendNull()
			toSeqB.AppendNull()
		} else {
			appendSourceTs(toB, v.To)
			toSeqB.Append(v.ToSeq.Hex())
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
