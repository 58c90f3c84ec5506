package merge

import (
	"slices"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Group is one primary key's changes within a batch, sorted by position
// with exact duplicates (same position) removed.
type Group struct {
	Key        cdc.Key
	Events     []*cdc.Event // ascending Seq, distinct
	Duplicates int          // events dropped because another had the same Seq
}

// GroupByKey splits a batch into per-key groups. Events are taken in any
// order; each group's events come out ascending by Seq, and two events of
// one key with the same Seq are the same source change delivered twice
// (docs/design.md rule 3), so only the first is kept. Groups are returned
// sorted by Key. Events without a key (truncates) must be filtered out by
// the caller.
func GroupByKey(events []*cdc.Event) []Group {
	first := make(map[cdc.Key]int32, len(events))
	next := make([]int32, len(events)) // chain of event indices per key, -1 terminated
	var order []int32                  // first event index of each key
	last := make([]int32, 0, len(events))
	for i, e := range events {
		if g, ok := first[e.Key]; ok {
			t := last[g]
			next[t] = int32(i)
			last[g] = int32(i)
			next[i] = -1
			continue
		}
		first[e.Key] = int32(len(order))
		order = append(order, int32(i))
		last = append(last, int32(i))
		next[i] = -1
	}
	groups := make([]Group, len(order))
	for gi, head := range order {
		g := Group{Key: events[head].Key}
		if next[head] == -1 {
			g.Events = []*cdc.Event{events[head]}
		} else {
			for i := head; i != -1; i = next[i] {
				g.Events = append(g.Events, events[i])
			}
			slices.SortStableFunc(g.Events, func(a, b *cdc.Event) int { return a.Seq.Compare(b.Seq) })
			g.Events = slices.CompactFunc(g.Events, func(a, b *cdc.Event) bool {
				if a.Seq == b.Seq {
					g.Duplicates++
					return true
				}
				return false
			})
		}
		groups[gi] = g
	}
	slices.SortFunc(groups, func(a, b Group) int {
		switch {
		case a.Key < b.Key:
			return -1
		case a.Key > b.Key:
			return 1
		}
		return 0
	})
	return groups
}
