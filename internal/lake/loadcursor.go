package lake

import (
	"encoding/json"
	"fmt"

	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
)

// PropLoadCursor is lakecat.PropLoadCursor: how far a direct initial
// load (or re-snapshot) from the source database got.
const PropLoadCursor = lakecat.PropLoadCursor

// maxSnapshots bounds LoadCursor.Snapshots: the oldest are dropped (a
// later re-snapshot's rows sort above every change an older one lifts).
const maxSnapshots = 32

// WithSnapshot returns snaps with s appended when it is not the last one
// already, the oldest dropped beyond maxSnapshots.
func WithSnapshot(snaps []cdc.PostgresSnapshot, s cdc.PostgresSnapshot) []cdc.PostgresSnapshot {
	if n := len(snaps); n > 0 && snaps[n-1].LSN == s.LSN {
		return snaps
	}
	out := append(append([]cdc.PostgresSnapshot(nil), snaps...), s)
	if len(out) > maxSnapshots {
		out = out[len(out)-maxSnapshots:]
	}
	return out
}

// liftSnapshots raises, for every re-snapshot read recorded on the table
// (oldest first), the positions of the events of transactions it did not
// see that sort below its rows (cdc.PostgresSnapshot.Lift). Every path
// that hands decoded changes to the mirror and history (a batch, or the
// past changes read from bronze for a rebuild) goes through Prepare,
// which calls this, so a change has the same position everywhere.
func liftSnapshots(tbl *table.Table, events []*cdc.Event) error {
	c, err := ReadLoadCursor(tbl)
	if err != nil || c == nil || len(c.Snapshots) == 0 {
		return err
	}
	for _, e := range events {
		if e.Snapshot != cdc.SnapshotNone {
			continue // source snapshot reads (a load's rows among them) keep their position
		}
		for _, s := range c.Snapshots {
			s.Lift(e)
		}
	}
	return nil
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
