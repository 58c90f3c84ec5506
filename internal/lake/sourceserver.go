package lake

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// PropSourceServers is the mirror property listing the MySQL or MariaDB
// servers (source.server_id, comma-separated, sorted) whose changes the
// table has applied. Binlog file names and positions start over on
// another server: after a failover to a replica the new server's changes
// can sort below every change already applied and would be dropped as
// stale, silently. So a batch with a change of a server not seen before
// whose position is below what the table has applied stops the table
// (SourceServerChangedError). A new server whose positions continue above
// (a connector reading a replica whose upstream primary changed: binlog
// events keep the id of the server that created them; multi-source
// replication interleaving several ids in one binlog) is recorded and
// applies.
const PropSourceServers = "lakemirror.source-servers"

// SourceServerChangedError: a batch holds a change of a MySQL or MariaDB
// server the table has not seen (Server) at a position below what the
// table had applied (Applied, hex `_seq`). Retrying cannot fix it.
type SourceServerChangedError struct {
	Table    string
	Server   string   // the new server's source.server_id
	Known    []string // the servers seen before (PropSourceServers)
	Position cdc.Seq  // the change's position
	Applied  cdc.Seq  // the highest position applied before it
}

func (e *SourceServerChangedError) Error() string {
	return fmt.Sprintf("lake: %s: a change of MySQL server %s (source.server_id; seen before: %s) at binlog position %s, below the %s already applied: binlog positions start over on another server (a failover), so its changes cannot be ordered against those already applied and would be dropped as stale; the table stops here. Mirror the new server into a new table from a new source snapshot, reading only the new server's changes (a new topic, or --start-from latest after the snapshot)",
		e.Table, e.Server, strings.Join(e.Known, ", "), e.Position.Hex(), e.Applied.Hex())
}

// sourceServers returns the table's servers after the batch (recorded,
// PropSourceServers, plus those of events) and whether that changed
// them. applied is the highest position the table applied before the
// batch ("" when none). Events are taken in batch order; a server not
// seen before is checked against applied and the positions of the
// batch's earlier changes of other servers. Errors: a
// *SourceServerChangedError for a new server's change below them.
func sourceServers(table, recorded string, applied cdc.Seq, events []*cdc.Event) (string, bool, error) {
	var known []string
	if recorded != "" {
		known = strings.Split(recorded, ",")
	}
	n := len(known)
	high := applied
	for _, e := range events {
		if e.SourceServer == "" {
			continue // other connectors, snapshot reads, direct loads
		}
		if !slices.Contains(known, e.SourceServer) {
			if high != "" && e.Seq < high {
				slices.Sort(known)
				return "", false, &SourceServerChangedError{Table: table, Server: e.SourceServer, Known: known, Position: e.Seq, Applied: high}
			}
			known = append(known, e.SourceServer)
		}
		high = max(high, e.Seq)
	}
	if len(known) == n {
		return recorded, false, nil
	}
	slices.Sort(known)
	return strings.Join(known, ","), true, nil
}
