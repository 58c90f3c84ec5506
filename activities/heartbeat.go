package activities

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
)

// heartbeatEvery is how often ApplyBatch and RebuildKeys record a
// heartbeat. The SDK sends at most one per 0.8 × the activity's heartbeat
// timeout (8 s for the workflows' fast-recovery runs: one every 6.4 s;
// 30 s before: one every 24 s), so recording often costs no calls; it
// only keeps the last heartbeat sent close to the throttle interval.
const heartbeatEvery = time.Second

// keepAlive heartbeats every interval until the returned stop is called,
// so that a worker that dies mid-batch is noticed within the activity's
// heartbeat timeout rather than its start-to-close timeout.
func keepAlive(ctx context.Context, interval time.Duration, detail func() any) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, detail())
			}
		}
	}()
	return func() { close(done) }
}

// BuildingPrefix starts the heartbeat detail of an ApplyBatch or
// RebuildKeys waiting for the table's local state to be built from the
// tables (the starter shows it as the table's phase reason).
const BuildingPrefix = "building the local state from the tables"

// stageDetail is the heartbeat detail of an activity at stage for table
// st: the stage, or while the table's local state is being built from
// the tables, "building the local state from the tables: R rows read, K
// keys written in D (stage S)".
func stageDetail(st *tableState, stage string) string {
	s := st.local.Load()
	if s == nil {
		return stage
	}
	p, ok := s.Building()
	if !ok {
		return stage
	}
	return fmt.Sprintf("%s: %d rows read, %d keys written in %s (stage %s)", BuildingPrefix, p.Rows, p.Keys, time.Since(p.Since).Truncate(time.Second), stage)
}
