package lake

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// commitRowDelta publishes a batch in one Iceberg commit of tbl: a row
// delta adding data and deletes (either may be nil; none is staged when
// both are) with props in its snapshot summary, and props set as table
// properties. It returns the table as committed. what names the commit in
// errors ("mirror", "history", "bronze batch b1").
//
// Errors: staging failures, and commit failures including conflicts with
// another writer (retryable: reload the table and try again).
func commitRowDelta(ctx context.Context, tbl *table.Table, what string, data, deletes iceberg.DataFile, props iceberg.Properties) (*table.Table, error) {
	tx := tbl.NewTransaction()
	if data != nil || deletes != nil {
		rd := tx.NewRowDelta(props)
		if data != nil {
			rd.AddRows(data)
		}
		if deletes != nil {
			rd.AddDeletes(deletes)
		}
		if err := rd.Commit(ctx); err != nil {
			return nil, fmt.Errorf("lake: stage %s row delta: %w", what, err)
		}
	}
	if err := tx.SetProperties(props); err != nil {
		return nil, fmt.Errorf("lake: stage %s properties: %w", what, err)
	}
	newTbl, err := tx.Commit(ctx)
	if err != nil {
		return nil, fmt.Errorf("lake: commit %s: %w", what, err)
	}
	return newTbl, nil
}
