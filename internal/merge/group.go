package merge

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"

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
	// every group's events in one array, each group's part capped so that
	// an append by a caller copies instead of overwriting the next group
	all := make([]*cdc.Event, 0, len(events))
	for gi, head := range order {
		g := Group{Key: events[head].Key}
		from := len(all)
		for i := head; i != -1; i = next[i] {
			all = append(all, events[i])
		}
		g.Events = all[from:len(all):len(all)]
		if len(g.Events) > 1 {
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
	return sortByKey(groups)
}

// sortByKey returns groups sorted by Key (bytewise). It sorts the keys'
// first 16 bytes as two integers, comparing whole keys only where those
// are equal, then moves each group once.
func sortByKey(groups []Group) []Group {
	type prefix struct {
		hi, lo uint64
		i      int32
	}
	ps := make([]prefix, len(groups))
	for i := range groups {
		var b [16]byte
		copy(b[:], groups[i].Key)
		ps[i] = prefix{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:]), int32(i)}
	}
	slices.SortFunc(ps, func(a, b prefix) int {
		if c := cmp.Compare(a.hi, b.hi); c != 0 {
			return c
		}
		if c := cmp.Compare(a.lo, b.lo); c != 0 {
			return c
		}
		return strings.Compare(string(groups[a.i].Key), string(groups[b.i].Key))
	})
	out := make([]Group, len(groups))
	for j, p := range ps {
		out[j] = groups[p.i]
	}
	return out
}
