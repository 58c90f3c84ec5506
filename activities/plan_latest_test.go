package activities

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// A table started from "latest" (breaker findings, 2026-12-04). Its first
// plan returns at once, with the high watermarks as starting offsets and
// no ranges, although it may wait for records: before, it waited up to
// IdleWait re-reading the high watermarks, and every record produced
// meanwhile was skipped when it returned. Records produced after it are
// planned by the next plan. A partition added to the topic once the table
// has offsets is read from its log start, and so is a topic created after
// the table started (TopicWasMissing): before, both started at the high
// watermark of the moment, skipping what was written to them first.
func TestPlanFromLatest(t *testing.T) {
	// a guard against waiting IdleWait, not a timing assertion
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cluster, kc := kfakeBroker(t)
	raw, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(raw.Close)
	msgs := sample.Generate(sample.Options{Seed: 5, Inserts: 20}).Delivered
	produce := func(topic string, partition int32, ms []sample.Message) {
		t.Helper()
		for _, m := range ms {
			if err := raw.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: partition, Key: m.Key, Value: m.Value}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	spec := TableSpec{Table: "shop.latest", Topic: "shop.public.latest", KeyColumns: []string{"order_id"},
		StartFrom: "latest", MaxEvents: 100, MaxWait: 20 * time.Millisecond}.Defaults()
	if err := kc.CreateTopic(ctx, spec.Topic, 1); err != nil {
		t.Fatal(err)
	}
	produce(spec.Topic, 0, msgs[:4]) // before the start: not the table's
	a := New(mustCatalog(t), kc)

	plan, err := a.PlanBatch(ctx, PlanRequest{Spec: spec, IdleWait: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Ranges) != 0 || !maps.Equal(plan.Offsets, lake.Offsets{0: 4}) {
		t.Fatalf("first plan from latest: ranges %v, offsets %v; want none and {0: 4}", plan.Ranges, plan.Offsets)
	}

	produce(spec.Topic, 0, msgs[4:7]) // after the start
	plan, err = a.PlanBatch(ctx, PlanRequest{Spec: spec, Offsets: plan.Offsets})
	if err != nil {
		t.Fatal(err)
	}
	if want := []lake.Range{{Partition: 0, From: 4, To: 7}}; !rangesEqual(plan.Ranges, want) {
		t.Fatalf("records produced after the start: ranges %v, want %v", plan.Ranges, want)
	}

	// a second partition, added while the table runs, with two records
	if resp, err := kadm.NewClient(raw).UpdatePartitions(ctx, 2, spec.Topic); err != nil || resp.Error() != nil {
		t.Fatal(err, resp.Error())
	}
	// a new producer: the first one's metadata still has one partition
	raw2, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(raw2.Close)
	raw = raw2
	produce(spec.Topic, 1, msgs[7:9])
	// the client caches metadata a few seconds (kgo's MetadataMinAge)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ends, err := kc.EndOffsets(ctx, spec.Topic); err == nil && len(ends) == 2 {
			break
		}
	}
	plan, err = a.PlanBatch(ctx, PlanRequest{Spec: spec, Offsets: plan.Offsets})
	if err != nil {
		t.Fatal(err)
	}
	if want := []lake.Range{{Partition: 1, From: 0, To: 2}}; !rangesEqual(plan.Ranges, want) {
		t.Fatalf("a partition added later: ranges %v, want %v", plan.Ranges, want)
	}

	// a topic created after the table started from latest: its last plan
	// found no topic
	late := spec
	late.Table, late.Topic = "shop.late", "shop.public.late"
	if err := kc.CreateTopic(ctx, late.Topic, 1); err != nil {
		t.Fatal(err)
	}
	produce(late.Topic, 0, msgs[9:12])
	plan, err = a.PlanBatch(ctx, PlanRequest{Spec: late, TopicWasMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := []lake.Range{{Partition: 0, From: 0, To: 3}}; !rangesEqual(plan.Ranges, want) {
		t.Fatalf("a topic created after the start: ranges %v, want %v", plan.Ranges, want)
	}
}

func rangesEqual(a, b []lake.Range) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Partition != b[i].Partition || a[i].From != b[i].From || a[i].To != b[i].To {
			return false
		}
	}
	return true
}

// StartOffsets: where partitions without an offset start.
func TestStartOffsets(t *testing.T) {
	starts, ends := map[int32]int64{0: 3, 1: 0, 2: 5}, map[int32]int64{0: 10, 1: 7, 2: 9}
	latest, earliest := TableSpec{StartFrom: "latest"}, TableSpec{StartFrom: "earliest"}
	for _, c := range []struct {
		name    string
		spec    TableSpec
		from    lake.Offsets
		missing bool
		want    lake.Offsets
	}{
		{"earliest, first plan", earliest, nil, false, lake.Offsets{0: 3, 1: 0, 2: 5}},
		{"latest, first plan", latest, nil, false, lake.Offsets{0: 10, 1: 7, 2: 9}},
		{"latest, topic created after the start", latest, nil, true, lake.Offsets{0: 3, 1: 0, 2: 5}},
		{"latest, partitions added later", latest, lake.Offsets{0: 8}, false, lake.Offsets{0: 8, 1: 0, 2: 5}},
		{"earliest, partitions added later", earliest, lake.Offsets{0: 8}, false, lake.Offsets{0: 8, 1: 0, 2: 5}},
	} {
		if got := StartOffsets(c.spec, c.from, c.missing, starts, ends); !maps.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
