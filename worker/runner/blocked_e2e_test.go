//go:build e2e

package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/workflows"
)

// A table blocked at its first batch (more undecodable records than its
// quarantine limit) is visible everywhere an operator looks: status (phase
// blocked, the error), the running tables list, the Web UI's filter
// LakemirrorPhase = "blocked", and the gauge lakemirror_table_phase
// {phase="blocked"} = 1 on the worker's /metrics registry (what the
// LakemirrorTableBlocked alert reads); a stop ends it as stopped.
func TestBlockedTableIsVisible(t *testing.T) {
	ctx := context.Background()
	r := startRunner(t)
	defer r.Stop()
	spec := activities.TableSpec{Table: "e2e.blocked", Topic: "e2e.public.blocked", KeyColumns: []string{"order_id"},
		MaxEvents: 10, MaxWait: 100 * time.Millisecond, MaxQuarantine: 1}
	bad := []sample.Message{{Value: []byte("not json 1")}, {Value: []byte("not json 2")}, {Value: []byte("not json 3")}}
	produce(t, r, spec.Topic, 1, bad)
	if _, err := r.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.WorkflowID(spec.Table), TaskQueue: activities.TaskQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(workflows.SATable.ValueSet(spec.Table), workflows.SATopic.ValueSet(spec.Topic))},
		workflows.TableWorkflowName, workflows.TableInput{Spec: spec}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "blocked", func() bool { return status(t, r.Client, spec.Table).Phase == workflows.PhaseBlocked })
	st := status(t, r.Client, spec.Table)
	want := fmt.Sprintf("QuarantineLimit: 3 records of batch %s#1 cannot be applied (limit 1 per batch); first: %s/0@0 (decode): ", spec.Table, spec.Topic)
	if len(st.LastError) < len(want) || st.LastError[:len(want)] != want || strings.Contains(st.LastError, "json 1") {
		t.Fatalf("status error %q, want it to start with %q and hold no record content", st.LastError, want)
	}
	waitFor(t, "blocked in the Web UI filter", func() bool {
		resp, err := r.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf(`LakemirrorPhase = "blocked" AND LakemirrorTable = %q`, spec.Table)})
		return err == nil && len(resp.Executions) == 1
	})
	runs, err := RunningTables(ctx, r.Client)
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, run := range runs {
		listed = listed || run.Table == spec.Table
	}
	if !listed {
		t.Fatalf("the blocked table is not among the running tables %+v", runs)
	}
	phase := func() map[string]float64 {
		fams, err := r.Metrics.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, f := range fams {
			if f.GetName() != workflows.PhaseGauge {
				continue
			}
			for _, m := range f.GetMetric() {
				var table, ph string
				for _, l := range m.GetLabel() {
					switch l.GetName() {
					case "table":
						table = l.GetValue()
					case "phase":
						ph = l.GetValue()
					}
				}
				if table == spec.Table {
					out[ph] = m.GetGauge().GetValue()
				}
			}
		}
		return out
	}
	waitFor(t, "the phase gauge", func() bool { return phase()["blocked"] == 1 })
	if got := phase(); got["blocked"] != 1 || got["stream"] != 0 {
		t.Fatalf("phase gauge %v, want blocked 1 and stream 0", got)
	}
	if err := r.Client.SignalWorkflow(ctx, workflows.WorkflowID(spec.Table), "", workflows.SignalStop, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "stopped", func() bool { return phase()["stopped"] == 1 && phase()["blocked"] == 0 })
}
