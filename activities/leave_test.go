package activities

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// stoppingEnv is a test activity environment for a, with a worker stop
// channel the caller closes (activity.GetWorkerStopChannel).
func stoppingEnv(a *Activities) (*testsuite.TestActivityEnvironment, chan struct{}) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	stop := make(chan struct{})
	env.SetWorkerStopChannel(stop)
	return env, stop
}

// A PlanBatch waiting for records returns at once when its worker begins
// to stop: with what has arrived (here nothing past the table's offset)
// and Leaving, so the workflow claims the table again, whether it waited
// for its batch to fill (MaxWait) or in the idle wait past it (IdleWait).
// Both waits are far longer than the test's activity timeout, so a plan
// that did not watch the stop would fail the test instead of returning.
func TestPlanLeavesWhenItsWorkerStops(t *testing.T) {
	msgs := sample.Generate(sample.Options{Seed: 5, Inserts: 3}).Delivered
	for _, c := range []struct {
		what    string
		maxWait time.Duration
	}{
		{"filling", 10 * time.Minute},
		{"idle", 100 * time.Millisecond},
	} {
		t.Run(c.what, func(t *testing.T) {
			spec := TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"}, MaxEvents: 100, MaxWait: c.maxWait}
			a := New(mustCatalog(t), kafkaTopic(t, spec.Topic, msgs))
			env, stop := stoppingEnv(a)
			env.SetTestTimeout(time.Minute)
			var once sync.Once
			closeStop := func() { once.Do(func() { close(stop) }) }
			if c.what == "filling" {
				env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) { closeStop() }) // the plan's first heartbeat: it waits
			} else {
				go func() { // the plan waits on the shared watch of the high watermarks
					for {
						w := a.watch()
						w.mu.Lock()
						n := len(w.waiters)
						w.mu.Unlock()
						if n > 0 {
							closeStop()
							return
						}
						time.Sleep(10 * time.Millisecond)
					}
				}()
			}
			at := int64(len(msgs))
			v, err := env.ExecuteActivity(a.PlanBatch, PlanRequest{Spec: spec, Offsets: lake.Offsets{0: at}, IdleWait: 10 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			var plan Plan
			if err := v.Get(&plan); err != nil {
				t.Fatal(err)
			}
			if !plan.Leaving || len(plan.Ranges) != 0 || plan.Records != 0 || plan.Offsets[0] != at || plan.HighWatermarks[0] != at || len(plan.Offsets) != 1 {
				t.Fatalf("plan %+v; want Leaving, no ranges, offsets and high watermarks {0: %d}", plan, at)
			}
		})
	}
}

// A worker that has begun to stop refuses every claim, forced ones too,
// with the retryable ClaimRefused, and holds nothing afterwards.
func TestStoppingWorkerRefusesClaims(t *testing.T) {
	a := &Activities{WorkerQueue: "lakemirror@w1"}
	env, stop := stoppingEnv(a)
	close(stop)
	for _, force := range []bool{false, true} {
		_, err := env.ExecuteActivity(a.ClaimTable, ClaimRequest{Table: "shop.orders", Force: force})
		var ae *temporal.ApplicationError
		if !errors.As(err, &ae) || ae.Type() != ErrTypeClaimRefused || ae.NonRetryable() ||
			ae.Message() != "worker lakemirror@w1 is stopping: another worker takes shop.orders" {
			t.Fatalf("claim (force %v) on a stopping worker: %v; want a retryable ClaimRefused naming the worker and the table", force, err)
		}
	}
	if Held(a) != 0 {
		t.Fatalf("a stopping worker holds %d tables after refusing, want 0", Held(a))
	}
}

// lockOrLeave: an activity that finds the table's lock free takes it even
// on a stopping worker (its work begins and gets the stop timeout to
// finish); one waiting for the lock when the worker stops gives up with a
// benign, retryable WorkerLeaving error, and the lock it would have taken
// later is released (the next Lock does not block forever).
func TestLockOrLeave(t *testing.T) {
	var mu sync.Mutex
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	stop := make(chan struct{})
	env.SetWorkerStopChannel(stop)
	lock := func(ctx context.Context) error {
		if err := (&Activities{}).lockOrLeave(ctx, &mu, "shop.orders"); err != nil {
			return err
		}
		mu.Unlock()
		return nil
	}
	env.RegisterActivityWithOptions(lock, activity.RegisterOptions{Name: "Lock"})
	close(stop)
	if _, err := env.ExecuteActivity("Lock"); err != nil {
		t.Fatalf("a free lock on a stopping worker: %v, want taken", err)
	}
	mu.Lock() // another activity holds the table
	_, err := env.ExecuteActivity("Lock")
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || ae.Type() != ErrTypeWorkerLeaving || ae.NonRetryable() || ae.Category() != temporal.ApplicationErrorCategoryBenign ||
		ae.Message() != "the worker is stopping: table shop.orders is handed over to another worker" {
		t.Fatalf("waiting for the lock on a stopping worker: %v; want a benign, retryable WorkerLeaving", err)
	}
	mu.Unlock()
	// the abandoned waiter took the lock and released it: this Lock
	// returns (it would hang the test otherwise)
	mu.Lock()
	//lint:ignore SA2001 the empty critical section is the check
	mu.Unlock()
}

// A batch applied by a worker that has begun to stop comes back with
// Leaving, and Release too when it left no late keys pending (a rebuild
// needs it first; workflows before the marker read only Release).
func TestBatchResultLeaving(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	stop := make(chan struct{})
	env.SetWorkerStopChannel(stop)
	mark := func(ctx context.Context, pending int) (ApplyResult, error) {
		res := ApplyResult{History: lake.HistoryResult{Pending: pending}}
		(&Activities{}).leaving(ctx, &res)
		return res, nil
	}
	env.RegisterActivityWithOptions(mark, activity.RegisterOptions{Name: "Mark"})
	got := func(pending int) [2]bool {
		v, err := env.ExecuteActivity("Mark", pending)
		if err != nil {
			t.Fatal(err)
		}
		var res ApplyResult
		if err := v.Get(&res); err != nil {
			t.Fatal(err)
		}
		return [2]bool{res.Leaving, res.Release}
	}
	if g := got(0); g != [2]bool{false, false} {
		t.Fatalf("a running worker's batch: leaving, release = %v, want false, false", g)
	}
	close(stop)
	if g := got(0); g != [2]bool{true, true} {
		t.Fatalf("a stopping worker's batch: leaving, release = %v, want true, true", g)
	}
	if g := got(2); g != [2]bool{true, false} {
		t.Fatalf("a stopping worker's batch with 2 late keys pending: leaving, release = %v, want true, false", g)
	}
}
