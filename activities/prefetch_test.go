package activities

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// kfakeBroker starts an in-process kfake broker and returns it with a
// client for it; both are closed when the test ends.
func kfakeBroker(t *testing.T) (*kfake.Cluster, *kafka.Client) {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	kc, err := kafka.NewClient(cluster.ListenAddrs())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	return cluster, kc
}

// kafkaTopic starts an in-process kfake broker holding topic (one
// partition) with msgs at offsets 0.., and returns a client for it.
func kafkaTopic(t *testing.T, topic string, msgs []sample.Message) *kafka.Client {
	t.Helper()
	ctx := context.Background()
	_, kc := kfakeBroker(t)
	if err := kc.CreateTopic(ctx, topic, 1); err != nil {
		t.Fatal(err)
	}
	recs := make([]*kgo.Record, len(msgs))
	for i, m := range msgs {
		recs[i] = &kgo.Record{Topic: topic, Key: m.Key, Value: m.Value}
	}
	if err := kc.Produce(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	return kc
}

// ApplyBatch prefetches the next full batch while it applies its own, the
// next ApplyBatch for exactly those ranges uses it, and one for other
// ranges drops it and fetches its own: either way the tables end exactly
// as when every batch fetches and decodes for itself (applyStream).
func TestPrefetchAppliesLikeAFetch(t *testing.T) {
	ctx := context.Background()
	s := sample.Generate(sample.Options{Seed: 7, Inserts: 150, Updates: 400, Deletes: 60, Duplicates: 30, Late: 40,
		OutOfOrder: 20, UnseenDeletes: 3, Tombstones: true})
	spec := TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"}, MaxEvents: 100, MaxQuarantine: 1000}.Defaults()
	kc := kafkaTopic(t, spec.Topic, s.Delivered)
	total := int64(len(s.Delivered))

	// batches of 100, but batch 4 takes 60: the prefetch made after batch 3
	// ([300,400)) does not match it
	var sizes []int
	for off, i := int64(0), 0; off < total; i++ {
		n := min(int64(100), total-off)
		if i == 3 {
			n = 60
		}
		sizes = append(sizes, int(n))
		off += n
	}
	cat := mustCatalog(t)
	a := New(cat, kc)
	a.StateDir = t.TempDir()
	var off int64
	var used []int
	for i, n := range sizes {
		b := lake.Batch{ID: fmt.Sprintf("b%d", i+1), Seq: int64(i + 1), Topic: spec.Topic,
			Ranges: []lake.Range{{From: off, To: off + int64(n)}}, EndOffsets: lake.Offsets{0: off + int64(n)}}
		off += int64(n)
		res, err := a.ApplyBatch(ctx, ApplyRequest{Spec: spec, Batch: b})
		if err != nil {
			t.Fatalf("batch %d: %v", i+1, err)
		}
		if res.Records != n {
			t.Fatalf("batch %d: %d records, want %d", i+1, res.Records, n)
		}
		if res.Prefetched {
			used = append(used, i+1)
		}
		if res.History.Pending > 0 {
			if _, err := a.RebuildKeys(ctx, RebuildRequest{Spec: spec}); err != nil {
				t.Fatalf("rebuild after batch %d: %v", i+1, err)
			}
		}
		st, _, _ := a.state(spec)
		next := st.prefetch.swap(nil)
		st.prefetch.swap(next)
		wantNext := off+int64(spec.MaxEvents) <= total
		if (next != nil) != wantNext {
			t.Fatalf("after batch %d (offset %d of %d): prefetch %v, want one: %v", i+1, off, total, next != nil, wantNext)
		}
		if next != nil && !slices.Equal(next.ranges, []lake.Range{{From: off, To: off + int64(spec.MaxEvents)}}) {
			t.Fatalf("after batch %d: prefetched %v", i+1, next.ranges)
		}
	}
	// every batch after the first used the prefetch but batch 4 (other
	// ranges) and those after a batch that left less than a full batch
	var want []int
	for i := 2; i <= len(sizes); i++ {
		prevEnd := int64(0)
		for _, n := range sizes[:i-1] {
			prevEnd += int64(n)
		}
		if i != 4 && prevEnd+int64(spec.MaxEvents) <= total {
			want = append(want, i)
		}
	}
	if !slices.Equal(used, want) {
		t.Fatalf("batches that used a prefetch: %v, want %v", used, want)
	}

	plain := mustCatalog(t)
	applyStream(t, plain, s.Delivered, sizes, func(int) bool { return false })
	name := lake.TableName{Namespace: "shop", Name: "orders"}
	mirrorCols := []string{"order_id", "status", "amount", lake.ColSeq, lake.ColDeleted}
	if got, want := tableText(t, cat, name, false, mirrorCols...), tableText(t, plain, name, false, mirrorCols...); got != want {
		t.Fatalf("mirror differs from the fetched-per-batch run\ngot:\n%s\nwant:\n%s", got, want)
	}
	histCols := []string{"order_id", lake.ColSeq, lake.ColValidToSeq, lakecat.ColRowHash, lake.ColIsCurrent}
	if got, want := tableText(t, cat, name, true, histCols...), tableText(t, plain, name, true, histCols...); got != want {
		t.Fatalf("history differs from the fetched-per-batch run\ngot:\n%s\nwant:\n%s", got, want)
	}
}
