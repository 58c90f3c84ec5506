package activities

import (
	"testing"
	"time"
)

// tableState is the worker's state for the fixture's table (nil: none).
func (f *valFixture) tableState() *tableState {
	f.a.mu.Lock()
	defer f.a.mu.Unlock()
	return f.a.tables[f.spec.Table]
}

// A maintenance job whose spec differs from the batches' only in batch
// bounds or in the layout (a schedule created before `starter settings`
// changed them: it carries the spec as it was) uses the table's state:
// it waits for the batch holding it, replaces nothing and builds
// nothing, and the next batch keeps it too. The compression case is a
// breaker's (helper-58): sameSpec compared the layout, so the scheduled
// job replaced the state beside the batch in flight.
func TestMaintenanceWithOlderSpecKeepsTheState(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(batches, sched *TableSpec)
	}{
		{"batch bounds", func(b, s *TableSpec) {
			s.MaxEvents, s.MaxWait, s.MaxBatchEvents, s.MaxQuarantine = b.MaxEvents+1, b.MaxWait+time.Second, 7, 3
		}},
		{"compression", func(b, s *TableSpec) { b.Layout.Mirror.Compression = "snappy" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newValFixture(t)
			sched := f.spec
			c.change(&f.spec, &sched)
			f.cleanStream()
			f.apply(map[int32][2]int64{0: {0, 3}, 1: {0, 2}}, nil)
			st := f.tableState()
			builds := StateBuilds(f.a)
			st.mu.Lock() // a batch in flight
			done := make(chan error, 1)
			go func() {
				_, err := f.a.Maintain(f.ctx, MaintenanceRequest{Spec: sched, Job: JobPurge, Retention: 30 * 24 * time.Hour})
				done <- err
			}()
			select {
			case err := <-done:
				st.mu.Unlock()
				t.Fatalf("the purge ran while a batch held the table's state (err %v)", err)
			case <-time.After(500 * time.Millisecond):
			}
			st.mu.Unlock()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			f.apply(map[int32][2]int64{0: {3, 5}, 1: {2, 3}}, nil)
			if now := f.tableState(); now != st || StateBuilds(f.a) != builds {
				t.Fatalf("state replaced %v, %d more builds; want the same state and none", now != st, StateBuilds(f.a)-builds)
			}
			if res, _ := f.validate(); res.Failed != 0 {
				t.Fatalf("validation after the purge and the batch: %+v", res)
			}
		})
	}
}
