package activities

import (
	"slices"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/cut"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// groupProgress is a batch's report to its table's source group
// (payload.GroupProgress) from its decoded change events, in record
// order: per transaction id the streamed events by identity (their
// data_collection_order values as ranges, or the positions of those
// without one; snapshot reads and events without an id left out) and
// their highest position, per
// partition the highest position. It is called only for a table with a
// group: a table without one allocates nothing.
func groupProgress(events []*cdc.Event) *payload.GroupProgress {
	g := &payload.GroupProgress{}
	high := map[int32]cdc.Seq{}
	type tx struct {
		orders cut.Orders
		seqs   []cdc.Seq
		last   cdc.Seq
	}
	var txs map[string]*tx
	for _, ev := range events {
		if ev.Seq != "" {
			if p := ev.Origin.Partition; ev.Seq > high[p] {
				high[p] = ev.Seq
			}
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
	if len(high) > 0 {
		g.FetchedPast = make(map[int32]string, len(high))
		for p, s := range high {
			g.FetchedPast[p] = s.Hex()
		}
	}
	return g
}
