package activities

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/sample"
)

func TestBatchBudget(t *testing.T) {
	grow := TableSpec{MaxEvents: 100, MaxBatchEvents: 300}
	for _, c := range []struct {
		spec  TableSpec
		avail int64
		want  int64
	}{
		{grow, 0, 100}, {grow, 150, 100}, {grow, 200, 100}, {grow, 201, 100}, {grow, 202, 101},
		{grow, 400, 200}, {grow, 600, 300}, {grow, 10_000, 300},
		{TableSpec{MaxEvents: 100}, 10_000, 100},                     // no growth configured
		{TableSpec{MaxEvents: 100, MaxBatchEvents: 50}, 10_000, 100}, // a bound below the batch size is no growth
	} {
		if got := c.spec.BatchBudget(c.avail); got != c.want {
			t.Errorf("%+v with %d waiting: budget %d, want %d", c.spec, c.avail, got, c.want)
		}
	}
}

// While more than two batches wait, PlanBatch plans larger batches (half
// of what waits, up to MaxBatchEvents), and back at the batch size once
// the lag is down.
func TestPlanBatchGrowsWhileBehind(t *testing.T) {
	ctx := context.Background()
	s := sample.Generate(sample.Options{Seed: 3, Inserts: 400, Updates: 600})
	spec := TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"},
		MaxEvents: 100, MaxBatchEvents: 300}.Defaults()
	total := int64(len(s.Delivered))
	a := New(mustCatalog(t), kafkaTopic(t, spec.Topic, s.Delivered))
	var got []int64
	for from := int64(0); from < total; {
		plan, err := a.PlanBatch(ctx, PlanRequest{Spec: spec, Offsets: lake.Offsets{0: from}})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, plan.Records)
		from = plan.Offsets[0]
	}
	if total != 1000 {
		t.Fatalf("the stream has %d records, the test expects 1000", total)
	}
	if want := []int64{300, 300, 200, 100, 100}; !slices.Equal(got, want) {
		t.Fatalf("batch sizes for %d records: %v, want %v", total, got, want)
	}
}

// TestPlanStartsAt: a plan starts at the offsets it was made from (its
// Offsets less its ranges), for every partition of either.
func TestPlanStartsAt(t *testing.T) {
	p := Plan{Ranges: []lake.Range{{Partition: 0, From: 10, To: 20}, {Partition: 2, From: 5, To: 6}},
		Offsets: lake.Offsets{0: 20, 1: 7, 2: 6}}
	for _, c := range []struct {
		at   lake.Offsets
		want bool
	}{
		{lake.Offsets{0: 10, 1: 7, 2: 5}, true},
		{lake.Offsets{0: 20, 1: 7, 2: 5}, false}, // partition 0 already past the plan's start
		{lake.Offsets{0: 10, 1: 7}, false},       // a partition missing
		{lake.Offsets{0: 10, 1: 7, 2: 5, 3: 0}, false},
		{lake.Offsets{0: 10, 1: 8, 2: 5}, false},
	} {
		if got := p.StartsAt(c.at); got != c.want {
			t.Errorf("StartsAt(%v) = %v, want %v", c.at, got, c.want)
		}
	}
	// offsets that add up but ranges that do not start at the position:
	// [20,25) would be skipped and [30,35) applied twice
	for _, c := range []struct {
		plan Plan
		at   lake.Offsets
	}{
		{Plan{Ranges: []lake.Range{{Partition: 0, From: 25, To: 35}}, Offsets: lake.Offsets{0: 30}}, lake.Offsets{0: 20}},
		{Plan{Ranges: []lake.Range{{Partition: 0, From: 20, To: 25}, {Partition: 0, From: 30, To: 35}}, Offsets: lake.Offsets{0: 30}}, lake.Offsets{0: 20}},
		{Plan{Ranges: []lake.Range{{Partition: 0, From: 20, To: 30}}, Offsets: lake.Offsets{0: 35}}, lake.Offsets{0: 25}},
	} {
		if c.plan.StartsAt(c.at) {
			t.Errorf("%+v.StartsAt(%v) = true, want false", c.plan, c.at)
		}
	}
	if (Plan{Ranges: []lake.Range{{Partition: 4, From: 0, To: 1}}, Offsets: lake.Offsets{0: 1}}).StartsAt(lake.Offsets{0: 1}) {
		t.Error("a range of a partition the plan's offsets lack: StartsAt = true")
	}
	if !(Plan{Offsets: lake.Offsets{}}).StartsAt(lake.Offsets{}) {
		t.Error("an empty plan at no offsets: StartsAt = false")
	}
}

// TestPlanWaitCanceledIsBenign: an idle plan cut short by its context (the
// worker shutting down, or the workflow cancelling it for a signal)
// returns a benign ApplicationError (the SDK logs those at DEBUG, not as
// an ERROR "Activity error") that still wraps context.Canceled (a
// cancellation by the workflow is reported to Temporal as one).
func TestPlanWaitCanceledIsBenign(t *testing.T) {
	spec := TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"},
		MaxEvents: 100, MaxWait: 10 * time.Millisecond}.Defaults()
	s := sample.Generate(sample.Options{Seed: 3, Inserts: 5})
	a := New(mustCatalog(t), kafkaTopic(t, spec.Topic, s.Delivered))
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		time.Sleep(300 * time.Millisecond)
		cancel(errors.New("worker is now shutdown"))
	}()
	// every record applied: the plan waits idle (up to an hour) until cancelled
	_, err := a.PlanBatch(ctx, PlanRequest{Spec: spec, Offsets: lake.Offsets{0: int64(len(s.Delivered))}, IdleWait: time.Hour})
	ae, ok := err.(*temporal.ApplicationError) // the SDK's own test: a direct type assertion
	if !ok {
		t.Fatalf("error %T %v, want *temporal.ApplicationError", err, err)
	}
	if ae.Category() != temporal.ApplicationErrorCategoryBenign || ae.Type() != ErrTypeWaitCanceled || !errors.Is(err, context.Canceled) {
		t.Fatalf("category %v, type %q, is context.Canceled %v; want benign, %q, true", ae.Category(), ae.Type(), errors.Is(err, context.Canceled), ErrTypeWaitCanceled)
	}
	if want := "the plan's wait for records was cut short: worker is now shutdown"; ae.Message() != want {
		t.Fatalf("message %q, want %q", ae.Message(), want)
	}
}
