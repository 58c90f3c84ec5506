package workflows

import (
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/lake"
)

var detailsStart = time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)

// A streaming table's current details: phase and why, offsets, high
// watermarks and lag per partition, freshness, the last batches with
// their counts and durations, the Iceberg snapshot ids of the last batch,
// the effective settings (an update included) and the worker.
func TestDetailsStreaming(t *testing.T) {
	sp := spec.Defaults()
	sp.MaxEvents, sp.MaxBatchEvents = 200, 5000 // as after a settings update
	st := &TableState{Spec: sp, Phase: PhaseStream, Offsets: lake.Offsets{0: 120, 1: 80}, HighWatermarks: lake.Offsets{0: 150, 1: 80},
		BatchSeq: 7, NewestSourceTs: detailsStart.Add(-(7763*time.Hour + 13*time.Minute + 26*time.Second)).UnixMicro(),
		Totals: Totals{Batches: 7, Records: 1234}, Owner: "lakemirror@w1", route: 1,
		RecentBatches: []BatchLine{
			{Seq: 6, Records: 200, Changes: 199, Applied: 190, Stale: 5, Duplicates: 4, Millis: 1250, Done: detailsStart.Add(-2 * time.Second), Bronze: 11, Mirror: 12, History: 13},
			{Seq: 7, Records: 34, Changes: 34, Applied: 34, Millis: 480, Done: detailsStart.Add(-time.Second), Bronze: 21, History: 23},
		},
		// batch 7 changed nothing in the mirror: its newest commit is batch 6's
		Snapshots: TableSnapshots{Bronze: SnapshotAt{ID: 21, Batch: 7}, Mirror: SnapshotAt{ID: 12, Batch: 6}, History: SnapshotAt{ID: 23, Batch: 7}}}
	want := "**Phase: stream** · table `shop.orders` ← topic `shop.public.orders`\n\n" +
		"Streaming: applying batches as records arrive.\n\n" +
		"| partition | offset (next to read) | high watermark | lag |\n|---:|---:|---:|---:|\n" +
		"| 0 | 120 | 150 | 30 |\n| 1 | 80 | 80 | 0 |\n\n" +
		"**Lag: 30 records** (all partitions, at the last plan) · **freshness 323d11h13m** (newest applied source commit 2026-01-15T15:46:34Z)\n\n" +
		"**Last batches** (7 applied in all, 1234 records):\n\n" +
		"| batch | records | changes | applied | stale | duplicates | duration | applied at (UTC) |\n|---:|---:|---:|---:|---:|---:|---:|---|\n" +
		"| 7 | 34 | 34 | 34 | 0 | 0 | 480ms | 2026-12-05 02:59:59 |\n" +
		"| 6 | 200 | 199 | 190 | 5 | 4 | 1.25s | 2026-12-05 02:59:58 |\n\n" +
		"**Iceberg snapshots** after batch 7: bronze `21`, mirror `12` (batch 6), history `23`\n\n" +
		"**Settings** (in effect, with updates): batch size 200 records, up to 5000 while behind · max wait 1s · max quarantine 100 · key order_id · tables bronze, mirror, history · worker `lakemirror@w1`\n"
	if got := st.details(detailsStart); got != want {
		t.Fatalf("details:\n%s\nwant:\n%s", got, want)
	}
}
