package activities

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"
)

// Routing (docs/design.md, "Routing"): a table's activities run on the
// worker that holds its local state. Every worker polls the shared task
// queue (TaskQueue) and its own (WorkerQueue, "<TaskQueue>@<worker id>").
// A table workflow claims its table with ClaimTable on the shared queue;
// the worker that takes the claim answers with its own queue, and the
// workflow schedules the table's activities there until that worker is
// unreachable (a schedule-to-start timeout) or releases the table.

// ownerIdle is how long a claimed table counts toward the worker's tables
// without any of its activities running here (an idle table plans every
// 15 minutes; a table stopped or taken over stops counting after this).
const ownerIdle = 20 * time.Minute

// Fleet reports the number of workers polling the shared task queue and
// the running tables (mirror names), for balancing; Activities.Fleet.
// fresh asks for a new answer (a claim); otherwise a recent one will do
// (the release check after every batch).
type Fleet func(ctx context.Context, fresh bool) (workers int, tables map[string]bool, err error)

// owner is the set of tables this worker claimed, with when each was last
// used here.
type owner struct {
	mu       sync.Mutex
	tables   map[string]time.Time
	released map[string]time.Time // tables given up, with when: their state is kept a while, in case a claim brings them back
}

// releasedKeep is how long a released table's state stays in memory: a
// claim that brings the table back (every other worker refused it, or the
// release was based on a stale count) finds it.
const releasedKeep = time.Minute

// expired returns the released tables whose state may be freed now, and
// forgets them.
func (o *owner) expired(now time.Time) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for t, at := range o.released {
		if now.Sub(at) >= releasedKeep {
			out = append(out, t)
			delete(o.released, t)
		}
	}
	return out
}

// countLocked is the tables held, recently used and running (running
// nil: unknown, all count), other than table; held tables that are not
// running are forgotten. The caller holds o.mu.
func (o *owner) countLocked(table string, running map[string]bool, now time.Time) int {
	n := 0
	for t, at := range o.tables {
		if running != nil && !running[t] { // stopped (a running workflow is listed from its start)
			delete(o.tables, t)
			continue
		}
		if t != table && now.Sub(at) < ownerIdle {
			n++
		}
	}
	return n
}

// count is countLocked under the lock.
func (o *owner) count(table string, running map[string]bool, now time.Time) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.countLocked(table, running, now)
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
func (o *owner) take(table string, share int, running map[string]bool, force bool, now time.Time) (bool, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.tables == nil {
		o.tables = map[string]time.Time{}
	}
	held := o.countLocked(table, running, now)
	if _, ok := o.tables[table]; !ok && !force && share > 0 && held >= share {
		return false, held
	}
	o.tables[table] = now
	delete(o.released, table)
	return true, held
}

// drop stops holding table (a worker that stops hands it over).
func (o *owner) drop(table string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.tables, table)
}

// giveUp drops table when it is held and the worker holds more than share
// tables with it, in one step so that concurrent batches release only the
// excess.
func (o *owner) giveUp(table string, share int, running map[string]bool, now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.tables[table]; !ok || share <= 0 || o.countLocked("", running, now) <= share {
		return false
	}
	delete(o.tables, table)
	if o.released == nil {
		o.released = map[string]time.Time{}
	}
	o.released[table] = now
	return true
}

// Held is how many tables worker a holds (claimed and recently used).
func Held(a *Activities) int { return a.owner.count("", nil, time.Now()) }

// share is the fair number of tables per worker, ceil(tables/workers),
// and the running tables; 0 and nil when unknown (no Fleet, or it
// failed): then nothing is refused or released.
func (a *Activities) share(ctx context.Context, fresh bool) (int, map[string]bool) {
	if a.Fleet == nil {
		return 0, nil
	}
	workers, tables, err := a.Fleet(ctx, fresh)
	if err != nil || workers <= 0 || len(tables) == 0 {
		return 0, nil
	}
	return (len(tables) + workers - 1) / workers, tables
}

// ClaimTable takes a table for this worker: its activities go to this
// worker's own queue (ClaimResult.Queue) from now on. A claim after a
// hand-over (Gone) first tells the fleet that the previous owner is gone
// (Activities.Gone). A worker that holds
// its share of the running tables (Fleet: ceil(tables/workers)) refuses,
// with a retryable ClaimRefused error, so that the retry finds another
// worker; a claim with Force is always taken. It does not build the
// table's state: the first activity on the worker does (or finds it in
// memory). A worker that has begun to stop (leave.go) refuses every
// claim, forced ones too, with the same retryable ClaimRefused: the retry
// reaches a worker that stays.
func (a *Activities) ClaimTable(ctx context.Context, req ClaimRequest) (ClaimResult, error) {
	if closed(a.workerStop(ctx)) {
		return ClaimResult{}, temporal.NewApplicationError(
			fmt.Sprintf("worker %s is stopping: another worker takes %s", a.WorkerQueue, req.Table), ErrTypeClaimRefused)
	}
	a.freeReleased()
	if req.Gone && req.Prev != "" && req.Prev != a.WorkerQueue && a.Gone != nil {
		a.Gone(req.Prev)
	}
	share, running := 0, map[string]bool(nil)
	if !a.owner.holds(req.Table) && !req.Force {
		share, running = a.share(ctx, true)
	}
	ok, held := a.owner.take(req.Table, share, running, req.Force, time.Now())
	if !ok {
		return ClaimResult{}, temporal.NewApplicationError(
			fmt.Sprintf("worker %s holds %d tables, its share: another worker takes %s", a.WorkerQueue, held, req.Table), ErrTypeClaimRefused)
	}
	return ClaimResult{Queue: a.WorkerQueue, Tables: held + 1}, nil
}

// release reports whether this worker gives up table after a batch: it
// holds more than its share (a worker joined). The table is dropped from
// the worker's tables (its state is freed a minute later unless a claim
// brings it back); the workflow claims it again on the shared queue. A
// table with late keys pending keeps its worker (their rebuild needs the
// state).
func (a *Activities) release(ctx context.Context, table string, pending int) bool {
	if pending > 0 || a.WorkerQueue == "" || !a.owner.holds(table) {
		return false
	}
	share, running := a.share(ctx, false)
	if len(running) <= share { // one worker holds them all: nowhere to go
		return false
	}
	if !a.owner.giveUp(table, share, running, time.Now()) {
		return false
	}
	a.freeReleased()
	return true
}

// freeReleased frees the state of tables released more than releasedKeep
// ago and not claimed back.
func (a *Activities) freeReleased() {
	for _, t := range a.owner.expired(time.Now()) {
		if !a.owner.holds(t) {
			a.dropState(t)
		}
	}
}

// dropState forgets a worker's state for a table (after the caller
// released the table's lock): the log file is closed and removed from
// memory.
func (a *Activities) dropState(table string) {
	a.mu.Lock()
	st := a.tables[table]
	delete(a.tables, table)
	a.mu.Unlock()
	if st != nil {
		retire(st)
	}
}

// retire cancels the prefetch of st, a table state no longer the
// worker's, and closes its local state once whatever holds st.mu (a
// batch or job in flight, perhaps the caller's own) is done.
func retire(st *tableState) {
	if p := st.prefetch.swap(nil); p != nil {
		p.cancel()
	}
	go func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.mirror != nil {
			st.mirror.State().Close()
		}
	}()
}
