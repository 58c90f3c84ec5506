//go:build e2e

package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/workflows"
)

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func mirrorSnapshot(t *testing.T, r *Runner, table string) int64 {
	t.Helper()
	name, _ := lake.ParseTableName(table)
	tbl, err := r.Catalog.LoadTable(context.Background(), name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	return tbl.CurrentSnapshot().SnapshotID
}

// Operating a table through the embedded server: pause holds the Kafka
// position while records keep arriving, the Web UI attribute shows it,
// resume catches up; a backfill update re-applies a range with no change
// to the mirror and no duplicate bronze rows; the settings update changes
// the batch bound.
func TestPauseResumeBackfillSettings(t *testing.T) {
	ctx := context.Background()
	r := startRunner(t)
	defer r.Stop()
	stream := faultyStream(31)
	half := len(stream.Delivered) / 2
	spec := activities.TableSpec{Table: "e2e.ops", Topic: "e2e.public.ops", KeyColumns: []string{"order_id"}, MaxEvents: 40, MaxWait: 200 * time.Millisecond}
	ends := produce(t, r, spec.Topic, 1, stream.Delivered[:half])
	_, err := r.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.WorkflowID(spec.Table), TaskQueue: activities.TaskQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(workflows.SATable.ValueSet(spec.Table), workflows.SATopic.ValueSet(spec.Topic))},
		workflows.TableWorkflowName, workflows.TableInput{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	waitCaughtUp(t, r.Client, spec.Table, ends)

	// pause: the position holds while records arrive
	if err := r.Client.SignalWorkflow(ctx, workflows.WorkflowID(spec.Table), "", workflows.SignalPause, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "paused", func() bool { return status(t, r.Client, spec.Table).Phase == workflows.PhasePaused })
	held := status(t, r.Client, spec.Table).Offsets
	var recs []*kgo.Record
	for _, m := range stream.Delivered[half:] {
		recs = append(recs, &kgo.Record{Topic: spec.Topic, Key: m.Key, Value: m.Value})
	}
	if err := r.Kafka.Produce(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "paused in visibility", func() bool {
		resp, err := r.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf(`LakemirrorPaused = true AND LakemirrorTable = %q`, spec.Table)})
		return err == nil && len(resp.Executions) == 1
	})
	time.Sleep(time.Second)
	if st := status(t, r.Client, spec.Table); fmt.Sprint(st.Offsets) != fmt.Sprint(held) || st.Phase != workflows.PhasePaused {
		t.Fatalf("paused table moved: offsets %v, held %v, phase %s", st.Offsets, held, st.Phase)
	}

	// resume: catches up
	if err := r.Client.SignalWorkflow(ctx, workflows.WorkflowID(spec.Table), "", workflows.SignalResume, nil); err != nil {
		t.Fatal(err)
	}
	ends2, _ := r.Kafka.EndOffsets(ctx, spec.Topic)
	waitCaughtUp(t, r.Client, spec.Table, lake.Offsets(ends2))
	checkMirror(t, r, spec.Table, stream.Expected())
	before := mirrorSnapshot(t, r, spec.Table)
	historyBefore := historyLines(t, r, spec.Table)

	// backfill everything: accepted with its range, then a no-op
	h, err := r.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: workflows.WorkflowID(spec.Table),
		UpdateName: workflows.UpdateBackfill, Args: []any{workflows.BackfillRequest{Ranges: []lake.Range{{Partition: 0, From: 0, To: 1 << 40}}}},
		WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		t.Fatal(err)
	}
	var acc workflows.BackfillAccepted
	if err := h.Get(ctx, &acc); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(acc.Ranges) != fmt.Sprint([]lake.Range{{Partition: 0, From: 0, To: ends2[0]}}) || acc.Records != ends2[0] {
		t.Fatalf("accepted %+v, want [0,%d)", acc, ends2[0])
	}
	waitFor(t, "backfill done", func() bool {
		st := status(t, r.Client, spec.Table)
		return st.Totals.BackfillDone == acc.Records && len(st.Backfill) == 0
	})
	if after := mirrorSnapshot(t, r, spec.Table); after != before {
		t.Fatalf("backfill wrote to the mirror: snapshot %d → %d", before, after)
	}
	checkMirror(t, r, spec.Table, stream.Expected())
	checkBronze(t, r, spec.Table, lake.Offsets(ends2))
	if got := historyLines(t, r, spec.Table); got != historyBefore {
		t.Fatalf("backfill changed the history")
	}
	// a backfill that asks for nothing valid is rejected by the validator
	bad, err := r.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: workflows.WorkflowID(spec.Table),
		UpdateName: workflows.UpdateBackfill, Args: []any{workflows.BackfillRequest{}}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err == nil {
		err = bad.Get(ctx, nil) // a validator's rejection arrives here
	}
	if err == nil || !strings.Contains(err.Error(), "give offset ranges or a start time") {
		t.Fatalf("an empty backfill request: %v", err)
	}

	// settings
	five := 5
	h, err = r.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: workflows.WorkflowID(spec.Table),
		UpdateName: workflows.UpdateSettings, Args: []any{workflows.SettingsRequest{SettingsChange: payload.SettingsChange{MaxEvents: &five}}}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		t.Fatal(err)
	}
	var newSpec activities.TableSpec
	if err := h.Get(ctx, &newSpec); err != nil || newSpec.MaxEvents != 5 || status(t, r.Client, spec.Table).Spec.MaxEvents != 5 {
		t.Fatalf("settings: %+v %v", newSpec, err)
	}
	stopWorkflow(t, r.Client, spec.Table)
	_ = sample.Topic
}
