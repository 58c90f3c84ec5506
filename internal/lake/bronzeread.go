package lake

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// BronzeRow is a bronze record read back: the Kafka record as received.
type BronzeRow struct {
	Topic string
	BronzeRecord
}

// ReadBronzeKeys returns every bronze record of the given primary keys
// (the `_key` column), in no particular order. It scans the bronze table
// with a filter on `_key`, so its cost is a read of that column across
// bronze plus the matching rows: it serves the late-key rebuild, never
// the in-order path. Errors: catalog and file IO failures.
func ReadBronzeKeys(ctx context.Context, cat catalog.Catalog, name TableName, keys []cdc.Key) ([]BronzeRow, error) {
	tbl, err := LoadTable(ctx, cat, name.Bronze())
	if err != nil || tbl == nil || len(keys) == 0 {
		return nil, err
	}
	hexKeys := make([]string, len(keys))
	for i, k := range keys {
		hexKeys[i] = hex.EncodeToString([]byte(k))
	}
	// All columns: iceberg-go v0.7.0 fails with arrow's "invalid" when a
	// row filter is combined with WithSelectedFields on this table.
	scan := tbl.Scan(table.WithRowFilter(iceberg.IsIn(iceberg.Reference(ColKey), hexKeys...)))
	sc, it, err := scan.ToArrowRecords(ctx)
	if err != nil {
		return nil, fmt.Errorf("lake: scan bronze for %d keys: %w", len(keys), err)
	}
	col := func(name string) int { return sc.FieldIndices(name)[0] }
	ti, pi, oi, ki, vi, tsi, pki, hi := col(BronzeTopic), col(BronzePartition), col(BronzeOffset), col(BronzeKey), col(BronzeValue), col(BronzeTimestamp), col(ColKey), col(BronzeHeaders)
	var out []BronzeRow
	for rec, err := range it {
		if err != nil {
			return nil, fmt.Errorf("lake: scan bronze: %w", err)
		}
		topics := rec.Column(ti).(*array.String)
		parts := rec.Column(pi).(*array.Int32)
		offs := rec.Column(oi).(*array.Int64)
		ks := rec.Column(ki).(*array.Binary)
		vs := rec.Column(vi).(*array.Binary)
		tss := rec.Column(tsi).(*array.Timestamp)
		pks := rec.Column(pki).(*array.String)
		hdrs, _ := rec.Column(hi).(*array.List)
		for r := 0; r < int(rec.NumRows()); r++ {
			row := BronzeRow{Topic: topics.Value(r)}
			row.Partition, row.Offset = parts.Value(r), offs.Value(r)
			if !ks.IsNull(r) {
				row.Key = append([]byte(nil), ks.Value(r)...)
			}
			if !vs.IsNull(r) {
				row.Value = append([]byte(nil), vs.Value(r)...)
			}
			if !tss.IsNull(r) {
				row.Timestamp = int64(tss.Value(r))
			}
			pk, err := hex.DecodeString(pks.Value(r))
			if err != nil {
				return nil, fmt.Errorf("lake: bronze _key %q: %w", pks.Value(r), err)
			}
			row.PK = cdc.Key(pk)
			if hdrs != nil {
				row.Headers = readHeaders(hdrs, r)
			}
			out = append(out, row)
		}
		rec.Release()
	}
	return out, nil
}

// readHeaders reads row r of the kafka_headers list<struct<key, value>>.
func readHeaders(l *array.List, r int) []BronzeHeader {
	if l.IsNull(r) {
		return nil
	}
	st, ok := l.ListValues().(*array.Struct)
	if !ok || st.NumField() < 2 {
		return nil
	}
	keys, ok1 := st.Field(0).(*array.String)
	vals, ok2 := st.Field(1).(*array.Binary)
	if !ok1 || !ok2 {
		return nil
	}
	start, end := l.ValueOffsets(r)
	out := make([]BronzeHeader, 0, end-start)
	for i := int(start); i < int(end); i++ {
		h := BronzeHeader{Key: keys.Value(i)}
		if !vals.IsNull(i) {
			h.Value = append([]byte(nil), vals.Value(i)...)
		}
		out = append(out, h)
	}
	return out
}
