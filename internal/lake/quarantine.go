package lake

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/rowdelta"
)

// Columns of the quarantine table specific to it.
const (
	ColReason  = "reason"   // why the record was not applied
	ColStage   = "stage"    // where it was stopped: decode, conform, schema, purged
	ColBatchID = "batch_id" // the batch that quarantined it
)

// Quarantine stages.
const (
	StageDecode  = "decode"  // not a Debezium change event we can read
	StageConform = "conform" // a value does not fit its column's type
	StageSchema  = "schema"  // skipped by an operator's decision on a blocked schema change
	StagePurged  = "purged"  // a change for a purged key at or below the purge horizon
)

// QuarantineRecord is a record that was kept aside instead of applied:
// the Kafka record as received and the reason.
type QuarantineRecord struct {
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
	Timestamp int64 // Kafka record timestamp, µs since the epoch
	Stage     string
	Reason    string
}

// QuarantineSchema is the quarantine table's schema.
func QuarantineSchema() *iceberg.Schema {
	return iceberg.NewSchemaWithIdentifiers(0, []int{1, 2, 3},
		iceberg.NestedField{ID: 1, Name: lakecat.BronzeTopic, Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: lakecat.BronzePartition, Type: iceberg.PrimitiveTypes.Int32, Required: true},
		iceberg.NestedField{ID: 3, Name: lakecat.BronzeOffset, Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 4, Name: lakecat.BronzeKey, Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: 5, Name: lakecat.BronzeValue, Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: 6, Name: lakecat.BronzeTimestamp, Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 7, Name: ColStage, Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 8, Name: ColReason, Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 9, Name: ColBatchID, Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 10, Name: lakecat.ColIngestedAt, Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
	)
}

// AppendQuarantine writes records to <ns>.<table>_quarantine (created on
// first use) in one append, skipping those the table already holds (same
// topic, partition, offset and stage), so retries and backfills do not
// duplicate them. It returns how many were written. Errors: catalog and
// file IO failures (retryable).
func AppendQuarantine(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, b Batch, recs []QuarantineRecord) (int, error) {
	if len(recs) == 0 {
		return 0, nil
	}
	tbl, _, err := lakecat.LoadOrCreate(ctx, cat, name.NamespaceIdent(), name.Quarantine(),
		func() (*iceberg.Schema, error) { return QuarantineSchema(), nil }, lakecat.TableProperties(nil))
	if err != nil {
		return 0, err
	}
	held, err := quarantined(ctx, tbl)
	if err != nil {
		return 0, err
	}
	var fresh []QuarantineRecord
	for _, r := range recs {
		k := quarantineKey{b.Topic, r.Partition, r.Offset, r.Stage}
		if !held[k] {
			held[k] = true
			fresh = append(fresh, r)
		}
	}
	if len(fresh) == 0 {
		return 0, nil
	}
	rec, err := quarantineRows(tbl, b, fresh)
	if err != nil {
		return 0, err
	}
	defer rec.Release()
	files, _, err := rowdelta.WriteRecord(ctx, tbl, "quarantine", rec)
	df := rowdelta.DataFiles(files)
	if err != nil {
		return 0, err
	}
	tx := tbl.NewTransaction()
	if err := tx.NewRowDelta(iceberg.Properties{lakecat.PropBatchID: b.ID}).AddRows(df...).Commit(ctx); err != nil {
		return 0, fmt.Errorf("lake: stage quarantine append: %w", err)
	}
	if _, err := lakecat.CommitTx(ctx, tbl, tx); err != nil {
		return 0, fmt.Errorf("lake: commit quarantine: %w", err)
	}
	return len(fresh), nil
}

type quarantineKey struct {
	topic     string
	partition int32
	offset    int64
	stage     string
}

// quarantined reads the coordinates the quarantine table holds. The table
// is small by nature (bad records are rare), so it is read whole.
func quarantined(ctx context.Context, tbl *table.Table) (map[quarantineKey]bool, error) {
	out := map[quarantineKey]bool{}
	if tbl.CurrentSnapshot() == nil {
		return out, nil
	}
	sc, it, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		return nil, fmt.Errorf("lake: scan quarantine: %w", err)
	}
	idx := func(n string) int { return sc.FieldIndices(n)[0] }
	ti, pi, oi, si := idx(lakecat.BronzeTopic), idx(lakecat.BronzePartition), idx(lakecat.BronzeOffset), idx(ColStage)
	for rec, err := range it {
		if err != nil {
			return nil, fmt.Errorf("lake: scan quarantine: %w", err)
		}
		t, p, o, s := rec.Column(ti).(*array.String), rec.Column(pi).(*array.Int32), rec.Column(oi).(*array.Int64), rec.Column(si).(*array.String)
		for r := 0; r < int(rec.NumRows()); r++ {
			out[quarantineKey{t.Value(r), p.Value(r), o.Value(r), s.Value(r)}] = true
		}
		rec.Release()
	}
	return out, nil
}

func quarantineRows(tbl *table.Table, b Batch, recs []QuarantineRecord) (arrow.RecordBatch, error) {
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("lake: quarantine arrow schema: %w", err)
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer rb.Release()
	f := func(name string) array.Builder { return rb.Field(sc.FieldIndices(name)[0]) }
	now := arrow.Timestamp(ingestClock().UnixMicro())
	for _, r := range recs {
		f(lakecat.BronzeTopic).(*array.StringBuilder).Append(b.Topic)
		f(lakecat.BronzePartition).(*array.Int32Builder).Append(r.Partition)
		f(lakecat.BronzeOffset).(*array.Int64Builder).Append(r.Offset)
		appendBytes(f(lakecat.BronzeKey).(*array.BinaryBuilder), r.Key)
		appendBytes(f(lakecat.BronzeValue).(*array.BinaryBuilder), r.Value)
		f(lakecat.BronzeTimestamp).(*array.TimestampBuilder).Append(arrow.Timestamp(r.Timestamp))
		f(ColStage).(*array.StringBuilder).Append(r.Stage)
		f(ColReason).(*array.StringBuilder).Append(r.Reason)
		f(ColBatchID).(*array.StringBuilder).Append(b.ID)
		f(lakecat.ColIngestedAt).(*array.TimestampBuilder).Append(now)
	}
	return rb.NewRecordBatch(), nil
}

func appendBytes(b *array.BinaryBuilder, v []byte) {
	if v == nil {
		b.AppendNull()
		return
	}
	b.Append(v)
}
