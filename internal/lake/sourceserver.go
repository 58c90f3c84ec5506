package lake

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// PropSourceServer is the mirror property holding the MySQL or MariaDB
// server (source.server_id) whose binlog positions the table's changes
// carry. Binlog file names and positions start over on another server
// (a failover to a replica, a connector pointed elsewhere): that
// server's changes would sort below every change already applied and be
// dropped as stale, silently. So a batch with changes of another server
// stops the table (SourceServerChangedError) instead.
const PropSourceServer = "lakemirror.source-server"

// SourceServerChangedError: a batch holds changes of a MySQL or MariaDB
// server other than the one the table's positions come from (Recorded),
// or of several servers (Seen, sorted). Retrying cannot fix it.
type SourceServerChangedError struct {
	Table    string
	Recorded string   // PropSourceServer before the batch ("" when none)
	Seen     []string // the batch's servers
}

func (e *SourceServerChangedError) Error() string {
	from := e.Recorded
	if from == "" {
		from = e.Seen[0]
	}
	return fmt.Sprintf("lake: %s: changes of MySQL server %s after changes of server %s (source.server_id): binlog positions start over on another server (a failover or a connector pointed at another server), so its changes cannot be ordered against those already applied and would be dropped as stale; the table stops here. Mirror it again from a new source snapshot into a new table name (or drop this table's Iceberg tables and start again)",
		e.Table, strings.Join(slices.DeleteFunc(slices.Clone(e.Seen), func(s string) bool { return s == from }), ", "), from)
}

// sourceServer returns the server the table's positions come from after
// the batch: recorded (PropSourceServer), else the one server of events.
// Errors: a *SourceServerChangedError when events hold changes of
// another server than recorded, or of more than one.
func sourceServer(table, recorded string, events []*cdc.Event) (string, error) {
	var seen []string
	for _, e := range events {
		if e.SourceServer != "" && !slices.Contains(seen, e.SourceServer) {
			seen = append(seen, e.SourceServer)
		}
	}
	switch {
	case len(seen) == 0:
		return recorded, nil
	case len(seen) == 1 && (recorded == "" || recorded == seen[0]):
		return seen[0], nil
	}
	slices.Sort(seen)
	return "", &SourceServerChangedError{Table: table, Recorded: recorded, Seen: seen}
}
