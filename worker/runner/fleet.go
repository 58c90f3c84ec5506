package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
)

// WorkerQueue is the own task queue of the worker with id workerID:
// "<activities.TaskQueue>@<workerID>" (routing: the tables a worker holds
// run their activities there).
func WorkerQueue(workerID string) string { return activities.TaskQueue + "@" + workerID }

// newWorkerID returns a random worker id (12 hex digits) for a worker
// started without one.
func newWorkerID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// pollerFresh is how recently a poller must have polled the shared queue
// to count as a live worker: a long poll lasts up to a minute.
const pollerFresh = 90 * time.Second

// fleetTTL is how long one answer of the fleet is reused.
const fleetTTL = 5 * time.Second

// fleet answers activities.Fleet from Temporal: the workers are the
// distinct pollers of the shared task queue's activity tasks that polled
// within pollerFresh, the tables the running table workflows
// (RunningTables). Answers are cached for fleetTTL unless fresh ones are
// asked for.
type fleet struct {
	c client.Client

	mu      sync.Mutex
	at      time.Time
	workers int
	tables  map[string]bool
}

// count is an activities.Fleet. Errors: Temporal's (the caller then does
// not balance).
func (f *fleet) count(ctx context.Context, fresh bool) (workers int, tables map[string]bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !fresh && time.Since(f.at) < fleetTTL {
		return f.workers, f.tables, nil
	}
	resp, err := f.c.DescribeTaskQueue(ctx, activities.TaskQueue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
	if err != nil {
		return 0, nil, err
	}
	seen := map[string]bool{}
	for _, p := range resp.GetPollers() {
		if time.Since(p.GetLastAccessTime().AsTime()) < pollerFresh {
			seen[p.GetIdentity()] = true
		}
	}
	runs, err := RunningTables(ctx, f.c)
	if err != nil {
		return 0, nil, err
	}
	tables = map[string]bool{}
	for _, r := range runs {
		tables[r.Table] = true
	}
	f.at, f.workers, f.tables = time.Now(), len(seen), tables
	return f.workers, f.tables, nil
}
