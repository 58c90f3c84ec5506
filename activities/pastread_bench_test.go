package activities

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
)

// BenchmarkPastRead: what a worker that built its local state from the
// tables pays the first time late keys need their past changes from
// bronze (pastEvents), for a table of `rows` keys written in batches of
// 50,000 (creates in key order, then updates of every key in random
// order), with `late` uniformly random keys: read for those keys alone
// ("keys") or every bronze record loaded once ("all"). The state build
// is outside the timing. Reported: bronze rows, files read, rows read
// whole and `_key` values scanned per operation.
func BenchmarkPastRead(b *testing.B) {
	const rows, batch = 200_000, 50_000
	w := newWrun(b, TableSpec{WithoutHistory: true})
	row := func(k int, s string) string {
		return fmt.Sprintf(`{"order_id":%d,"status":%q,"note":"note of order %d, padded to look like a row"}`, k, s, k)
	}
	var evs []wev
	for k := range rows {
		evs = append(evs, pgw("c", "null", row(k, "a"), 100+k))
		if len(evs) == batch {
			w.apply(evs, false)
			evs = evs[:0]
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	order := r.Perm(rows)
	for i, k := range order {
		evs = append(evs, pgw("u", "null", row(k, "b"), 10_000_000+i))
		if len(evs) == batch {
			w.apply(evs, false)
			evs = evs[:0]
		}
	}
	ctx := context.Background()
	for _, late := range []int{1, 100, 2_500} {
		for _, mode := range []string{"keys", "all"} {
			b.Run(fmt.Sprintf("late=%d/%s", late, mode), func(b *testing.B) {
				var scan tableread.BronzeKeyScan
				for b.Loop() {
					b.StopTimer()
					w.restart()
					st, name, err := w.a.state(w.spec)
					if err != nil {
						b.Fatal(err)
					}
					m, _ := st.writers(w.a, name)
					if err := m.EnsureState(ctx); err != nil {
						b.Fatal(err)
					}
					keys := make([]cdc.Key, late)
					for i := range keys {
						keys[i] = orderKeyOfInt(int64(r.IntN(rows)))
					}
					testPastRead = mode
					b.StartTimer()
					byKey, err := w.a.pastEvents(ctx, st, name, keys)
					b.StopTimer()
					testPastRead = ""
					if err != nil || len(byKey) == 0 {
						b.Fatalf("%d keys: %v", len(byKey), err)
					}
					if mode == "keys" {
						_, scan, _ = tableread.ReadBronzeKeysCounted(ctx, w.cat, name, keys)
					}
					b.StartTimer()
				}
				if mode == "keys" {
					b.ReportMetric(float64(scan.Files), "files/op")
					b.ReportMetric(float64(scan.RowsRead), "rows-read/op")
					b.ReportMetric(float64(scan.KeysScanned), "keys-scanned/op")
				}
				b.ReportMetric(float64(2*rows), "bronze-rows")
			})
		}
	}
}

// orderKeyOfInt is the key of the orders row with order_id i.
func orderKeyOfInt(i int64) cdc.Key {
	k, _ := cdc.KeyOf(&cdc.Row{Cols: cdc.NewColumns([]string{"order_id"}), Vals: []cdc.Value{cdc.Int(i)}}, []string{"order_id"})
	return k
}
