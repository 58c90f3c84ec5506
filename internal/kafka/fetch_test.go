package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestFetchExactSubRanges(t *testing.T) {
	_, c := newCluster(t)
	ctx := testCtx(t)
	seedTopic(t, c, "orders", 3, 10)

	// Given out of partition order on purpose; p2's range ends at the HWM.
	got, err := c.Fetch(ctx, "orders", []Range{{2, 5, 10}, {0, 2, 7}, {1, 0, 5}})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range []Range{{0, 2, 7}, {1, 0, 5}, {2, 5, 10}} {
		for o := r.From; o < r.To; o++ {
			want = append(want, fmt.Sprintf("%d/%d=v-%d-%d", r.Partition, o, r.Partition, o))
		}
	}
	if d := describe(got); !equalStrings(d, want) {
		t.Fatalf("Fetch =\n%v\nwant\n%v", d, want)
	}
	for _, r := range got {
		if r.Topic != "orders" || string(r.Key) != fmt.Sprintf("k-%d-%d", r.Partition, r.Offset) {
			t.Fatalf("record %d/%d: topic %q key %q", r.Partition, r.Offset, r.Topic, r.Key)
		}
	}

	// A single-offset range and a whole-partition range.
	got, err = c.Fetch(ctx, "orders", []Range{{1, 9, 10}, {0, 0, 10}})
	if err != nil {
		t.Fatal(err)
	}
	want = nil
	for o := range 10 {
		want = append(want, fmt.Sprintf("0/%d=v-0-%d", o, o))
	}
	want = append(want, "1/9=v-1-9")
	if d := describe(got); !equalStrings(d, want) {
		t.Fatalf("Fetch =\n%v\nwant\n%v", d, want)
	}
}

func TestFetchEmptyRanges(t *testing.T) {
	_, c := newCluster(t)
	ctx := testCtx(t)
	seedTopic(t, c, "orders", 3, 10)

	got, err := c.Fetch(ctx, "orders", []Range{{0, 3, 3}, {1, 10, 10}})
	if err != nil || len(got) != 0 {
		t.Fatalf("only empty ranges: got %v, %v; want nothing", describe(got), err)
	}
	got, err = c.Fetch(ctx, "orders", nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("no ranges: got %v, %v; want nothing", describe(got), err)
	}
	got, err = c.Fetch(ctx, "orders", []Range{{0, 4, 4}, {2, 8, 10}})
	if err != nil {
		t.Fatal(err)
	}
	if d, want := describe(got), []string{"2/8=v-2-8", "2/9=v-2-9"}; !equalStrings(d, want) {
		t.Fatalf("Fetch = %v, want %v", d, want)
	}
}

func TestFetchInvalidRanges(t *testing.T) {
	_, c := newCluster(t)
	ctx := testCtx(t)
	seedTopic(t, c, "orders", 3, 10)
	for _, rs := range [][]Range{
		{{0, 5, 4}},
		{{0, -1, 4}},
		{{0, 0, 2}, {0, 4, 6}},
		{{-1, 0, 1}},
	} {
		if _, err := c.Fetch(ctx, "orders", rs); err == nil {
			t.Errorf("Fetch(%v): want error", rs)
		}
	}
	if _, err := c.Fetch(ctx, "orders", []Range{{0, 5, 11}}); !errors.Is(err, ErrRangePastEnd) {
		t.Errorf("range past the HWM: err = %v, want ErrRangePastEnd", err)
	}
	if _, err := c.Fetch(ctx, "orders", []Range{{3, 0, 1}}); err == nil {
		t.Errorf("missing partition: want error")
	}
}

func TestFetchRetentionGap(t *testing.T) {
	cluster, c := newCluster(t)
	ctx := testCtx(t)
	seedTopic(t, c, "orders", 3, 10)
	if err := cluster.DeleteRecords("orders", 0, 5); err != nil {
		t.Fatal(err)
	}

	_, err := c.Fetch(ctx, "orders", []Range{{1, 0, 3}, {0, 2, 7}})
	if !errors.Is(err, ErrRetentionGap) {
		t.Fatalf("err = %v, want ErrRetentionGap", err)
	}
	var gap *RetentionGapError
	if !errors.As(err, &gap) {
		t.Fatalf("err = %T, want *RetentionGapError", err)
	}
	if want := (RetentionGapError{Topic: "orders", Partition: 0, From: 2, To: 5, LogStart: 5}); *gap != want {
		t.Fatalf("gap = %+v, want %+v", *gap, want)
	}
	const msg = "kafka: orders partition 0: offsets [2, 5) were deleted by retention (log start offset is 5)"
	if err.Error() != msg {
		t.Fatalf("message %q, want %q", err.Error(), msg)
	}

	// Entirely deleted range: all of it is missing.
	_, err = c.Fetch(ctx, "orders", []Range{{0, 0, 3}})
	if !errors.As(err, &gap) || gap.From != 0 || gap.To != 3 {
		t.Fatalf("err = %v, want gap [0, 3)", err)
	}

	// What is still there is still exact.
	got, err := c.Fetch(ctx, "orders", []Range{{0, 5, 8}})
	if err != nil {
		t.Fatal(err)
	}
	if d, want := describe(got), []string{"0/5=v-0-5", "0/6=v-0-6", "0/7=v-0-7"}; !equalStrings(d, want) {
		t.Fatalf("Fetch = %v, want %v", d, want)
	}
}

