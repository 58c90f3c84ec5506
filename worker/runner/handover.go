package runner

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
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
	pruned  time.Time            // when end last forgot the ended entries no stop waits for
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
	if now.Sub(q.pruned) < followUpWithin { // the sweep below runs once a period, not after every activity
		return
	}
	q.pruned = now
	for w, at := range q.ended { // forget what no stop waits for
		if now.Sub(at) > 2*followUpWithin {
			delete(q.ended, w)
		}
	}
}

// waitingFor lists the workflows Stop, begun at stopAt, still waits for:
// those with an activity in flight here (running), and those whose last
// activity here ended from followUpWithin before stopAt on without
// handing the table over.
func (q *ownQueue) waitingFor(stopAt time.Time) (running, ended []string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for id := range q.running {
		running = append(running, id)
	}
	for id, at := range q.ended {
		if q.running[id] == 0 && !at.Before(stopAt.Add(-followUpWithin)) {
			ended = append(ended, id)
		}
	}
	return running, ended
}

// waitHandedOver waits, at most handOverWait from stopAt, until no
// workflow is waited for (waitingFor); a workflow whose activity ended
// is waited for only while open(id) says it runs (a stopped or finished
// table schedules nothing more). It returns how many still were.
func (q *ownQueue) waitHandedOver(stopAt time.Time, open func(id string) bool) int {
	deadline := stopAt.Add(handOverWait)
	closed := map[string]bool{}
	for {
		running, ended := q.waitingFor(stopAt)
		n := len(running)
		for _, id := range ended {
			if !closed[id] {
				if open(id) {
					n++
				} else {
					closed[id] = true
				}
			}
		}
		if n == 0 || !time.Now().Before(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// othersPoll reports whether a worker other than this one (worker id
// self) polls the shared queue's workflow tasks (a live poller,
// liveWorkers): only such a worker runs the workflow task that schedules
// a table's next activity while this one stops, so without one Stop does
// not wait for it. Temporal's errors count as yes (the wait is bounded).
func othersPoll(ctx context.Context, c client.Client, self string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	resp, err := c.DescribeTaskQueue(ctx, activities.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if err != nil {
		return true
	}
	host, _ := os.Hostname()
	for id := range liveWorkers(resp.GetPollers(), nil, host, processAlive, time.Now()) {
		if ParsePoller(id).Worker != self {
			return true
		}
	}
	return false
}

// workflowOpen reports whether workflow id still runs (Temporal's errors:
// yes, the wait is bounded).
func workflowOpen(ctx context.Context, c client.Client, id string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	resp, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return true
	}
	return resp.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
}
