//go:build e2e

package runner

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/workflows"
)

// historySince renders the workflow's history events from since on, one a
// line: seconds after since, event type, activity type and task queue of
// scheduled activities, timeout type and failure of ended ones.
func historySince(t *testing.T, c client.Client, table string, since time.Time) string {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), workflows.WorkflowID(table), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var b strings.Builder
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		at := e.GetEventTime().AsTime()
		if at.Before(since) {
			continue
		}
		fmt.Fprintf(&b, "%+7.2fs %s", at.Sub(since).Seconds(), e.GetEventType())
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			fmt.Fprintf(&b, " %s on %s", a.GetActivityType().GetName(), a.GetTaskQueue().GetName())
		}
		if a := e.GetActivityTaskTimedOutEventAttributes(); a != nil {
			fmt.Fprintf(&b, " %s", a.GetFailure().GetMessage())
		}
		if a := e.GetActivityTaskFailedEventAttributes(); a != nil {
			fmt.Fprintf(&b, " %s", a.GetFailure().GetMessage())
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// gracefulTables is how many idle tables TestGracefulStopHandsOverIdleTables
// uses: LAKEMIRROR_GRACEFUL_TABLES, default 1.
func gracefulTables(t *testing.T) int {
	n := 1
	if v := os.Getenv("LAKEMIRROR_GRACEFUL_TABLES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("LAKEMIRROR_GRACEFUL_TABLES=%q: want a count ≥ 1", v)
		}
	}
	return n
}

