package lake

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/lake/rowdelta"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// BronzeRecord is one Kafka record as the bronze table stores it
// (tableread.BronzeRow: the record as received and what decoding found);
// BronzeRow is the same record read back.
type (
	BronzeRecord = tableread.BronzeRow
	BronzeRow    = tableread.BronzeRow
)

// BronzeHeader is one Kafka record header (payload.Header).
type BronzeHeader = payload.Header

// AppendBronze appends the batch's records that the bronze table does not
// already hold (by topic, partition, offset; tracked as covered offset
// ranges in the table properties) in one commit, and marks the batch's
// whole ranges covered. Records the table holds are skipped, so retries
// and backfills never duplicate bronze rows. It creates the table on first
// use, with the default bronze layout (layout.DefaultBronze). It is
// StageBronze then BronzeStage.Commit. Errors: catalog and file
// IO failures and commit conflicts (all retryable).
func AppendBronze(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, b Batch, recs []BronzeRecord) (BronzeResult, error) {
	st, err := StageBronze(ctx, cat, name, b, recs, layout.Tables{}.BronzeSpec())
	if err != nil {
		return st.res, err
	}
	return st.Commit(ctx)
}

// BronzeStage is a batch's bronze data file, written and not yet
// committed (StageBronze).
type BronzeStage struct {
	tbl   *table.Table
	b     Batch
	res   BronzeResult
	done  bool // nothing to commit: res is final
	props iceberg.Properties
	files []iceberg.DataFile
	fresh int
}

// StageBronze does the work of AppendBronze up to the commit: it creates
// the table when needed, finds the records the table does not hold and
// writes them as one data file. It only reads the table, so it can run
// while the batch's mirror and history files are being written. Errors:
// catalog and file IO failures.
//
// lay is bronze's layout (layout.Tables.BronzeSpec).
func StageBronze(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, b Batch, recs []BronzeRecord, lay layout.Spec) (*BronzeStage, error) {
	st := &BronzeStage{b: b, res: BronzeResult{BatchID: b.ID, BatchSeq: b.Seq, Records: len(recs)}}
	tbl, _, err := lakecat.LoadOrCreateLaid(ctx, cat, name.NamespaceIdent(), name.Bronze(),
		func() (*iceberg.Schema, error) { return lakecat.BronzeSchema(), nil }, lakecat.TableProperties(nil), &lay)
	if err != nil {
		return st, err
	}
	st.tbl = tbl
	covAll, err := lakecat.ReadCoverage(tbl)
	if err != nil {
		return st, err
	}
	cov := covAll[b.Topic].Clone()
	if cov == nil {
		cov = lakecat.Coverage{}
	}
	fresh := make([]BronzeRecord, 0, len(recs))
	for _, r := range recs {
		if cov.Contains(r.Partition, r.Offset) {
			st.res.Skipped++
			continue
		}
		fresh = append(fresh, r)
	}
	covered := true
	for _, rg := range b.Ranges {
		if !coversRange(cov, rg) {
			covered = false
		}
		cov.Add(rg.Partition, rg.From, rg.To)
	}
	if covered && len(fresh) == 0 {
		// everything already there: nothing to commit. A retry of the batch
		// that appended it reports that commit's counts.
		st.done = true
		if cp, err := ReadCheckpoint(tbl); err == nil && b.Load == nil && b.Seq > 0 {
			var rec BronzeResult
			if lakecat.RecordedResult(cp, b, &rec) && rec.BatchID == b.ID {
				st.res = rec
			}
		}
		return st, nil
	}
	covAll[b.Topic] = cov
	covJSON, err := json.Marshal(covAll)
	if err != nil {
		return st, err
	}
	st.res.Appended = len(fresh)
	if st.props, err = lakecat.BatchProps(b, st.res); err != nil {
		return st, err
	}
	st.props[lakecat.PropCovered] = string(covJSON)
	var truncs []truncateMark
	for _, r := range fresh {
		if r.Op == "t" && r.Seq != "" { // Debezium op t as received
			truncs = append(truncs, truncateMark{Seq: r.Seq.Hex(), Ts: r.SourceTs})
		}
	}
	if js, ok, err := mergeTruncates(tbl, truncs); err != nil {
		return st, err
	} else if ok {
		st.props[PropTruncates] = js
	}
	st.fresh = len(fresh)
	if len(fresh) > 0 {
		if st.files, err = writeBronzeFile(ctx, tbl, b, fresh); err != nil {
			return st, err
		}
	}
	return st, nil
}

// Commit publishes the staged file and the batch's bookkeeping in one
// commit. Errors: commit failures, including conflicts (retryable).
func (st *BronzeStage) Commit(ctx context.Context) (BronzeResult, error) {
	if st.done {
		return st.res, nil
	}
	_, snap, err := rowdelta.CommitRowDelta(ctx, st.tbl, "bronze batch "+st.b.ID, st.files, rowdelta.DeleteSet{}, st.props)
	if err != nil {
		return st.res, err
	}
	if snap != 0 && st.fresh > 0 {
		st.res.SnapshotID = snap
	}
	st.done = true
	return st.res, nil
}

