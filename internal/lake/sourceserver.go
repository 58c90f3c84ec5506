package lake

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/merge"
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

// BinlogRestartedError: a MySQL or MariaDB change of a key was delivered
// after another change of the key in the same Kafka partition at a higher
// binlog position, and is no redelivery of a change delivered before
// (merge.FindBinlogRestart): its binlog started over (RESET MASTER, a
// server rebuilt under the same server id, a connector moved to another
// replica, a new server's source snapshot reads). Its position cannot be
// ordered against the changes applied before, and the sequence guard
// would drop it as stale. Ambiguous is set when the key's earlier changes
// are unknown (a table without bronze whose local state was built from
// the tables after them): the change sits below the key's stored position
// (Above has only Seq), and a redelivery cannot be told from a restart.
// Retrying cannot fix it.
type BinlogRestartedError struct {
	Table     string
	Key       string     // the key, hex (the `_key` form); not in Error: keys are record content
	Change    *cdc.Event // the restarted change (its Origin says where)
	Above     *cdc.Event // the change of the key delivered before it at a higher position
	Ambiguous bool
}

func (e *BinlogRestartedError) Error() string {
	server := ""
	if e.Change.SourceServer != "" {
		server = ", source.server_id " + e.Change.SourceServer
	}
	var b strings.Builder
	fmt.Fprintf(&b, "lake: %s: a MySQL change (op %s%s) delivered at %s/%d@%d has binlog position %s, below its key's position %s",
		e.Table, e.Change.Op, server, e.Change.Origin.Topic, e.Change.Origin.Partition, e.Change.Origin.Offset, e.Change.Seq.Hex(), e.Above.Seq.Hex())
	if e.Above.Origin.Topic != "" {
		fmt.Fprintf(&b, " (delivered before it at %s/%d@%d)", e.Above.Origin.Topic, e.Above.Origin.Partition, e.Above.Origin.Offset)
		if e.Change.Seq == e.Above.Seq {
			b.WriteString(" and another op, commit time or GTID at the same position")
		}
	}
	if e.Ambiguous {
		b.WriteString(": either the binlog started over or a redelivery of a change applied before this worker built its state from the tables; this table keeps no bronze, so its earlier changes cannot tell which")
	} else {
		b.WriteString(": within one Kafka partition a key's changes arrive in binlog order, so its binlog started over")
	}
	b.WriteString(" (RESET MASTER, a server rebuilt under the same server id, the connector moved to another replica, or a new server's source snapshot); positions of two binlogs cannot be ordered, and the change would be dropped as stale; the table stops here." +
		" To go on: mirror the source into a new table from a new source snapshot taken on the current binlog (a new topic, or --start-from latest after that snapshot), then drop this one; changes after the restart must not be applied to this table")
	if e.Ambiguous {
		b.WriteString(". If it is a redelivery (the connector restarted), delete the worker's sidecar and restart the table from a worker whose state holds its past, or mirror it anew as above")
	}
	return b.String()
}

// binlogRestarted returns the *BinlogRestartedError of r for the
// writer's table.
func (w *MirrorWriter) binlogRestarted(r merge.BinlogRestart, ambiguous bool) error {
	return &BinlogRestartedError{Table: w.name.String(), Key: hex.EncodeToString([]byte(r.Change.Key)), Change: r.Change, Above: r.Above, Ambiguous: ambiguous}
}

// binlogBelow returns the first Kafka-delivered MySQL change of g
// (merge.BinlogDelivered) strictly below the key's stored position stored,
// or nil.
func binlogBelow(g merge.Group, stored cdc.Seq) *cdc.Event {
	for _, e := range g.Events {
		if merge.BinlogDelivered(e) && e.Seq < stored {
			return e
		}
	}
	return nil
}

// binlogAt reports whether g holds a Kafka-delivered MySQL change at the
// key's stored position stored.
func binlogAt(g merge.Group, stored cdc.Seq) bool {
	for _, e := range g.Events {
		if e.Seq == stored && merge.BinlogDelivered(e) {
			return true
		}
	}
	return false
}

// checkBinlogPast runs merge.FindBinlogRestart over key k's changes in
// the batch (batch) and its past changes from the local state log (which must hold every
// past change: State.eventsLogged). Errors: a *BinlogRestartedError, local
// state log failures.
func (w *MirrorWriter) checkBinlogPast(k cdc.Key, batch []*cdc.Event, sh *shape) error {
	past, _, err := w.state.pastChanges(k, sh)
	if err != nil {
		return err
	}
	if r, ok := merge.FindBinlogRestart(append(past, batch...)); ok {
		return w.binlogRestarted(r, false)
	}
	return nil
}

// binlogSuspect is a key's binlog restart within a batch and the key's
// changes in the batch, as delivered (before duplicates are dropped).
type binlogSuspect struct {
	merge.BinlogRestart
	raw []*cdc.Event
}

// binlogSuspects returns the keys of events whose MySQL changes go back
// in position within the batch (merge.FindBinlogRestarts), nil when none.
func binlogSuspects(events []*cdc.Event) map[cdc.Key]binlogSuspect {
	rs := merge.FindBinlogRestarts(events)
	if len(rs) == 0 {
		return nil
	}
	out := make(map[cdc.Key]binlogSuspect, len(rs))
	for _, r := range rs {
		out[r.Change.Key] = binlogSuspect{BinlogRestart: r}
	}
	for _, e := range events {
		if s, ok := out[e.Key]; ok {
			s.raw = append(s.raw, e)
			out[e.Key] = s
		}
	}
	return out
}
