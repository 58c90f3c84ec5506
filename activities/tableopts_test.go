package activities

import (
	"testing"
	"time"
)

// A maintenance job whose spec differs from the batches' only in batch
// bounds (a schedule created before `starter settings` changed them)
// uses the table's state: it waits for the batch holding it, replaces
// nothing and builds nothing, and the next batch keeps it too.
func TestMaintenanceWithOlderBatchBoundsKeepsTheState(t *testing.T) {
	f := newValFixture(t)
	f.cleanStream()
	f.apply(map[int32][2]int64{0: {0, 3}, 1: {0, 2}}, nil)
	sched := f.spec
	sched.MaxEvents, sched.MaxWait, sched.MaxBatchEvents, sched.MaxQuarantine = f.spec.MaxEvents+1, f.spec.MaxWait+time.Second, 7, 3
	f.a.mu.Lock()
	st := f.a.tables[f.spec.Table]
	f.a.mu.Unlock()
	builds := StateBuilds(f.a)
	st.mu.Lock() // a batch in flight
	done := make(chan error, 1)
	go func() {
		_, err := f.a.Maintain(f.ctx, MaintenanceRequest{Spec: sched, Job: JobPurge, Retention: 30 * 24 * time.Hour})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the purge ran while a batch held the table's state (err %v)", err)
	case <-time.After(500 * time.Millisecond):
	}
	st.mu.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	f.apply(map[int32][2]int64{0: {3, 5}, 1: {2, 3}}, nil)
	f.a.mu.Lock()
	now := f.a.tables[f.spec.Table]
	f.a.mu.Unlock()
	if now != st || StateBuilds(f.a) != builds {
		t.Fatalf("state replaced %v, %d more builds; want the same state and none", now != st, StateBuilds(f.a)-builds)
	}
	if res, _ := f.validate(); res.Failed != 0 {
		t.Fatalf("validation after the purge and the batch: %+v", res)
	}
}
