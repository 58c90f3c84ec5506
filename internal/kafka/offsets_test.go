package kafka

import (
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestCreateTopicIdempotentAndOffsets(t *testing.T) {
	cluster, c := newCluster(t)
	ctx := testCtx(t)
	seedTopic(t, c, "orders", 3, 10)
	if err := c.CreateTopic(ctx, "orders", 3); err != nil {
		t.Fatalf("second CreateTopic: %v", err)
	}
	end, err := c.EndOffsets(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int32]int64{0: 10, 1: 10, 2: 10}; !maps.Equal(end, want) {
		t.Fatalf("EndOffsets = %v, want %v", end, want)
	}
	start, err := c.StartOffsets(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int32]int64{0: 0, 1: 0, 2: 0}; !maps.Equal(start, want) {
		t.Fatalf("StartOffsets = %v, want %v", start, want)
	}

	if err := cluster.DeleteRecords("orders", 1, 4); err != nil {
		t.Fatal(err)
	}
	start, err = c.StartOffsets(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int32]int64{0: 0, 1: 4, 2: 0}; !maps.Equal(start, want) {
		t.Fatalf("StartOffsets after DeleteRecords = %v, want %v", start, want)
	}
	end, err = c.EndOffsets(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int32]int64{0: 10, 1: 10, 2: 10}; !maps.Equal(end, want) {
		t.Fatalf("EndOffsets after DeleteRecords = %v, want %v", end, want)
	}
}

func TestUnknownTopic(t *testing.T) {
	_, c := newCluster(t)
	ctx := testCtx(t)
	if _, err := c.EndOffsets(ctx, "nope"); !errors.Is(err, ErrUnknownTopic) {
		t.Errorf("EndOffsets: err = %v, want ErrUnknownTopic", err)
	}
	if _, err := c.StartOffsets(ctx, "nope"); !errors.Is(err, ErrUnknownTopic) {
		t.Errorf("StartOffsets: err = %v, want ErrUnknownTopic", err)
	}
	if _, err := c.OffsetsAfterTime(ctx, "nope", time.Now()); !errors.Is(err, ErrUnknownTopic) {
		t.Errorf("OffsetsAfterTime: err = %v, want ErrUnknownTopic", err)
	}
	if _, err := c.Fetch(ctx, "nope", []Range{{0, 0, 1}}); !errors.Is(err, ErrUnknownTopic) {
		t.Errorf("Fetch: err = %v, want ErrUnknownTopic", err)
	}
}

func TestOffsetsAfterTime(t *testing.T) {
	_, c := newCluster(t)
	ctx := testCtx(t)
	if err := c.CreateTopic(ctx, "timed", 3); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var recs []*kgo.Record
	for p := range int32(3) {
		for i := range 10 {
			// partition p's record i is stamped t0 + i s + p ms.
			ts := t0.Add(time.Duration(i)*time.Second + time.Duration(p)*time.Millisecond)
			recs = append(recs, &kgo.Record{Topic: "timed", Partition: p, Value: []byte{byte(i)}, Timestamp: ts})
		}
	}
	if err := c.Produce(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		at   time.Time
		want map[int32]int64
	}{
		{"before all", t0.Add(-time.Hour), map[int32]int64{0: 0, 1: 0, 2: 0}},
		{"exact on p1 first", t0.Add(time.Millisecond), map[int32]int64{0: 1, 1: 0, 2: 0}},
		{"between", t0.Add(2500 * time.Millisecond), map[int32]int64{0: 3, 1: 3, 2: 3}},
		{"exact on p1", t0.Add(4*time.Second + time.Millisecond), map[int32]int64{0: 5, 1: 4, 2: 4}},
		{"after all", t0.Add(time.Hour), map[int32]int64{0: 10, 1: 10, 2: 10}},
	} {
		got, err := c.OffsetsAfterTime(ctx, "timed", tc.at)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !maps.Equal(got, tc.want) {
			t.Errorf("%s: OffsetsAfterTime = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestProduceByKeyKeepsOrder(t *testing.T) {
	cluster, _ := newCluster(t)
	c, err := NewClient(cluster.ListenAddrs()) // default (key) partitioning
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t)
	if err := c.CreateTopic(ctx, "keyed", 3); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i := range 30 {
		recs = append(recs, &kgo.Record{Topic: "keyed", Partition: 2, Key: []byte{'k', byte('a' + i%3)}, Value: []byte{byte(i)}})
	}
	if err := c.Produce(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	part := map[string]int32{}
	last := map[string]int64{}
	for _, r := range recs {
		k := string(r.Key)
		if p, ok := part[k]; ok && p != r.Partition {
			t.Fatalf("key %s on partitions %d and %d", k, p, r.Partition)
		}
		if o, ok := last[k]; ok && r.Offset <= o {
			t.Fatalf("key %s: offset %d after %d, order not kept", k, r.Offset, o)
		}
		part[k], last[k] = r.Partition, r.Offset
	}
	if err := c.Produce(ctx, &kgo.Record{Value: []byte("x")}); err == nil {
		t.Fatal("Produce without topic: want error")
	}
}

func TestEndOffsetsOfManyTopics(t *testing.T) {
	_, c := newCluster(t)
	seedTopic(t, c, "orders", 2, 3)
	seedTopic(t, c, "users", 1, 5)
	ends, errs, err := c.EndOffsetsOf(testCtx(t), []string{"orders", "users", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[int32]int64{"orders": {0: 3, 1: 3}, "users": {0: 5}}
	if len(ends) != len(want) || !maps.Equal(ends["orders"], want["orders"]) || !maps.Equal(ends["users"], want["users"]) {
		t.Fatalf("ends = %v, want %v", ends, want)
	}
	if len(errs) != 1 || !errors.Is(errs["missing"], ErrUnknownTopic) {
		t.Fatalf("errs = %v, want only missing: ErrUnknownTopic", errs)
	}
	ends, errs, err = c.EndOffsetsOf(testCtx(t), nil)
	if err != nil || len(ends) != 0 || len(errs) != 0 {
		t.Fatalf("no topics: %v %v %v", ends, errs, err)
	}
}
