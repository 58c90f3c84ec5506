package workflows

import (
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Every recorded history in testdata/replay (table workflows of earlier
// commits: batches and late-key rebuilds, a blocked table retried and
// stopped, pause and resume, a hand-over; maintenance runs; recorded by
// worker/runner's TestRecordReplayHistories and TestRecordReplayMaintenance) replays on today's workflow code without a
// non-determinism error: running workflows survive a worker upgrade.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "replay", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recorded histories in testdata/replay")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			h, err := client.HistoryFromJSON(r, client.HistoryJSONOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rp := worker.NewWorkflowReplayer()
			rp.RegisterWorkflowWithOptions(TableWorkflow, workflow.RegisterOptions{Name: TableWorkflowName})
			rp.RegisterWorkflowWithOptions(MaintenanceWorkflow, workflow.RegisterOptions{Name: MaintenanceWorkflowName})
			rp.RegisterWorkflowWithOptions(ReconcileWorkflow, workflow.RegisterOptions{Name: ReconcileWorkflowName})
			rp.RegisterWorkflowWithOptions(GroupWorkflow, workflow.RegisterOptions{Name: GroupWorkflowName})
			if err := rp.ReplayWorkflowHistory(nil, h); err != nil {
				t.Fatalf("%s does not replay: %v", f, err)
			}
		})
	}
}