func coversRange(cov lakecat.Coverage, rg Range) bool {
	if rg.From >= rg.To {
		return true
	}
	for _, r := range cov[rg.Partition] {
		if r[0] <= rg.From && rg.To <= r[1] {
			return true
		}
	}
	return false
}

// writeBronzeFile writes the records as one data file of the bronze table.
// The raw values go to their column once, through a reused buffer
// (parquetio.BinaryColumn); the other columns through Arrow builders.
func writeBronzeFile(ctx context.Context, tbl *table.Table, b Batch, recs []BronzeRecord) ([]iceberg.DataFile, error) {
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("lake: bronze arrow schema: %w", err)
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer rb.Release()
	rb.Reserve(len(recs))
	f := func(name string) array.Builder { return rb.Field(sc.FieldIndices(name)[0]) }
	topicB := f(lakecat.BronzeTopic).(*array.StringBuilder)
	partB := f(lakecat.BronzePartition).(*array.Int32Builder)
	offB := f(lakecat.BronzeOffset).(*array.Int64Builder)
	keyB := f(lakecat.BronzeKey).(*array.BinaryBuilder)
	tsB := f(lakecat.BronzeTimestamp).(*array.TimestampBuilder)
	hdrB := f(lakecat.BronzeHeaders).(*array.ListBuilder)
	hdrStruct := hdrB.ValueBuilder().(*array.StructBuilder)
	hdrKey := hdrStruct.FieldBuilder(0).(*array.StringBuilder)
	hdrVal := hdrStruct.FieldBuilder(1).(*array.BinaryBuilder)
	opB := f(lakecat.BronzeOp).(*array.StringBuilder)
	seqB := f(lakecat.ColSeq).(*array.StringBuilder)
	srcTsB := f(lakecat.ColSourceTs).(*array.TimestampBuilder)
	ingB := f(lakecat.ColIngestedAt).(*array.TimestampBuilder)
	pkB := f(lakecat.ColKey).(*array.StringBuilder)
	valueCol := sc.FieldIndices(lakecat.BronzeValue)[0]
	if sc.Field(valueCol).Type.ID() != arrow.BINARY {
		return nil, fmt.Errorf("lake: bronze column %s is %s, not binary", lakecat.BronzeValue, sc.Field(valueCol).Type)
	}
	values, releaseValues, err := parquetio.BinaryColumn(len(recs), func(i int) []byte { return recs[i].Value })
	if err != nil {
		return nil, err
	}
	defer releaseValues()
	var keyBytes, seqBytes, pkBytes int
	for _, r := range recs {
		keyBytes += len(r.Key)
		seqBytes += 2 * len(r.Seq)
		pkBytes += 2 * len(r.PK)
	}
	keyB.ReserveData(keyBytes)
	seqB.ReserveData(seqBytes)
	pkB.ReserveData(pkBytes)
	topicB.ReserveData(len(b.Topic) * len(recs))
	var hx parquetio.HexScratch
	now := parquetio.Timestamp(ingestClock().UnixMicro())
	for _, r := range recs {
		topicB.Append(b.Topic)
		partB.Append(r.Partition)
		offB.Append(r.Offset)
		if r.Key == nil {
			keyB.AppendNull()
		} else {
			keyB.Append(r.Key)
		}
		tsB.Append(parquetio.Timestamp(r.Timestamp))
		hdrB.Append(true)
		for _, h := range r.Headers {
			hdrStruct.Append(true)
			hdrKey.Append(h.Key)
			if h.Value == nil {
				hdrVal.AppendNull()
			} else {
				hdrVal.Append(h.Value)
			}
		}
		if r.Op == "" {
			opB.AppendNull()
		} else {
			opB.Append(r.Op)
		}
		if r.Seq == "" {
			seqB.AppendNull()
			srcTsB.AppendNull()
		} else {
			hx.Append(seqB, string(r.Seq))
			parquetio.AppendSourceTs(srcTsB, r.SourceTs)
		}
		ingB.Append(now)
		if r.PK == "" {
			pkB.AppendNull()
		} else {
			hx.Append(pkB, string(r.PK))
		}
	}
	cols := make([]arrow.Array, len(sc.Fields()))
	for i := range cols {
		if i == valueCol {
			cols[i] = values
			continue
		}
		cols[i] = rb.Field(i).NewArray()
		defer cols[i].Release()
	}
	rec := array.NewRecordBatch(sc, cols, int64(len(recs)))
	defer rec.Release()
	files, _, err := rowdelta.WriteRecord(ctx, tbl, fmt.Sprintf("bronze-%06d", b.Seq), rec)
	return rowdelta.DataFiles(files), err
}
