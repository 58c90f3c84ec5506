package source

import (
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// TestRenderRejectsMismatch: a value that does not fit its column is an
// error, not a wrong record.
func TestRenderRejectsMismatch(t *testing.T) {
	info := TableInfo{Database: "db", Schema: "s", Table: "t", Key: []string{"id"}, Columns: []ColumnInfo{
		{Column: cdc.Column{Name: "id", Type: cdc.TypeInt, Source: "int32"}, Read: "int4", Connect: "int32"},
		{Column: cdc.Column{Name: "n", Type: cdc.DecimalType(10, 2), Source: logicalDecimal}, Read: "numeric", Connect: "bytes", Logical: logicalDecimal, Precision: 10, Scale: 2},
	}}
	row := &cdc.Row{Cols: cdc.NewColumns([]string{"id", "n"}), Vals: []cdc.Value{cdc.Int(1), cdc.String("x")}}
	if _, err := RowToDebeziumJSON(info, row, 1, "s", 0, false); err == nil || !contains(err.Error(), `column "n"`) {
		t.Errorf("err = %v", err)
	}
	row.Vals[1] = cdc.Decimal(1, 3)
	if _, err := RowToDebeziumJSON(info, row, 1, "s", 0, false); err == nil {
		t.Error("a decimal of another scale rendered")
	}
	row = &cdc.Row{Cols: cdc.NewColumns([]string{"id"}), Vals: []cdc.Value{cdc.Int(1)}}
	if _, err := RowToDebeziumJSON(info, row, 1, "s", 0, false); err == nil || !contains(err.Error(), `no column "n"`) {
		t.Errorf("err = %v", err)
	}
}
