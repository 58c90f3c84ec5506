package activities

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/cut"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// groupProgress is a batch's report to its table's source group
// (payload.GroupProgress) from its decoded change events, in record
// order: per transaction id the streamed events by identity (their
// data_collection_order values as ranges, or the positions of those
// without one; snapshot reads and events without an id left out) and
// their highest position, per
// partition the highest position it is complete up to and the newest
// transaction event (pm: partitionMarks of events, computed once for the
// mirror's commit), and whether an event names own, the table's data
// collection (Own). It is called only for a table with a group: a table
// without one allocates nothing more.
func groupProgress(events []*cdc.Event, own string, pm marks) *payload.GroupProgress {
	g := &payload.GroupProgress{FetchedPast: pm.fetched, NewestTx: pm.newest}
	type tx struct {
		orders cut.Orders
		seqs   []cdc.Seq
		last   cdc.Seq
	}
	var txs map[string]*tx
	for _, ev := range events {
		if !g.Own && own != "" && ev.Collection == own {
			g.Own = true
		}
		if ev.TxID == "" || ev.Snapshot != cdc.SnapshotNone {
			continue
		}
		if txs == nil {
			txs = map[string]*tx{}
		}
		x := txs[ev.TxID]
		if x == nil {
			x = &tx{}
			txs[ev.TxID] = x
		}
		x.last = max(x.last, ev.Seq)
		if ev.TxOrder > 0 {
			x.orders = x.orders.Add(ev.TxOrder)
		} else if ev.Seq != "" {
			x.seqs = append(x.seqs, ev.Seq)
		}
	}
	if len(txs) > 0 {
		g.TxSeen = make(map[string]payload.TxSeen, len(txs))
		for id, x := range txs {
			s := payload.TxSeen{Orders: x.orders, Last: x.last.Hex()}
			slices.Sort(x.seqs)
			for _, q := range slices.Compact(x.seqs) {
				s.Seqs = append(s.Seqs, q.Hex())
			}
			g.TxSeen[id] = s
		}
	}
	return g
}

// marks are a batch's partitionMarks.
type marks struct {
	fetched map[int32]string
	newest  map[int32]payload.TxAt
}

// partitionMarks are, per partition of events (decoded change events, in
// record order), the highest position they show the partition complete
// up to (cdc.FetchedPast; hex: payload.GroupProgress.FetchedPast) and
// the newest streamed change event's place in its source transaction
// among those with a transaction id and a data_collection_order
// (GroupProgress.NewestTx); each nil when no event gives one. Every
// Kafka batch's mirror commit keeps them (lakecat.PropFetchedPast,
// PropNewestTx), with or without a group, so that a table that joins a
// group later reports what it applied before. Cost: one pass, a map
// access per run of events of one partition.
func partitionMarks(events []*cdc.Event) (fetched map[int32]string, newest map[int32]payload.TxAt) {
	var high cdc.Seq
	var tx *cdc.Event
	cur, open := int32(0), false
	flush := func() {
		if high != "" {
			if fetched == nil {
				fetched = map[int32]string{}
			}
			if h := high.Hex(); h > fetched[cur] {
				fetched[cur] = h
			}
		}
		if tx != nil {
			if newest == nil {
				newest = map[int32]payload.TxAt{}
			}
			newest[cur] = payload.TxAt{ID: tx.TxID, Order: tx.TxOrder, Seq: tx.Seq.Hex()}
		}
		high, tx = "", nil
	}
	for _, ev := range events {
		if p := ev.Origin.Partition; !open || p != cur {
			if open {
				flush()
			}
			cur, open = p, true
			if h, ok := fetched[p]; ok { // a partition seen in an earlier run
				high, _ = cdc.ParseSeqHex(h)
			}
		}
		if past := cdc.FetchedPast(ev); past > high {
			high = past
		}
		if ev.TxID != "" && ev.TxOrder > 0 && ev.Snapshot == cdc.SnapshotNone {
			tx = ev
		}
	}
	if open {
		flush()
	}
	return fetched, newest
}

// foreignCollection checks a grouped table's batch b of Kafka records
// before any of it is written: with a transaction topic, every change
// event whose source block names its data collection (cdc.Event.Collection)
// must name the one the group matches the table by
// (TableSpec.DataCollection). Debezium's transaction END events count
// each transaction's events per data collection (Debezium docs,
// "Transaction metadata"); a table whose events name another collection
// than the group expects is not waited for, and the group's cuts would
// pass transactions the table has not applied. That happens when the
// default (the topic's last two segments) does not match the connector's
// form (SQL Server's db.schema.table), or the topic carries another
// table's events (a topic routing SMT). It returns nil for a table
// without a group or without a transaction topic (per-position cuts match
// no names), for a direct load's batch, and for events whose collection
// is unknown ("": a flattened record without __db/__schema/__table, a
// connector whose form is not verified).
//
// Errors: non-retryable (InvalidTableSpec) naming the first foreign
// event's coordinates and collection and how to go on (for a batch of
// more than one known collection: that the topic is mixed); the table
// blocks, and no cut of its group is published while it is blocked (it
// does not freeze: each attempt is given up naming it).
func foreignCollection(spec TableSpec, b lake.Batch, events []*cdc.Event) error {
	if spec.Group == "" || spec.TransactionTopic == "" {
		return nil
	}
	want := spec.DataCollection()
	var first *cdc.Event // the first event of another collection
	var seen []string    // the batch's known collections, first seen first
	for _, ev := range events {
		if ev.Collection == "" {
			continue
		}
		if !slices.Contains(seen, ev.Collection) {
			seen = append(seen, ev.Collection)
		}
		if first == nil && ev.Collection != want {
			first = ev
		}
	}
	if first == nil {
		return nil
	}
	if len(seen) > 1 {
		return badSpec(fmt.Errorf("table %s, batch %s: topic %s holds the change events of more than one data collection (%s; the first not the table's at %s/%d@%d), "+
			"but a table in group %s, with a transaction topic, must hold one source table's events: the group's transaction END events count each collection apart. Nothing of the batch was written. "+
			"To go on: starter stop %s, then give each source table its own topic (Debezium's default topic naming) and start one table per topic in the group, or start this table without --group",
			spec.Table, b.ID, first.Origin.Topic, strings.Join(seen, ", "), first.Origin.Topic, first.Origin.Partition, first.Origin.Offset, spec.Group, spec.Table))
	}
	c := first.Collection
	return badSpec(fmt.Errorf("table %s, batch %s: the change event at %s/%d@%d comes from data collection %q, but group %s matches the table by %s; "+
		"the group's transaction END events name %q, so its cuts would not wait for this table's transactions. Nothing of the batch was written. "+
		"To go on: starter stop %s, then start it again with --source-table %s (pipelines YAML: source_table: %s, then starter apply); "+
		"if the topic holds more than one source table, the table cannot be in a group with a transaction topic",
		spec.Table, b.ID, first.Origin.Topic, first.Origin.Partition, first.Origin.Offset, c, spec.Group, spec.DataCollectionText(), c, spec.Table, c, c))
}
