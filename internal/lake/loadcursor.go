package lake

import (
	"encoding/json"
	"fmt"

	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// PropLoadCursor records how far a direct initial load (or re-snapshot)
// from the source database got: JSON LoadCursor, written with each
// chunk's commit. A retried load resumes after it.
const PropLoadCursor = "lakemirror.load-cursor"

// LoadCursor is the progress of one direct load.
type LoadCursor struct {
	ID    string    `json:"id"`    // the load's id (one per initial load or re-snapshot)
	LSN   uint64    `json:"lsn"`   // source position of the first part's snapshot: `_seq` word of its rows
	Read  int64     `json:"read"`  // rows committed so far
	After []KeyPart `json:"after"` // key of the last committed row
	Done  bool      `json:"done"`
}

// KeyPart is one key column value in a cursor, JSON-safe.
type KeyPart struct {
	Kind  cdc.Kind `json:"k"`
	Scale int16    `json:"sc,omitempty"`
	I     int64    `json:"i,omitempty"`
	S     []byte   `json:"s,omitempty"`
}

// KeyParts converts key values for a cursor.
func KeyParts(vals []cdc.Value) []KeyPart {
	out := make([]KeyPart, len(vals))
	for i, v := range vals {
		out[i] = KeyPart{Kind: v.Kind, Scale: v.Scale, I: v.I, S: []byte(v.S)}
	}
	return out
}

// Values converts a cursor's key back.
func (c *LoadCursor) Values() []cdc.Value {
	if c == nil || len(c.After) == 0 {
		return nil
	}
	out := make([]cdc.Value, len(c.After))
	for i, p := range c.After {
		out[i] = cdc.Value{Kind: p.Kind, Scale: p.Scale, I: p.I, S: string(p.S)}
	}
	return out
}

// ReadLoadCursor returns the load cursor recorded on a table (nil when
// it holds none).
func ReadLoadCursor(tbl *table.Table) (*LoadCursor, error) {
	t := tbl.Properties()[PropLoadCursor]
	if t == "" {
		return nil, nil
	}
	var c LoadCursor
	if err := json.Unmarshal([]byte(t), &c); err != nil {
		return nil, fmt.Errorf("lake: bad %s: %w", PropLoadCursor, err)
	}
	return &c, nil
}
