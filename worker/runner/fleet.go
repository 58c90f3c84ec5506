package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
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
// to count as a live worker: a long poll lasts up to a minute, and
// Temporal records a poller's time when its poll starts and when it ends
// (not when its connection drops: a killed worker's time stays).
const pollerFresh = 90 * time.Second

// fleetTTL is how long one answer of the fleet is reused.
const fleetTTL = 5 * time.Second

// fleet answers activities.Fleet from Temporal: the workers are the
// distinct pollers of the shared task queue's activity tasks that polled
// within pollerFresh and are not known dead (liveWorkers), the tables the
// running table workflows (RunningTables). Answers are cached for
// fleetTTL unless fresh ones are asked for.
type fleet struct {
	c    client.Client
	host string // this worker's host name (Identity's "<pid>@<host>")

	mu      sync.Mutex
	at      time.Time
	workers int
	tables  map[string]bool
	gone    map[string]time.Time // worker id → when it was reported gone (activities.Activities.Gone)
}

// newFleet returns the fleet of the workers polling through c.
func newFleet(c client.Client) *fleet {
	host, _ := os.Hostname()
	return &fleet{c: c, host: host}
}

// markGone is activities.Activities.Gone: the worker of queue
// (WorkerQueue(id)) took no activity of a table it held, so it is not
// counted until it polls again; the next count asks Temporal anew.
func (f *fleet) markGone(queue string) {
	id, ok := strings.CutPrefix(queue, activities.TaskQueue+"@")
	if !ok || id == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gone == nil {
		f.gone = map[string]time.Time{}
	}
	f.gone[id] = time.Now()
	f.at = time.Time{}
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
	now := time.Now()
	for id, at := range f.gone { // a mark outlives any poller time it could hide
		if now.Sub(at) > pollerFresh {
			delete(f.gone, id)
		}
	}
	seen := liveWorkers(resp.GetPollers(), f.gone, f.host, processAlive, now)
	runs, err := RunningTables(ctx, f.c)
	if err != nil {
		return 0, nil, err
	}
	tables = map[string]bool{}
	for _, r := range runs {
		tables[r.Table] = true
	}
	f.at, f.workers, f.tables = now, len(seen), tables
	return f.workers, f.tables, nil
}

// liveWorkers returns the identities of pollers that count as live
// workers at now: polled within pollerFresh, and not known dead. A
// poller is known dead when its worker id (ParsePoller) was reported gone
// (gone: id → when) and it has not polled since, or when it runs on host
// (this worker's host name; "" = unknown) and alive says its pid is no
// process there (a worker killed on this machine). Identities that name
// no worker id or another host are judged by their poll time alone.
func liveWorkers(pollers []*taskqueuepb.PollerInfo, gone map[string]time.Time, host string, alive func(pid int) bool, now time.Time) map[string]bool {
	seen := map[string]bool{}
	for _, p := range pollers {
		last := p.GetLastAccessTime().AsTime()
		if now.Sub(last) >= pollerFresh {
			continue
		}
		info := ParsePoller(p.GetIdentity())
		if at, ok := gone[info.Worker]; ok && info.Worker != "" && !last.After(at) {
			continue
		}
		if pid, h, ok := pidHost(info.Host); ok && host != "" && h == host && alive != nil && !alive(pid) {
			continue
		}
		seen[p.GetIdentity()] = true
	}
	return seen
}

// pidHost splits "<pid>@<host>" (Poller.Host); ok is false for other
// shapes.
func pidHost(s string) (pid int, host string, ok bool) {
	p, h, found := strings.Cut(s, "@")
	if !found || p == "" || h == "" {
		return 0, "", false
	}
	for _, c := range p {
		if c < '0' || c > '9' {
			return 0, "", false
		}
		pid = pid*10 + int(c-'0')
		if pid > 1<<30 {
			return 0, "", false
		}
	}
	return pid, h, pid > 0
}
