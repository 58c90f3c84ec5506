//go:build e2e

package runner

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/workflows"
)

// Maintenance through Temporal: a compaction workflow runs beside the
// table workflow and the mirror is unchanged and free of delete files
// after it; a schedule is created and triggers a run.
func TestMaintenanceWorkflowAndSchedule(t *testing.T) {
	ctx := context.Background()
	r := startRunner(t)
	defer r.Stop()
	stream := faultyStream(41)
	spec := activities.TableSpec{Table: "e2e.maint", Topic: "e2e.public.maint", KeyColumns: []string{"order_id"}, MaxEvents: 20, MaxWait: 200 * time.Millisecond}
	ends := produce(t, r, spec.Topic, 1, stream.Delivered)
	startWorkflow(t, r.Client, spec)
	waitCaughtUp(t, r.Client, spec.Table, ends)
	run, err := r.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "maint-compact-e2e", TaskQueue: activities.TaskQueue},
		workflows.MaintenanceWorkflowName, activities.MaintenanceRequest{Spec: spec.Defaults(), Job: activities.JobCompact})
	if err != nil {
		t.Fatal(err)
	}
	var res activities.MaintenanceResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if m := res.Compact["mirror"]; m.Rewritten == 0 || m.RemovedDeleteFiles == 0 || m.RemovedDeleteFiles != m.DeleteFilesBefore {
		t.Fatalf("mirror compaction %+v", m)
	}
	checkMirror(t, r, spec.Table, stream.Expected())
	checkBronze(t, r, spec.Table, ends)
	// the table keeps applying after compaction (its index follows the new files)
	more := faultyStream(41).Delivered[:30] // replays: no-ops
	ends2 := produce(t, r, spec.Topic, 1, more)
	waitCaughtUp(t, r.Client, spec.Table, ends2)
	checkMirror(t, r, spec.Table, stream.Expected())

	// a schedule per job, triggered once
	id := workflows.ScheduleID(spec.Table, activities.JobExpire)
	h, err := r.Client.ScheduleClient().Create(ctx, client.ScheduleOptions{ID: id,
		Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: time.Hour}}},
		Action: &client.ScheduleWorkflowAction{ID: id + "-run", Workflow: workflows.MaintenanceWorkflowName, TaskQueue: activities.TaskQueue,
			Args: []any{activities.MaintenanceRequest{Spec: spec.Defaults(), Job: activities.JobExpire}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Delete(ctx)
	if err := h.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the scheduled expiry run", func() bool {
		d, err := h.Describe(ctx)
		return err == nil && d.Info.NumActions == 1 && len(d.Info.RunningWorkflows) == 0
	})
	name, _ := lake.ParseTableName(spec.Table)
	tbl, _ := r.Catalog.LoadTable(ctx, name.Mirror())
	if cp, err := lake.ReadCheckpoint(tbl); err != nil || cp.BatchSeq == 0 {
		t.Fatalf("bookkeeping after compaction and expiry: %+v %v", cp, err)
	}
	stopWorkflow(t, r.Client, spec.Table)
}
