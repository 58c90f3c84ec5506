package lake

import (
	"context"
	"io"

	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/tableread"
)

// The lake names of internal/lake/tableread's row dump, kept for its many
// callers outside internal/lake (the dump and demo commands and the
// end-to-end tests). Code inside internal/lake uses tableread's names.

// Row is tableread.Row: one table row read back for display and tests,
// column name → JSON-ready value.
type Row = tableread.Row

// ReadRows is tableread.ReadRows: the rows of tbl's current snapshot,
// sorted by sortCols, and the column order.
func ReadRows(ctx context.Context, tbl *table.Table, sortCols []string) ([]Row, []string, error) {
	return tableread.ReadRows(ctx, tbl, sortCols)
}

// WriteJSONLines is tableread.WriteJSONLines: rows as JSON objects, one
// per line, keys in column order.
func WriteJSONLines(w io.Writer, rows []Row, cols []string) error {
	return tableread.WriteJSONLines(w, rows, cols)
}