// lockedBuffer is a log destination safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// mirrorRows renders a mirror's rows as "id name deleted" lines in key
// order.
func mirrorRows(t *testing.T, r *Runner, table string) string {
	t.Helper()
	name, _ := lake.ParseTableName(table)
	tbl, err := r.Catalog.LoadTable(context.Background(), name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := lake.ReadRows(context.Background(), tbl, []string{"id"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, row := range rows {
		out = append(out, fmt.Sprintf("%v %v %v", row["id"], row["name"], row[lake.ColDeleted]))
	}
	return strings.Join(out, "\n")
}

// A worker that stops gracefully hands its tables over at once
// (docs/design.md, "Graceful stop"): a worker holding idle tables (each
// waiting in an idle PlanBatch, LAKEMIRROR_GRACEFUL_TABLES of them,
// default 1) stops, logging one INFO line and no ERROR; another worker
// starts and a record produced after the restart is applied to every
// table by it: the mirror holds exactly the row from before and the new
// one, bronze both offsets. The hand-over came from the stopping worker's
// plan result (Plan.Leaving: stop_hand_overs 1), not from a timeout: no
// activity timed out in the workflow's history, 0 heartbeats lost, 0
// hand-overs by timeout, two claims. The times (stop, and from the new
// worker's start to the first and the last table's record applied) are
// logged, not asserted.
func TestGracefulStopHandsOverIdleTables(t *testing.T) {
	ctx := context.Background()
	n := gracefulTables(t)
	var logs lockedBuffer
	first, err := Start(ctx, stack.Settings, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if err != nil {
		t.Fatal(err)
	}
	fields := []string{"id:int32", "name:string"}
	specs := make([]activities.TableSpec, n)
	for i := range specs {
		specs[i] = activities.TableSpec{Table: fmt.Sprintf("graceful.t%d", i), Topic: fmt.Sprintf("graceful.public.t%d", i),
			KeyColumns: []string{"id"}, MaxEvents: 10, MaxWait: 200 * time.Millisecond}
		if err := first.Kafka.CreateTopic(ctx, specs[i].Topic, 1); err != nil {
			t.Fatal(err)
		}
		if err := first.Kafka.Produce(ctx, &kgo.Record{Topic: specs[i].Topic, Key: []byte(`{"id":1}`), Value: enveloped("c", 100, fields, `{"id":1,"name":"before"}`)}); err != nil {
			t.Fatal(err)
		}
		startWorkflow(t, first.Client, specs[i])
	}
	for _, spec := range specs {
		waitCaughtUp(t, first.Client, spec.Table, lake.Offsets{0: 1})
	}
	for _, spec := range specs {
		waitFor(t, spec.Table+" waiting in an idle plan", func() bool { return idlePlanning(t, first.Client, spec.Table, WorkerQueue(first.WorkerID)) })
	}
	// two idle heartbeats (idleHeartbeat, 5 s): the SDK sends the first and
	// buffers the second in its throttle window, which the stop flushes
	// with a cancelled context (logged at DEBUG, not WARN)
	time.Sleep(11 * time.Second)
	stopAt := time.Now()
	before := len(logs.String())
	first.Stop()
	stopped := time.Since(stopAt)
	stopLog := logs.String()[before:]
	second := startRunner(t)
	defer second.Stop()
	started := time.Now()
	for _, spec := range specs {
		if err := second.Kafka.Produce(ctx, &kgo.Record{Topic: spec.Topic, Key: []byte(`{"id":2}`), Value: enveloped("c", 200, fields, `{"id":2,"name":"after"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	var firstApplied time.Duration
	for i, spec := range specs {
		waitCaughtUpWithin(t, second.Client, spec.Table, lake.Offsets{0: 2}, 3*time.Minute)
		if i == 0 {
			firstApplied = time.Since(started)
		}
	}
	allApplied := time.Since(started)
	t.Logf("%d idle tables: stop %.2fs; from the new worker's start: first table's record applied after %.2fs, every table's after %.2fs",
		n, stopped.Seconds(), firstApplied.Seconds(), allApplied.Seconds())
	t.Logf("history of %s from the stop on:\n%s", specs[0].Table, historySince(t, second.Client, specs[0].Table, stopAt))

	if strings.Contains(stopLog, "level=ERROR") || strings.Contains(stopLog, "level=WARN") {
		t.Errorf("the stop logged an ERROR or a WARN:\n%s", stopLog)
	}
	handing := regexp.MustCompile(`(?m)^.* level=INFO msg="stopping: handing this worker's tables over to the other workers" tables=(\d+) .*$`).FindAllStringSubmatch(stopLog, -1)
	if len(handing) != 1 || handing[0][1] != strconv.Itoa(n) {
		t.Errorf("stop log lines handing tables over: %q, want one with tables=%d; the stop's log:\n%s", handing, n, stopLog)
	}
	for _, spec := range specs {
		st := status(t, second.Client, spec.Table)
		got := fmt.Sprintf("owner %s, claims %d, stop hand-overs %d, hand-overs %d, releases %d, heartbeats lost %d, batches %d",
			st.Owner, st.Claims, st.StopHandOvers, st.HandOvers, st.Releases, st.HeartbeatsLost, st.Totals.Batches)
		want := fmt.Sprintf("owner %s, claims 2, stop hand-overs 1, hand-overs 0, releases 0, heartbeats lost 0, batches 2", WorkerQueue(second.WorkerID))
		if got != want {
			t.Errorf("%s: %s; want %s", spec.Table, got, want)
		}
		if timeouts := timedOut(t, second.Client, spec.Table); timeouts != "" {
			t.Errorf("%s: activities timed out: %s", spec.Table, timeouts)
		}
		if got, want := mirrorRows(t, second, spec.Table), "1 before false\n2 after false"; got != want {
			t.Errorf("%s: mirror rows\n%s\nwant\n%s", spec.Table, got, want)
		}
		checkBronze(t, second, spec.Table, lake.Offsets{0: 2})
		stopWorkflow(t, second.Client, spec.Table)
	}
}

// timedOut lists the workflow's ActivityTaskTimedOut events as
// "activity type: timeout" ("" when none).
func timedOut(t *testing.T, c client.Client, table string) string {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), workflows.WorkflowID(table), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	scheduled := map[int64]string{}
	var out []string
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			scheduled[e.GetEventId()] = a.GetActivityType().GetName()
		}
		if a := e.GetActivityTaskTimedOutEventAttributes(); a != nil {
			out = append(out, scheduled[a.GetScheduledEventId()]+": "+a.GetFailure().GetMessage())
		}
	}
	return strings.Join(out, "; ")
}

// afterActivity calls f after each activity named name returns, before
// its result goes back to the server.
type afterActivity struct {
	interceptor.WorkerInterceptorBase
	name string
	f    func()
}

func (h *afterActivity) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &afterActivityCall{h: h}
	i.Next = next
	return i
}

type afterActivityCall struct {
	interceptor.ActivityInboundInterceptorBase
	h *afterActivity
}

func (a *afterActivityCall) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	res, err := a.Next.ExecuteActivity(ctx, in)
	if activity.GetInfo(ctx).ActivityType.Name == a.h.name {
		a.h.f()
	}
	return res, err
}

// A worker that stops right after a table's batch ended there, without
// Leaving (the batch finished before the stop began), still hands the
// table over at once (docs/design.md, "Graceful stop"): the table's
// workflow schedules its next plan on the stopping worker's own queue
// after the stop began (its workflow task first waits out the stopping
// worker's sticky queue), and that queue is still polled (Stop waits for
// the follow-up, ownQueue), so the plan returns Leaving at once. Found
// by CI under load (starter's TestStatusWaitingForHandOver): before, the
// queue had stopped and the plan waited out ownerWait (20 s), one
// hand-over by timeout. Here a hook holds the batch's result until the
// stop began, another worker runs throughout (a rolling restart), and
// the record produced after the stop is applied by it: status shows two
// claims, one hand-over on the worker's stop and none by timeout, no
// activity timed out, the mirror holds the three rows.
func TestGracefulStopRightAfterABatch(t *testing.T) {
	ctx := context.Background()
	var acts *activities.Activities
	var armed atomic.Bool
	ended := make(chan struct{}, 1)
	hook := &afterActivity{name: "ApplyBatch", f: func() {
		if !armed.CompareAndSwap(true, false) {
			return
		}
		ended <- struct{}{}
		select { // the result goes back once the stop began
		case <-acts.Stopping:
		case <-time.After(time.Minute):
		}
	}}
	first, err := StartWith(ctx, stack.Settings, quiet, Hooks{Prepare: func(a *activities.Activities) { acts = a },
		Interceptors: []interceptor.WorkerInterceptor{hook}})
	if err != nil {
		t.Fatal(err)
	}
	fields := []string{"id:int32", "name:string"}
	spec := activities.TableSpec{Table: "graceful.after", Topic: "graceful.public.after",
		KeyColumns: []string{"id"}, MaxEvents: 10, MaxWait: 200 * time.Millisecond}
	if err := first.Kafka.CreateTopic(ctx, spec.Topic, 1); err != nil {
		t.Fatal(err)
	}
	row := func(id int, name string) *kgo.Record {
		return &kgo.Record{Topic: spec.Topic, Key: []byte(fmt.Sprintf(`{"id":%d}`, id)),
			Value: enveloped("c", 100*id, fields, fmt.Sprintf(`{"id":%d,"name":%q}`, id, name))}
	}
	if err := first.Kafka.Produce(ctx, row(1, "first")); err != nil {
		t.Fatal(err)
	}
	startWorkflow(t, first.Client, spec)
	waitCaughtUp(t, first.Client, spec.Table, lake.Offsets{0: 1})
	waitFor(t, spec.Table+" waiting in an idle plan", func() bool { return idlePlanning(t, first.Client, spec.Table, WorkerQueue(first.WorkerID)) })
	second := startRunner(t)
	defer second.Stop()
	armed.Store(true)
	if err := first.Kafka.Produce(ctx, row(2, "before the stop")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	case <-time.After(time.Minute):
		t.Fatal("the second batch did not end on the first worker within a minute")
	}
	stopAt := time.Now()
	first.Stop()
	t.Logf("stop %.2fs", time.Since(stopAt).Seconds())
	if err := second.Kafka.Produce(ctx, row(3, "after the stop")); err != nil {
		t.Fatal(err)
	}
	waitCaughtUpWithin(t, second.Client, spec.Table, lake.Offsets{0: 3}, 3*time.Minute)
	t.Logf("history from the stop on:\n%s", historySince(t, second.Client, spec.Table, stopAt))
	st := status(t, second.Client, spec.Table)
	got := fmt.Sprintf("owner %s, claims %d, stop hand-overs %d, hand-overs %d, heartbeats lost %d",
		st.Owner, st.Claims, st.StopHandOvers, st.HandOvers, st.HeartbeatsLost)
	if want := fmt.Sprintf("owner %s, claims 2, stop hand-overs 1, hand-overs 0, heartbeats lost 0", WorkerQueue(second.WorkerID)); got != want {
		t.Errorf("%s; want %s", got, want)
	}
	if timeouts := timedOut(t, second.Client, spec.Table); timeouts != "" {
		t.Errorf("activities timed out: %s", timeouts)
	}
	if got, want := mirrorRows(t, second, spec.Table), "1 first false\n2 before the stop false\n3 after the stop false"; got != want {
		t.Errorf("mirror rows\n%s\nwant\n%s", got, want)
	}
	checkBronze(t, second, spec.Table, lake.Offsets{0: 3})
	stopWorkflow(t, second.Client, spec.Table)
}
