package activities

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// A table started from "latest" and stopped before its first batch
// committed, then started again from "latest" while records arrive
// (issue 34 item 1): before, the new workflow recovered nothing and
// started at the topic's end of that moment, skipping every record
// produced since the first start (100 of 100 in the breaker's run, lag 0).
// The first plan records its starting offsets in the catalog
// (lakecat.StartRecord); Recover goes on from them. A retried first plan
// keeps them; "earliest" ignores them (it reads more); drop removes them.
func TestLatestStartSurvivesAStop(t *testing.T) {
	ctx := context.Background()
	_, kc := kfakeBroker(t)
	spec := TableSpec{Table: "shop.latest", Topic: "shop.public.latest", KeyColumns: []string{"order_id"},
		StartFrom: "latest", MaxEvents: 100, MaxWait: 20 * time.Millisecond}.Defaults()
	if err := kc.CreateTopic(ctx, spec.Topic, 1); err != nil {
		t.Fatal(err)
	}
	msgs := sample.Generate(sample.Options{Seed: 3, Inserts: 10}).Delivered
	produce := func(ms []sample.Message) {
		t.Helper()
		for _, m := range ms {
			if err := kc.Produce(ctx, &kgo.Record{Topic: spec.Topic, Key: m.Key, Value: m.Value}); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(msgs[:2]) // before the first start: not the table's
	cat := mustCatalog(t)
	a := New(cat, kc)
	rec, err := a.Recover(ctx, spec)
	if err != nil || rec.Source != "none" || len(rec.Offsets) != 0 {
		t.Fatalf("first start: recovered %+v, %v; want nothing", rec, err)
	}
	plan, err := a.PlanBatch(ctx, PlanRequest{Spec: spec, IdleWait: time.Minute})
	if err != nil || len(plan.Ranges) != 0 || !maps.Equal(plan.Offsets, lake.Offsets{0: 2}) {
		t.Fatalf("first plan: %+v, %v; want no ranges from {0: 2}", plan, err)
	}

	// stopped before any commit (the workflow is gone); records arrive;
	// started again from latest on another worker
	produce(msgs[2:5])
	b := New(cat, kc)
	rec, err = b.Recover(ctx, spec)
	if err != nil || rec.Source != "start" || !maps.Equal(rec.Offsets, lake.Offsets{0: 2}) || rec.BatchSeq != 0 {
		t.Fatalf("second start: recovered %+v, %v; want offsets {0: 2} from the start record", rec, err)
	}
	plan, err = b.PlanBatch(ctx, PlanRequest{Spec: spec, Offsets: rec.Offsets})
	if want := []lake.Range{{Partition: 0, From: 2, To: 5}}; err != nil || !rangesEqual(plan.Ranges, want) {
		t.Fatalf("second start's plan: ranges %v, %v; want %v", plan.Ranges, err, want)
	}
	// a retried first plan (its answer lost) takes the recorded offsets
	plan, err = b.PlanBatch(ctx, PlanRequest{Spec: spec})
	if err != nil || len(plan.Ranges) != 0 || !maps.Equal(plan.Offsets, lake.Offsets{0: 2}) {
		t.Fatalf("retried first plan: %+v, %v; want no ranges from {0: 2}", plan, err)
	}
	// from earliest: nothing recovered, the plan reads from the log start
	early := spec
	early.StartFrom = "earliest"
	if rec, err = b.Recover(ctx, early); err != nil || rec.Source != "none" || len(rec.Offsets) != 0 {
		t.Fatalf("start from earliest: recovered %+v, %v; want nothing", rec, err)
	}
	// another topic's record is not this topic's start
	other := spec
	other.Topic = "shop.public.other"
	if rec, err = b.Recover(ctx, other); err != nil || rec.Source != "none" {
		t.Fatalf("another topic: recovered %+v, %v; want nothing", rec, err)
	}
	name, _ := lake.ParseTableName(spec.Table)
	if err := lakecat.ClearStart(ctx, cat, name); err != nil {
		t.Fatal(err)
	}
	if rec, err = b.Recover(ctx, spec); err != nil || rec.Source != "none" {
		t.Fatalf("after the start record was removed: recovered %+v, %v; want nothing", rec, err)
	}
}
