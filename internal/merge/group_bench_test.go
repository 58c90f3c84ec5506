package merge

import (
	"math/rand/v2"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// BenchmarkGroupByKey groups one batch of the benchmark workload's shape:
// 50,000 changes of bigint keys spread over a 1 M-key table, in the
// order they were decoded, one in twenty delivered again at the end.
func BenchmarkGroupByKey(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var events, again []*cdc.Event
	for i := range 50_000 {
		k, err := cdc.EncodeKey(nil, cdc.Value{Kind: cdc.KindInt, I: int64(r.IntN(1_000_000))})
		if err != nil {
			b.Fatal(err)
		}
		e := &cdc.Event{Op: cdc.OpUpdate, Key: cdc.Key(k), Seq: cdc.PostgresSeq(uint64(i), uint64(i))}
		events = append(events, e)
		if i%20 == 0 {
			again = append(again, e)
		}
	}
	events = append(events, again...) // redelivered after the batch's other changes
	b.ReportAllocs()
	for b.Loop() {
		GroupByKey(events)
	}
}