func TestFetchHonoursContext(t *testing.T) {
	_, c := newCluster(t)
	seedTopic(t, c, "orders", 1, 3)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Fetch(ctx, "orders", []Range{{0, 0, 3}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ctx: err = %v, want context.Canceled", err)
	}
}

func TestFetchCompactedOffsets(t *testing.T) {
	cluster, c := newCluster(t)
	ctx := testCtx(t)
	if err := cluster.CreateTopic("compacted", 1, map[string]string{"cleanup.policy": "compact"}); err != nil {
		t.Fatal(err)
	}
	// One batch per record (kfake compacts whole batches and never the
	// last one). The first key is never superseded: kfake moves the log
	// start offset up when the head batches are compacted away, which
	// Fetch (rightly) reports as a retention gap.
	keys := []string{"k9", "k0", "k1", "k0", "k1", "k2", "k2"}
	for i, k := range keys {
		r := &kgo.Record{Topic: "compacted", Partition: 0, Key: []byte(k), Value: fmt.Appendf(nil, "v%d", i)}
		if err := c.Produce(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	cluster.Compact()
	n := int64(len(keys))
	if start, err := c.StartOffsets(ctx, "compacted"); err != nil || start[0] != 0 {
		t.Fatalf("StartOffsets after compaction = %v, %v; want 0", start, err)
	}
	got, err := c.Fetch(ctx, "compacted", []Range{{0, 0, n}})
	if err != nil {
		t.Fatal(err)
	}
	whole := describe(got)
	t.Logf("after compaction: %v", whole)
	if want := []string{"0/0=v0", "0/3=v3", "0/4=v4", "0/5=v5", "0/6=v6"}; !equalStrings(whole, want) {
		t.Fatalf("after compaction = %v, want %v", whole, want)
	}
	if len(whole) >= int(n) {
		t.Fatalf("compaction removed nothing: %v", whole)
	}
	// Every sub-range ending in a hole completes and returns exactly the
	// surviving records inside it.
	for from := int64(0); from < n; from++ {
		for to := from + 1; to <= n; to++ {
			got, err := c.Fetch(ctx, "compacted", []Range{{0, from, to}})
			if err != nil {
				t.Fatalf("Fetch [%d,%d): %v", from, to, err)
			}
			var want []string
			for _, r := range whole {
				var p int32
				var o int64
				fmt.Sscanf(r, "%d/%d=", &p, &o)
				if o >= from && o < to {
					want = append(want, r)
				}
			}
			if d := describe(got); !equalStrings(d, want) {
				t.Errorf("Fetch [%d,%d) = %v, want %v", from, to, d, want)
			}
		}
	}
}

// The log start moves up after Fetch checked the ranges but before the
// consumer read them: the consumer must fail, not rewind to the new start.
func TestFetchRetentionGapWhileFetching(t *testing.T) {
	cluster, c := newCluster(t)
	ctx := testCtx(t)
	seedTopic(t, c, "orders", 3, 10)
	var once sync.Once
	cluster.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		once.Do(func() {
			cluster.SleepControl(func() {
				if err := cluster.DeleteRecords("orders", 2, 6); err != nil {
					t.Error(err)
				}
			})
		})
		return nil, nil, false
	})
	_, err := c.Fetch(ctx, "orders", []Range{{2, 3, 9}})
	var gap *RetentionGapError
	if !errors.As(err, &gap) || !errors.Is(err, ErrRetentionGap) {
		t.Fatalf("err = %v, want a retention gap", err)
	}
	if want := (RetentionGapError{Topic: "orders", Partition: 2, From: 3, To: 6, LogStart: 6}); *gap != want {
		t.Fatalf("gap = %+v, want %+v", *gap, want)
	}
	t.Log(err)
}
