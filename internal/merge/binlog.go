package merge

import (
	"slices"
	"strings"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Binlog restarts (docs/design.md, rule 1). MySQL and MariaDB positions
// (binlog file index, pos, row: cdc.MySQLSeq) hold only within one
// binlog. RESET MASTER, a server rebuilt under the same server id, a
// connector moved to another replica, and a new server's source snapshot
// reads (server id 0) all give positions that start over, below the
// changes already applied, and the sequence guard would drop the new
// changes as stale.
//
// Kafka offset order within one partition is the delivery order, and
// Debezium delivers one binlog in position order: one MySQL connector task
// reads the binlog in order, Kafka Connect's producer keeps a partition's
// order (one request in flight), and every change of one key lands in the
// key's partition. Debezium snapshot reads carry the binlog position the
// snapshot started at, which no change of the same binlog delivered
// before them exceeds (blocking and incremental snapshots carry the
// stream's position when they are emitted). So within one partition a
// key's changes arrive with rising positions, except redeliveries (a
// connector restarted from its last committed offset sends the same
// changes again: same position, op, commit time and GTID). A change of a
// key delivered after another change of the key in the same partition at
// a higher position, that is no redelivery, means its binlog started over.
// Nothing in the change tells by how much: the binlog restart cannot be
// ordered against the changes before it, and the table stops.

// BinlogRestart is a change that shows its binlog started over.
type BinlogRestart struct {
	// Change is delivered after Above (same key, topic and partition, a
	// higher Kafka offset) at a position below Above's, or at Above's
	// position with another op, commit time or transaction id.
	Change *cdc.Event
	Above  *cdc.Event
}

// FindBinlogRestart returns the first binlog restart among events (any
// keys, any order; past changes of the keys from the local state log may
// be included, duplicates too), by key, topic, partition and offset of
// the restarted change; ok is false when there is none.
//
// Only Kafka-delivered row changes with MySQL positions
// (cdc.IsMySQLSeq) take part: events with an Origin topic, which lakemirror's
// own records (a reconciliation repair, a direct load, ghost deletes: an
// Origin topic holding "#") do not have, and no table truncates (one
// record expanded to every key, never a key's own change). Two events at
// the same topic, partition and offset are one record seen twice. A
// redelivery repeats a change delivered before in the partition: same
// position, op, source commit time (SourceTs) and transaction id (TxID,
// the GTID where the server writes GTIDs); the same position with any of
// those different is a new change at a reused position, a restart.
func FindBinlogRestart(events []*cdc.Event) (BinlogRestart, bool) {
	rs := findBinlogRestarts(events, true)
	if len(rs) == 0 {
		return BinlogRestart{}, false
	}
	return rs[0], true
}

// FindBinlogRestarts is FindBinlogRestart for every key: the first
// restart of each key that has one, by key.
func FindBinlogRestarts(events []*cdc.Event) []BinlogRestart {
	return findBinlogRestarts(events, false)
}

func findBinlogRestarts(events []*cdc.Event, first bool) []BinlogRestart {
	var cand []*cdc.Event
	for _, e := range events {
		if binlogDelivered(e) {
			cand = append(cand, e)
		}
	}
	if len(cand) < 2 {
		return nil
	}
	slices.SortStableFunc(cand, func(a, b *cdc.Event) int {
		switch {
		case a.Key != b.Key:
			return strings.Compare(string(a.Key), string(b.Key))
		case a.Origin.Topic != b.Origin.Topic:
			return strings.Compare(a.Origin.Topic, b.Origin.Topic)
		case a.Origin.Partition != b.Origin.Partition:
			return int(a.Origin.Partition) - int(b.Origin.Partition)
		case a.Origin.Offset < b.Origin.Offset:
			return -1
		case a.Origin.Offset > b.Origin.Offset:
			return 1
		}
		return 0
	})
	var out []BinlogRestart
	var hi *cdc.Event
	seen := map[cdc.Seq]*cdc.Event{}
	for i, e := range cand {
		if i == 0 || !sameRun(cand[i-1], e) {
			hi = nil
			clear(seen)
		}
		if len(out) > 0 && out[len(out)-1].Change.Key == e.Key {
			continue // one per key
		}
		if prev := seen[e.Seq]; prev != nil {
			if prev.Origin.Offset != e.Origin.Offset && !sameChange(prev, e) {
				out = append(out, BinlogRestart{Change: e, Above: prev})
			}
			continue // the same record, or a redelivery
		}
		if hi != nil && e.Seq < hi.Seq {
			out = append(out, BinlogRestart{Change: e, Above: hi})
			continue
		}
		seen[e.Seq] = e
		if hi == nil || e.Seq > hi.Seq {
			hi = e
		}
	}
	if first && len(out) > 1 {
		out = out[:1]
	}
	return out
}

// BinlogDelivered reports whether e takes part in FindBinlogRestart: a
// Kafka-delivered row change (not a table truncate) at a MySQL position.
func BinlogDelivered(e *cdc.Event) bool { return binlogDelivered(e) }

func binlogDelivered(e *cdc.Event) bool {
	return e.Op != cdc.OpTruncate && cdc.IsMySQLSeq(e.Seq) && e.Origin.Topic != "" && !strings.Contains(e.Origin.Topic, "#")
}

// sameRun: a and b are changes of one key in one Kafka partition.
func sameRun(a, b *cdc.Event) bool {
	return a.Key == b.Key && a.Origin.Topic == b.Origin.Topic && a.Origin.Partition == b.Origin.Partition
}

// sameChange: b repeats a (a redelivery): same op, commit time and
// transaction id (positions are compared by the caller).
func sameChange(a, b *cdc.Event) bool {
	return a.Op == b.Op && a.SourceTs == b.SourceTs && a.TxID == b.TxID
}
