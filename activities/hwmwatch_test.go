package activities

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// Idle tables on one worker wait on one shared high-watermark watch:
// while three tables wait, every ListOffsets request the worker sends
// covers all three topics (before, each table's PlanBatch sent its own
// start and end offset listings every second); a record produced to one
// topic ends that table's wait with exactly the new range, and the others
// keep waiting.
func TestIdlePlansShareOneWatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard, not a timing assertion
	defer cancel()
	cluster, kc := kfakeBroker(t)
	msgs := sample.Generate(sample.Options{Seed: 11, Inserts: 6}).Delivered
	a := New(mustCatalog(t), kc)
	var specs []TableSpec
	for i := range 3 {
		spec := TableSpec{Table: fmt.Sprintf("shop.t%d", i), Topic: fmt.Sprintf("shop.public.t%d", i), KeyColumns: []string{"order_id"},
			MaxEvents: 100, MaxWait: 20 * time.Millisecond}.Defaults()
		if err := kc.CreateTopic(ctx, spec.Topic, 1); err != nil {
			t.Fatal(err)
		}
		if err := kc.Produce(ctx, &kgo.Record{Topic: spec.Topic, Key: msgs[i].Key, Value: msgs[i].Value}); err != nil {
			t.Fatal(err)
		}
		specs = append(specs, spec)
	}

	var mu sync.Mutex
	var shared, single int // ListOffsets requests naming all three topics / fewer
	cluster.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		mu.Lock()
		if len(req.(*kmsg.ListOffsetsRequest).Topics) == 3 {
			shared++
		} else {
			single++
		}
		mu.Unlock()
		return nil, nil, false
	})
	counts := func() (int, int) { mu.Lock(); defer mu.Unlock(); return shared, single }

	type result struct {
		plan Plan
		err  error
	}
	waitCtx, stopWaiting := context.WithCancel(ctx)
	defer stopWaiting()
	results := make([]chan result, 3)
	for i, spec := range specs {
		results[i] = make(chan result, 1)
		go func() {
			plan, err := a.PlanBatch(waitCtx, PlanRequest{Spec: spec, Offsets: lake.Offsets{0: 1}, IdleWait: 10 * time.Minute})
			results[i] <- result{plan, err}
		}()
	}
	waiters := func() int {
		w := a.watch()
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.waiters)
	}
	poll := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			if ctx.Err() != nil {
				t.Fatalf("waiting for %s: %v", what, ctx.Err())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	poll("three waiting plans", func() bool { return waiters() == 3 })
	mu.Lock()
	shared, single = 0, 0
	mu.Unlock()
	poll("three shared rounds", func() bool { s, _ := counts(); return s >= 3 })
	if _, n := counts(); n != 0 {
		t.Fatalf("%d ListOffsets requests for fewer than the three waiting topics while they waited", n)
	}

	if err := kc.Produce(ctx, &kgo.Record{Topic: specs[1].Topic, Key: msgs[5].Key, Value: msgs[5].Value}); err != nil {
		t.Fatal(err)
	}
	r := <-results[1]
	if r.err != nil {
		t.Fatal(r.err)
	}
	if want := []lake.Range{{Partition: 0, From: 1, To: 2}}; !rangesEqual(r.plan.Ranges, want) {
		t.Fatalf("woken table: ranges %v, want %v", r.plan.Ranges, want)
	}
	poll("the two others still waiting", func() bool { return waiters() == 2 })
	stopWaiting()
	for _, i := range []int{0, 2} {
		if r := <-results[i]; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("table %d: %+v, want context.Canceled", i, r)
		}
	}
	poll("the watch to stop", func() bool {
		w := a.watch()
		w.mu.Lock()
		defer w.mu.Unlock()
		return !w.running
	})
}
