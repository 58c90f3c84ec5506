package activities

import (
	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// groupProgress is a batch's report to its table's source group
// (payload.GroupProgress) from its decoded change events, in record
// order: per transaction id the streamed events (snapshot reads and
// events without an id left out), per partition the highest position.
// It is called only for a table with a group: a table without one
// allocates nothing.
func groupProgress(events []*cdc.Event) *payload.GroupProgress {
	g := &payload.GroupProgress{}
	high := map[int32]cdc.Seq{}
	for _, ev := range events {
		if ev.Seq != "" {
			if p := ev.Origin.Partition; ev.Seq > high[p] {
				high[p] = ev.Seq
			}
		}
		if ev.TxID == "" || ev.Snapshot != cdc.SnapshotNone {
			continue
		}
		if g.TxEvents == nil {
			g.TxEvents = map[string]int64{}
		}
		g.TxEvents[ev.TxID]++
	}
	if len(high) > 0 {
		g.FetchedPast = make(map[int32]string, len(high))
		for p, s := range high {
			g.FetchedPast[p] = s.Hex()
		}
	}
	return g
}
