package lake

import (
	"encoding/hex"
	"slices"
	"strings"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
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
// past change: State.EventsLogged). Errors: a *BinlogRestartedError, local
// state log failures.
func (w *MirrorWriter) checkBinlogPast(k cdc.Key, batch []*cdc.Event, sh *tablestate.Shape) error {
	past, _, err := w.state.PastChanges(k, sh)
	if err != nil {
		return err
	}
	if r, ok := merge.FindBinlogRestart(append(past, batch...)); ok {
		return w.binlogRestarted(r, false)
	}
	return nil
}

// BinlogSuspect is a key's binlog restart within a batch and the key's
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
