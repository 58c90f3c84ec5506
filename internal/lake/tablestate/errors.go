package tablestate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// The errors the state and the writers on it return about it; internal/lake
// keeps their lake names (errors.go).

// ErrStateMoved: the local state was rebuilt (the history table had moved
// under it) after the batch's mirror stage was decided on the old one;
// stage the mirror again.
var ErrStateMoved = errors.New("lake: the local state was rebuilt while the batch was staged")

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
