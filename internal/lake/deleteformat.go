package lake

import (
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/rowdelta"
	"github.com/lakemirror/lakemirror/internal/layout"
)

// DeleteFormatOf is rowdelta.DeleteFormatOf: the delete format a table
// writes (DeleteVector for format-version 3 or later, DeletePosition
// otherwise), kept for the doctor command (starter/cmd_doctor.go). Code
// inside internal/lake uses rowdelta's names.
func DeleteFormatOf(tbl *table.Table) layout.DeleteFormat { return rowdelta.DeleteFormatOf(tbl) }
