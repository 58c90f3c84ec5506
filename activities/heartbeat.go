package activities

import (
	"context"
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
