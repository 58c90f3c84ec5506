//go:build e2e

package runner

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.temporal.io/api/enums/v1"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/workflows"
)

// An idle table waits for records inside one planning activity instead of
// planning every MaxWait (counted from the workflow history: 200 ms
// polls would be about 50 activities in 10 s), a record arriving during
// the wait is applied at once, and pause and stop take effect at once.
func TestIdleTableWaitsInOneActivity(t *testing.T) {
	r := startRunner(t)
	defer r.Stop()
	ctx := context.Background()
	spec := activities.TableSpec{Table: "e2e.idle", Topic: "e2e.public.idle", KeyColumns: []string{"id"}, MaxEvents: 10, MaxWait: 200 * time.Millisecond}
	fields := []string{"id:int32", "name:string"}
	ends := produce(t, r, spec.Topic, 1, []sample.Message{{Key: []byte(`{"id":1}`), Value: enveloped("c", 100, fields, `{"id":1,"name":"a"}`)}})
	startWorkflow(t, r.Client, spec)
	waitCaughtUp(t, r.Client, spec.Table, ends)
	plans := func() int {
		n := 0
		it := r.Client.GetWorkflowHistory(ctx, workflows.WorkflowID(spec.Table), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "PlanBatch" {
				n++
			}
		}
		return n
	}
	before := plans()
	time.Sleep(10 * time.Second)
	if idle := plans() - before; idle > 2 {
		t.Fatalf("an idle table scheduled %d planning activities in 10 s", idle)
	}
	// a record produced while it waits is applied within a few seconds
	recs := []sample.Message{{Key: []byte(`{"id":2}`), Value: enveloped("c", 200, fields, `{"id":2,"name":"b"}`)}}
	if err := r.Kafka.Produce(ctx, &kgo.Record{Topic: spec.Topic, Key: recs[0].Key, Value: recs[0].Value}); err != nil {
		t.Fatal(err)
	}
	produced := time.Now()
	waitCaughtUp(t, r.Client, spec.Table, lake.Offsets{0: 2})
	if d := time.Since(produced); d > 5*time.Second {
		t.Fatalf("a record arriving at an idle table took %s to apply", d)
	}
	// pause and stop do not wait for the idle wait to end
	time.Sleep(2 * time.Second)
	if err := r.Client.SignalWorkflow(ctx, workflows.WorkflowID(spec.Table), "", workflows.SignalPause, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "paused", func() bool { return status(t, r.Client, spec.Table).Phase == workflows.PhasePaused })
	stopped := time.Now()
	stopWorkflow(t, r.Client, spec.Table)
	if d := time.Since(stopped); d > 5*time.Second {
		t.Fatalf("stop took %s", d)
	}
}
