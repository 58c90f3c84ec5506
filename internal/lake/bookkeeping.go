package lake

import (
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
)

// PropAppliedPosition is lakecat.PropAppliedPosition: the mirror's
// applied position (hex), which never moves back.
const PropAppliedPosition = lakecat.PropAppliedPosition

// Checkpoint is lakecat.Checkpoint: the last batch a table committed,
// read back from it.
type Checkpoint = lakecat.Checkpoint

// ReadCheckpoint is lakecat.ReadCheckpoint, for callers outside
// internal/lake.
func ReadCheckpoint(tbl *table.Table) (Checkpoint, error) { return lakecat.ReadCheckpoint(tbl) }
