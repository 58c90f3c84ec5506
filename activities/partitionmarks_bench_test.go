package activities

import (
	"strconv"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// BenchmarkPartitionMarks is the cost every Kafka batch now pays for the
// mirror's lakemirror.fetched-past and lakemirror.newest-tx
// (partitionMarks): a batch of 50,000 streamed changes on 3 partitions in
// runs of 500, each with a transaction block. Reported per event.
func BenchmarkPartitionMarks(b *testing.B) {
	const n = 50_000
	events := make([]*cdc.Event, n)
	for i := range events {
		lsn := uint64(1000 + i)
		events[i] = &cdc.Event{Op: cdc.OpUpdate, Seq: cdc.PostgresSeq(lsn, lsn), TxID: strconv.Itoa(500 + i/10), TxOrder: int64(i%10 + 1)}
		events[i].Origin.Partition = int32(i / 500 % 3)
	}
	b.ReportAllocs()
	for b.Loop() {
		fetched, newest := partitionMarks(events)
		if len(fetched) != 3 || len(newest) != 3 {
			b.Fatal(fetched, newest)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/event")
}
