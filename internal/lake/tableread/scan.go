package tableread

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
)

// ScanColumns scans the table's current snapshot (deletes applied) for
// the named columns, calling fn with each record batch and a lookup of
// its columns by name (nil when absent).
func ScanColumns(ctx context.Context, tbl *table.Table, cols []string, fn func(arrow.RecordBatch, func(string) arrow.Array) error) error {
	return scanColumnsAt(ctx, tbl, 0, cols, fn)
}

// scanColumnsAt is ScanColumns at Iceberg snapshot snapshotID (0: the
// current one).
func scanColumnsAt(ctx context.Context, tbl *table.Table, snapshotID int64, cols []string, fn func(arrow.RecordBatch, func(string) arrow.Array) error) error {
	opts := []table.ScanOption{table.WithSelectedFields(cols...)}
	if snapshotID != 0 {
		opts = append(opts, table.WithSnapshotID(snapshotID))
	}
	_, it, err := tbl.Scan(opts...).ToArrowRecords(ctx)
	if err != nil {
		return fmt.Errorf("lake: scan %s: %w", lakecat.IdentString(tbl.Identifier()), err)
	}
	for rec, err := range it {
		if err != nil {
			return fmt.Errorf("lake: scan %s: %w", lakecat.IdentString(tbl.Identifier()), err)
		}
		sc := rec.Schema()
		err := fn(rec, func(name string) arrow.Array {
			if idx := sc.FieldIndices(name); len(idx) > 0 {
				return rec.Column(idx[0])
			}
			return nil
		})
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}
