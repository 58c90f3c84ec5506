package cut

import (
	"fmt"
	"slices"
)

// Orders is a set of a transaction's data_collection_order values in one
// table (Debezium provide.transaction.metadata=true: each change event's
// `transaction.data_collection_order`, from 1, its place among its
// transaction's events of its data collection; the same when the event is
// redelivered), as closed ranges [lo, hi] of consecutive values: sorted,
// disjoint and not adjacent (the normal form Union returns), so that a
// transaction's events in one batch, consecutive in the usual case, are
// one pair: [[1,3],[5,5]] is {1, 2, 3, 5}. JSON: an array of pairs.
type Orders [][2]int64

// Check reports whether every range of o has 1 ≤ lo ≤ hi (the form the
// Tracker takes; Union brings any such list to normal form).
func (o Orders) Check() error {
	for _, r := range o {
		if r[0] < 1 || r[1] < r[0] {
			return fmt.Errorf("cut: order range [%d,%d]: want 1 ≤ lo ≤ hi", r[0], r[1])
		}
	}
	return nil
}

// Len is the number of values in o (o in normal form).
func (o Orders) Len() int64 {
	var n int64
	for _, r := range o {
		n += r[1] - r[0] + 1
	}
	return n
}

// Contains reports whether n is in o (o in normal form).
func (o Orders) Contains(n int64) bool {
	i, _ := slices.BinarySearchFunc(o, n, func(r [2]int64, n int64) int {
		switch {
		case r[1] < n:
			return -1
		case r[0] > n:
			return 1
		}
		return 0
	})
	return i < len(o) && o[i][0] <= n && n <= o[i][1]
}

// Add returns o with n added, in normal form (o in normal form; Add may
// change o's array in place: use the result, not o).
func (o Orders) Add(n int64) Orders {
	if k := len(o); k > 0 && o[k-1][0] <= n && n <= o[k-1][1]+1 { // the usual case: in order
		o[k-1][1] = max(o[k-1][1], n)
		return o
	}
	return Union(o, Orders{{n, n}})
}

// Union returns the union of the sets, in normal form, in a new slice
// (the inputs' ranges need 1 ≤ lo ≤ hi but need not be in normal form;
// they are not changed).
func Union(sets ...Orders) Orders {
	var all Orders
	for _, s := range sets {
		all = append(all, s...)
	}
	if len(all) == 0 {
		return nil
	}
	slices.SortFunc(all, func(a, b [2]int64) int {
		if a[0] != b[0] {
			return cmpInt(a[0], b[0])
		}
		return cmpInt(a[1], b[1])
	})
	out := all[:1]
	for _, r := range all[1:] {
		last := &out[len(out)-1]
		if r[0] <= last[1]+1 {
			last[1] = max(last[1], r[1])
			continue
		}
		out = append(out, r)
	}
	return slices.Clip(out)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
