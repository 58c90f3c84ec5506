//go:build e2e

package runner

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/workflows"
)

// Break 35: a settings update on an idle table ends the run
// (settings-new-run) while its PlanBatch waits for records: the run
// requests the activity's cancellation and continues as new in the same
// workflow task, so the cancellation is never delivered; the orphaned
// activity's next heartbeat is refused and the SDK logs
// WARN "RecordActivityHeartbeat with error ... workflow execution already
// completed", one per table and update (seen live on the dev worker for
// four idle tables). Fails today.
func TestBreakSettingsOnIdleTableLogsNoWarn(t *testing.T) {
	ctx := context.Background()
	var logs lockedBuffer
	r, err := Start(ctx, stack.Settings, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	fields := []string{"id:int32", "name:string"}
	spec := activities.TableSpec{Table: "breaksettings.t0", Topic: "breaksettings.public.t0",
		KeyColumns: []string{"id"}, MaxEvents: 10, MaxWait: 200 * time.Millisecond}
	if err := r.Kafka.CreateTopic(ctx, spec.Topic, 1); err != nil {
		t.Fatal(err)
	}
	if err := r.Kafka.Produce(ctx, &kgo.Record{Topic: spec.Topic, Key: []byte(`{"id":1}`), Value: enveloped("c", 100, fields, `{"id":1,"name":"before"}`)}); err != nil {
		t.Fatal(err)
	}
	startWorkflow(t, r.Client, spec)
	waitCaughtUp(t, r.Client, spec.Table, lake.Offsets{0: 1})
	waitFor(t, spec.Table+" waiting in an idle plan", func() bool { return idlePlanning(t, r.Client, spec.Table, WorkerQueue(r.WorkerID)) })
	time.Sleep(6 * time.Second) // a first idle heartbeat
	before := len(logs.String())
	seven := 7
	h, err := r.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: workflows.WorkflowID(spec.Table), UpdateName: workflows.UpdateSettings,
		Args: []any{workflows.SettingsRequest{SettingsChange: payload.SettingsChange{MaxEvents: &seven}}}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(75 * time.Second) // the old run's PlanBatch heartbeats again (the SDK throttles heartbeats up to 60 s)
	after := logs.String()[before:]
	if strings.Contains(after, "level=WARN") || strings.Contains(after, "level=ERROR") {
		t.Errorf("a settings update on an idle table logged a WARN or ERROR:\n%s", after)
	}
	stopWorkflow(t, r.Client, spec.Table)
}
