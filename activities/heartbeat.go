package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
)

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
