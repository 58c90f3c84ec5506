package merge

import (
	"math/rand/v2"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// genStream returns a clean in-order stream over a few keys: creates,
// updates, deletes (with full before images, as with REPLICA IDENTITY FULL
// or MySQL), re-creates after deletes, and deletes of never-seen keys.
func genStream(r *rand.Rand, n int) []*cdc.Event {
	live := map[int64]bool{}
	var out []*cdc.Event
	statuses := []string{"placed", "paid", "shipped", "delivered"}
	seq := uint64(100)
	for len(out) < n {
		seq += uint64(1 + r.IntN(3))
		id := int64(1 + r.IntN(8))
		st := statuses[r.IntN(len(statuses))]
		cents := int64(r.IntN(10000))
		switch {
		case r.IntN(10) == 0: // delete of a key never seen (beyond the live range)
			out = append(out, ev(cdc.OpDelete, seq, 100+id, "", 0))
		case !live[id]:
			out = append(out, ev(cdc.OpCreate, seq, id, st, cents))
			live[id] = true
		case r.IntN(4) == 0:
			out = append(out, ev(cdc.OpDelete, seq, id, st, cents))
			live[id] = false
		default:
			out = append(out, ev(cdc.OpUpdate, seq, id, st, cents))
		}
	}
	return out
}

// deliver applies Kafka-like faults: re-deliveries of earlier events and
// a full shuffle, then splits the result into random batches.
func deliver(r *rand.Rand, clean []*cdc.Event) [][]*cdc.Event {
	d := append([]*cdc.Event(nil), clean...)
	for range r.IntN(len(clean) + 1) {
		d = append(d, clean[r.IntN(len(clean))])
	}
	r.Shuffle(len(d), func(i, j int) { d[i], d[j] = d[j], d[i] })
	var batches [][]*cdc.Event
	for len(d) > 0 {
		n := 1 + r.IntN(len(d))
		batches = append(batches, d[:n])
		d = d[n:]
	}
	return batches
}

// Design rule 7: any permutation, duplication and batch split of the same
// events gives the mirror of one clean in-order pass.
func TestPropertyOrderIndependence(t *testing.T) {
	for seed := range uint64(3000) {
		r := rand.New(rand.NewPCG(seed, 42))
		clean := genStream(r, 1+r.IntN(40))
		want := simMirror{}
		for _, e := range clean {
			want.apply([]*cdc.Event{e}, orderKey)
		}
		got := simMirror{}
		batches := deliver(r, clean)
		for _, b := range batches {
			got.apply(b, orderKey)
		}
		if got.dump() != want.dump() {
			t.Fatalf("seed %d: %d events in %d batches\ngot:\n%s\nwant:\n%s", seed, len(clean), len(batches), got.dump(), want.dump())
		}
		// and replaying everything once more changes nothing
		for _, b := range batches {
			got.apply(b, orderKey)
		}
		if got.dump() != want.dump() {
			t.Fatalf("seed %d: replay changed the mirror", seed)
		}
	}
}

// One batch holding the whole stream equals one event per batch.
func TestPropertyBatchSizeIndependence(t *testing.T) {
	for seed := range uint64(1000) {
		r := rand.New(rand.NewPCG(seed, 7))
		clean := genStream(r, 1+r.IntN(60))
		one, each := simMirror{}, simMirror{}
		one.apply(clean, orderKey)
		for _, e := range clean {
			each.apply([]*cdc.Event{e}, orderKey)
		}
		if one.dump() != each.dump() {
			t.Fatalf("seed %d:\none batch:\n%s\nper event:\n%s", seed, one.dump(), each.dump())
		}
	}
}
