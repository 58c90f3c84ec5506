package rowdelta

import (
	"fmt"

	"github.com/lakemirror/lakemirror/internal/layout"
)

// DeleteFormatError stops a table whose mirror or history exists with
// another delete format than the table's setting asks for: the format
// is fixed when the tables are created (format-version 2 or 3).
// internal/lake keeps it as lake.DeleteFormatError with its other
// errors.
type DeleteFormatError struct {
	Table string              // "shop.orders" (mirror) or "shop.orders_history"
	Has   layout.DeleteFormat // what the existing table writes
	Want  layout.DeleteFormat // the setting
}

func (e *DeleteFormatError) Error() string {
	return fmt.Sprintf("lake: %s writes %s but the table's delete format setting is %s; the delete format is fixed when the tables are created: set it back to %s (starter settings --delete-format %s), or stop the table, drop its Iceberg tables and start it again with --delete-format %s",
		e.Table, e.Has.Describe(), e.Want.Describe(), e.Has, e.Has, e.Want)
}
