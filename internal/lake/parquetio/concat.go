package parquetio

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ConcatRecords is recs as one record of schema sc (the first of recs,
// retained, when there is one).
func ConcatRecords(sc *arrow.Schema, recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	cols := make([]arrow.Array, len(sc.Fields()))
	n := int64(0)
	for _, r := range recs {
		n += r.NumRows()
	}
	for i := range cols {
		parts := make([]arrow.Array, len(recs))
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			for _, d := range cols[:i] {
				d.Release()
			}
			return nil, fmt.Errorf("lake: concatenate rows for compaction: %w", err)
		}
		cols[i] = c
	}
	rec := array.NewRecordBatch(sc, cols, n)
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}
