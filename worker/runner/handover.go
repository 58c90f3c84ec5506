package runner

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/activities"
)

// handOverWait bounds how long Stop keeps the worker's own queue polled
// after the shared queue's worker stopped, waiting for the tables'
// workflows to take the hand-over (ownQueue.waitHandedOver). It outlasts
// a workflow task lost by the stopping worker (its 10 s timeout; a
// Temporal server without frontend.enableCancelWorkerPollsOnShutdown
// loses the tasks its pollers had just taken).
const handOverWait = 15 * time.Second

// followUpWithin: a table's activity that ended on the worker's own queue
// this long before the stop began, or after it, without handing the table
// over (no Leaving: a batch or plan that ended just before, a rebuild, a
// maintenance job) is followed by the workflow's next activity on the same
// queue; Stop waits for that one, which leaves at once.
const followUpWithin = 10 * time.Second

// ownQueue tracks, per table workflow, the activities the worker runs on
// its own queue (WorkerQueue), so that Stop keeps that queue polled until
// every table whose workflow is about to schedule its next activity there
// has handed the table over (docs/design.md "Graceful stop"). Without it,
// an activity scheduled on the queue after its worker stopped polling
// (the table's previous activity ended just before the stop, and its
// workflow task waited out the stopping worker's sticky queue) waits out
// its schedule-to-start timeout (ownerWait, 20 s) before the table moves.
type ownQueue struct {
	interceptor.WorkerInterceptorBase
	mu      sync.Mutex
	running map[string]int       // workflow id → activities in flight here
	ended   map[string]time.Time // workflow id → when its last activity here ended without handing the table over
}

func newOwnQueue() *ownQueue {
	return &ownQueue{running: map[string]int{}, ended: map[string]time.Time{}}
}

func (q *ownQueue) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &ownQueueActivity{q: q}
	i.Next = next
	return i
}

type ownQueueActivity struct {
	interceptor.ActivityInboundInterceptorBase
	q *ownQueue
}

func (a *ownQueueActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	id := activity.GetInfo(ctx).WorkflowExecution.ID
	a.q.start(id)
	res, err := a.Next.ExecuteActivity(ctx, in)
	a.q.end(id, handedOver(res, err), time.Now())
	return res, err
}

// handedOver reports whether an activity's result hands its table over:
// a plan or batch result with Leaving, or the WorkerLeaving error.
func handedOver(res any, err error) bool {
	switch r := res.(type) {
	case activities.Plan:
		return r.Leaving
	case activities.ApplyResult:
		return r.Leaving
	}
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.Type() == activities.ErrTypeWorkerLeaving
}

func (q *ownQueue) start(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.running[id]++
}

func (q *ownQueue) end(id string, left bool, now time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.running[id]--; q.running[id] <= 0 {
		delete(q.running, id)
	}
	if left {
		delete(q.ended, id)
	} else {
		q.ended[id] = now
	}
	for w, at := range q.ended { // forget what no stop waits for
		if now.Sub(at) > 2*followUpWithin {
			delete(q.ended, w)
		}
	}
}

// waiting is how many workflows Stop, begun at stopAt, still waits for:
// those with an activity in flight here, and those whose last activity
// here ended from followUpWithin before stopAt on without handing the
// table over.
func (q *ownQueue) waiting(stopAt time.Time) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.running)
	for id, at := range q.ended {
		if q.running[id] == 0 && !at.Before(stopAt.Add(-followUpWithin)) {
			n++
		}
	}
	return n
}

// waitHandedOver waits, at most handOverWait from stopAt, until no
// workflow is waited for (waiting). It returns how many still were.
func (q *ownQueue) waitHandedOver(stopAt time.Time) int {
	deadline := stopAt.Add(handOverWait)
	for {
		n := q.waiting(stopAt)
		if n == 0 || !time.Now().Before(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}
