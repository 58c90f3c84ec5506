package activities

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// Routing (docs/design.md, "Routing"): a table's activities run on the
// worker that holds its local state. Every worker polls the shared task
// queue (TaskQueue) and its own (WorkerQueue, "<TaskQueue>@<worker id>").
// A table workflow claims its table with ClaimTable on the shared queue;
// the worker that takes the claim answers with its own queue, and the
// workflow schedules the table's activities there until that worker is
// unreachable (a schedule-to-start timeout) or releases the table.

// ErrTypeClaimRefused: the worker holds its share of the tables; the
// claim is retried on the shared queue, where another worker may take it.
const ErrTypeClaimRefused = "ClaimRefused"

// ClaimForceAttempt is the claim attempt from which a worker takes the
// table whatever it holds, so that a claim always ends (a worker count
// that is stale, every worker at its share).
const ClaimForceAttempt = 12

// ownerIdle is how long a claimed table counts toward the worker's tables
// without any of its activities running here (an idle table plans every
// 15 minutes; a table stopped or taken over stops counting after this).
const ownerIdle = 20 * time.Minute

// Fleet reports the number of workers polling the shared task queue and
// the number of running tables, for balancing; Activities.Fleet. fresh
// asks for a new count (a claim); otherwise a recent one will do (the
// release check after every batch).
type Fleet func(ctx context.Context, fresh bool) (workers, tables int, err error)

// ClaimRequest asks a worker to hold a table's state and run its
// activities.
type ClaimRequest struct {
	Table string `json:"table"`          // mirror ns.table
	Prev  string `json:"prev,omitempty"` // the task queue of the previous holder ("": none), released or unreachable
}

// ClaimResult is the worker that took a claim.
type ClaimResult struct {
	// Queue is the worker's own task queue, where the table's activities
	// go from now on; "" when the worker has none (routing off): the
	// activities stay on the shared queue.
	Queue string `json:"queue"`
	// Tables is how many tables the worker holds with this one.
	Tables int `json:"tables"`
}

// owner is the set of tables this worker claimed, with when each was last
// used here.
type owner struct {
	mu     sync.Mutex
	tables map[string]time.Time
}

// countLocked is the tables held, recently used, other than table. The
// caller holds o.mu.
func (o *owner) countLocked(table string, now time.Time) int {
	n := 0
	for t, at := range o.tables {
		if t != table && now.Sub(at) < ownerIdle {
			n++
		}
	}
	return n
}

// count is countLocked under the lock.
func (o *owner) count(table string, now time.Time) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.countLocked(table, now)
}

// holds reports whether table is held.
func (o *owner) holds(table string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.tables[table]
	return ok
}

// touch marks table used now, when it is held.
func (o *owner) touch(table string, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.tables[table]; ok {
		o.tables[table] = now
	}
}

// take makes table held unless the worker holds share tables or more
// besides it (share 0: no limit; force: take it anyway), in one step so
// that concurrent claims cannot both pass the limit. It returns whether
// the table is held and how many tables are held besides it.
func (o *owner) take(table string, share int, force bool, now time.Time) (bool, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.tables == nil {
		o.tables = map[string]time.Time{}
	}
	held := o.countLocked(table, now)
	if _, ok := o.tables[table]; !ok && !force && share > 0 && held >= share {
		return false, held
	}
	o.tables[table] = now
	return true, held
}

// giveUp drops table when it is held and the worker holds more than share
// tables with it, in one step so that concurrent batches release only the
// excess.
func (o *owner) giveUp(table string, share int, now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.tables[table]; !ok || share <= 0 || o.countLocked("", now) <= share {
		return false
	}
	delete(o.tables, table)
	return true
}

// Held is how many tables worker a holds (claimed and recently used).
func Held(a *Activities) int { return a.owner.count("", time.Now()) }

// share is the fair number of tables per worker, ceil(tables/workers);
// 0 when unknown (no Fleet, or it failed): then nothing is refused or
// released.
func (a *Activities) share(ctx context.Context, fresh bool) int {
	if a.Fleet == nil {
		return 0
	}
	workers, tables, err := a.Fleet(ctx, fresh)
	if err != nil || workers <= 0 || tables <= 0 {
		return 0
	}
	return (tables + workers - 1) / workers
}

// ClaimTable takes a table for this worker: its activities go to this
// worker's own queue (ClaimResult.Queue) from now on. A worker that holds
// its share of the tables (Fleet: ceil(tables/workers)) refuses, with a
// retryable ClaimRefused error, so that the retry finds another worker;
// from attempt ClaimForceAttempt on it takes the table anyway. It does not
// build the table's state: the first activity on the worker does (or
// finds it in memory).
func (a *Activities) ClaimTable(ctx context.Context, req ClaimRequest) (ClaimResult, error) {
	share := 0
	if !a.owner.holds(req.Table) {
		share = a.share(ctx, true)
	}
	ok, held := a.owner.take(req.Table, share, activity.GetInfo(ctx).Attempt >= ClaimForceAttempt, time.Now())
	if !ok {
		return ClaimResult{}, temporal.NewApplicationError(
			fmt.Sprintf("worker %s holds %d tables, its share: another worker takes %s", a.WorkerQueue, held, req.Table), ErrTypeClaimRefused)
	}
	return ClaimResult{Queue: a.WorkerQueue, Tables: held + 1}, nil
}

// release reports whether this worker gives up table after a batch: it
// holds more than its share (a worker joined). The table is dropped from
// the worker's tables and its state freed; the workflow claims it again
// on the shared queue. A table with late keys pending keeps its worker
// (their rebuild needs the state).
func (a *Activities) release(ctx context.Context, table string, pending int) bool {
	if pending > 0 || a.WorkerQueue == "" || !a.owner.holds(table) {
		return false
	}
	if !a.owner.giveUp(table, a.share(ctx, false), time.Now()) {
		return false
	}
	a.dropState(table)
	return true
}

// dropState forgets a worker's state for a table (after the caller
// released the table's lock): the log file is closed and removed from
// memory.
func (a *Activities) dropState(table string) {
	a.mu.Lock()
	st := a.tables[table]
	delete(a.tables, table)
	a.mu.Unlock()
	if st == nil {
		return
	}
	if p := st.prefetch.swap(nil); p != nil {
		p.cancel()
	}
	go func() { // the caller may hold st.mu (ApplyBatch)
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.mirror != nil {
			st.mirror.State().Close()
		}
	}()
}
