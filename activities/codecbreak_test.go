package activities

import (
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/layout"
)

// After `starter settings TABLE --mirror-compression snappy` the table's
// batches carry the new compression, while the maintenance schedules,
// created by start or apply, still carry the spec as it was (settings
// does not touch them). Such a job should use the table's state as the
// batches' spec made it, as one whose spec differs only in batch bounds
// does (TestMaintenanceWithOlderBatchBoundsKeepsTheState): wait for the
// batch holding it, replace nothing, build nothing. sameSpec compares the
// layout, compression included, so the scheduled job replaces the
// table's state (running beside the batch in flight), and the next batch
// replaces it again.
func TestBreakCodecScheduledJobAfterCompressionChangeKeepsTheState(t *testing.T) {
	f := newValFixture(t)
	sched := f.spec // the schedule's copy, made when the table started
	f.spec.Layout.Mirror.Compression = "snappy"
	f.cleanStream()
	f.apply(map[int32][2]int64{0: {0, 3}, 1: {0, 2}}, nil)
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
		st.mu.Unlock()
		t.Fatalf("the scheduled purge ran while a batch held the table's state (err %v)", err)
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
}

// A compression-only settings change moves the tables' codec properties
// in a metadata-only commit, which "keeps the local state valid"
// (docs/design.md, "Partitioned and sorted tables"). The worker's state
// (key index, chain log) does not depend on the codec, yet the first
// batch with the new spec replaces the table's state (sameSpec compares
// the layout) and builds it again from the Iceberg tables, a full read
// of the mirror. The batch after a codec change should keep the state
// (no build), as one after a batch-bound change does.
func TestBreakCodecCompressionChangeKeepsTheState(t *testing.T) {
	f := newValFixture(t)
	f.cleanStream()
	f.apply(map[int32][2]int64{0: {0, 3}, 1: {0, 2}}, nil)
	f.a.mu.Lock()
	st := f.a.tables[f.spec.Table]
	f.a.mu.Unlock()
	builds := StateBuilds(f.a)
	f.spec.Layout.Mirror.Compression = "snappy" // starter settings --mirror-compression snappy
	f.apply(map[int32][2]int64{0: {3, 5}, 1: {2, 3}}, nil)
	f.a.mu.Lock()
	now := f.a.tables[f.spec.Table]
	f.a.mu.Unlock()
	if now != st || StateBuilds(f.a) != builds {
		t.Errorf("after a compression change: state replaced %v, %d more builds from the tables; want the same state and none", now != st, StateBuilds(f.a)-builds)
	}
	mirror, err := lake.LoadTable(f.ctx, f.a.Catalog, f.name.Mirror())
	if err != nil || mirror == nil {
		t.Fatalf("mirror: %v", err)
	}
	if c := mirror.Properties()[layout.PropCompressionCodec]; c != "snappy" {
		t.Errorf("the mirror's codec after the batch %q, want snappy", c)
	}
	if res, _ := f.validate(); res.Failed != 0 {
		t.Fatalf("validation: %+v", res)
	}
}
