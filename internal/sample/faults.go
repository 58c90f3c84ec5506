package sample

import (
	"math/rand/v2"
	"slices"
)

// deliver applies the delivery faults to a copy of clean, in this order:
// late records, neighbour swaps, then restart replays (duplicates of what
// was already delivered at that point).
func deliver(rng *rand.Rand, clean []Message, o Options) []Message {
	if o.Late+o.OutOfOrder+o.Duplicates == 0 {
		return slices.Clone(clean)
	}
	d := slices.Clone(clean)
	d = moveLate(rng, d, o.Late, o.LateAnywhere)
	swapNeighbours(rng, d, o.OutOfOrder)
	return replay(rng, d, o.Duplicates)
}

// moveLate takes up to count change records (not tombstones) from the
// first three quarters of d and re-inserts each at a random position in
// the last tenth of the stream (anywhere: at a random position after its
// own).
func moveLate(rng *rand.Rand, d []Message, count int, anywhere bool) []Message {
	var cand []int
	for i := range len(d) * 3 / 4 {
		if !d[i].Tombstone() {
			cand = append(cand, i)
		}
	}
	count = min(count, len(cand))
	if count == 0 {
		return d
	}
	for i := range count { // partial Fisher–Yates: cand[:count] is the sample
		j := i + rng.IntN(len(cand)-i)
		cand[i], cand[j] = cand[j], cand[i]
	}
	picked := slices.Clone(cand[:count])
	slices.Sort(picked)
	moved := make([]Message, 0, count)
	from := make([]int, 0, count) // each moved record's place among the rest
	rest := make([]Message, 0, len(d))
	k := 0
	for i, m := range d {
		if k < len(picked) && picked[k] == i {
			moved = append(moved, m)
			from = append(from, len(rest))
			k++
			continue
		}
		rest = append(rest, m)
	}
	for j, m := range moved {
		lo := len(rest) * 9 / 10
		if anywhere {
			lo = from[j] + j + 1 // after its own place (earlier moved ones inserted before it shift it by at most j)
			lo = min(lo, len(rest))
		}
		rest = slices.Insert(rest, lo+rng.IntN(len(rest)-lo+1), m)
	}
	return rest
}

// swapNeighbours swaps count pairs of adjacent change records.
func swapNeighbours(rng *rand.Rand, d []Message, count int) {
	if len(d) < 2 {
		return
	}
	for range count {
		for range 64 { // find a pair of changes; give up on tombstone-only streams
			i := rng.IntN(len(d) - 1)
			if !d[i].Tombstone() && !d[i+1].Tombstone() {
				d[i], d[i+1] = d[i+1], d[i]
				break
			}
		}
	}
}

// replay adds exactly count duplicates as connector restarts: at a random
// point p, the run of up to 8 records delivered just before p is delivered
// again.
func replay(rng *rand.Rand, d []Message, count int) []Message {
	if count == 0 || len(d) == 0 {
		return d
	}
	type restart struct{ at, run int } // replay d[at-run:at] after d[at-1]
	var rs []restart
	for left := count; left > 0; {
		run := min(left, 1+rng.IntN(8), len(d))
		rs = append(rs, restart{at: run + rng.IntN(len(d)-run+1), run: run})
		left -= run
	}
	slices.SortStableFunc(rs, func(a, b restart) int { return a.at - b.at })
	out := make([]Message, 0, len(d)+count)
	next := 0
	for i, m := range d {
		out = append(out, m)
		for next < len(rs) && rs[next].at == i+1 {
			out = append(out, d[i+1-rs[next].run:i+1]...)
			next++
		}
	}
	return out
}
