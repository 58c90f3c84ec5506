//go:build e2e

package runner

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/workflows"
)

// Pause and resume sent while no worker runs reach the workflow in one
// workflow task. As control signals (what the starter sends) they apply
// in the order sent: resume, pause, resume, pause leaves the table paused,
// pause, resume leaves it running. (Separate pause and resume signals in
// one task apply every pause before every resume: docs/design.md, Known
// gaps.)
func TestControlSignalsSentWhileNoWorkerRunsApplyInOrder(t *testing.T) {
	for _, tc := range []struct {
		table     string
		fromPause bool // paused before the worker stops
		ops       []string
		paused    bool
	}{
		{"e2e.control_paused", false, []string{workflows.SignalResume, workflows.SignalPause, workflows.SignalResume, workflows.SignalPause}, true},
		{"e2e.control_running", true, []string{workflows.SignalPause, workflows.SignalResume}, false},
	} {
		t.Run(tc.table, func(t *testing.T) {
			ctx := context.Background()
			spec := activities.TableSpec{Table: tc.table, Topic: "e2e.public." + tc.table[len("e2e."):], KeyColumns: []string{"order_id"}, MaxEvents: 40, MaxWait: 200 * time.Millisecond}
			r := startRunner(t)
			ends := produce(t, r, spec.Topic, 1, faultyStream(7).Delivered)
			startWorkflow(t, r.Client, spec)
			waitCaughtUp(t, r.Client, spec.Table, ends)
			if tc.fromPause {
				if err := r.Client.SignalWorkflow(ctx, workflows.WorkflowID(spec.Table), "", workflows.SignalControl, workflows.SignalPause); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "paused", func() bool { return status(t, r.Client, spec.Table).Phase == workflows.PhasePaused })
			}
			r.Stop()

			c, err := Dial(stack.Settings, quiet)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, op := range tc.ops {
				if err := c.SignalWorkflow(ctx, workflows.WorkflowID(spec.Table), "", workflows.SignalControl, op); err != nil {
					t.Fatal(err)
				}
			}
			r = startRunner(t)
			defer r.Stop()
			defer stopWorkflow(t, r.Client, spec.Table) // no table left running for the tests after this one
			want := workflows.PhaseStream
			if tc.paused {
				want = workflows.PhasePaused
			}
			waitFor(t, "the signals applied", func() bool {
				st := status(t, r.Client, spec.Table)
				return st.Paused == tc.paused && st.Phase == want
			})
			time.Sleep(2 * time.Second) // and it stays so
			if st := status(t, r.Client, spec.Table); st.Paused != tc.paused || st.Phase != want {
				t.Fatalf("after %v: paused %v, phase %s; want paused %v, phase %s", tc.ops, st.Paused, st.Phase, tc.paused, want)
			}
			// the premise: the signals reached the workflow in one task
			it := r.Client.GetWorkflowHistory(ctx, workflows.WorkflowID(spec.Table), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			signals, tasks := 0, 0
			for it.HasNext() {
				e, err := it.Next()
				if err != nil {
					t.Fatal(err)
				}
				switch e.GetEventType() {
				case enums.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
					signals++
				case enums.EVENT_TYPE_WORKFLOW_TASK_STARTED:
					if signals > 0 && signals < len(tc.ops)+btoi(tc.fromPause) && signals > btoi(tc.fromPause) {
						tasks++
					}
				}
			}
			if signals != len(tc.ops)+btoi(tc.fromPause) || tasks != 0 {
				t.Fatalf("%d signals in history (want %d), %d workflow tasks started between the signals sent together (want 0)", signals, len(tc.ops)+btoi(tc.fromPause), tasks)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
