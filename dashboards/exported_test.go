package dashboards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/devstack"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/internal/telemetry"
	"github.com/lakemirror/lakemirror/worker/runner"
	"github.com/lakemirror/lakemirror/workflows"
)

// family is what a dashboard or rule may rely on: a metric family's type
// and the label names its series carry.
type family struct {
	typ    dto.MetricType
	labels map[string]bool
}

type exported map[string]family

func (e exported) add(fams []*dto.MetricFamily) {
	for _, f := range fams {
		fam, ok := e[f.GetName()]
		if !ok {
			fam = family{typ: f.GetType(), labels: map[string]bool{}}
			e[f.GetName()] = fam
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				fam.labels[l.GetName()] = true
			}
		}
	}
}

func (e exported) String() string {
	var b strings.Builder
	names := make([]string, 0, len(e))
	for n := range e {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var ls []string
		for l := range e[n].labels {
			ls = append(ls, l)
		}
		sort.Strings(ls)
		fmt.Fprintf(&b, "%s %s {%s}\n", n, e[n].typ, strings.Join(ls, ","))
	}
	return b.String()
}

// pipelineMetrics drives a real telemetry.Metrics through every Observe
// method and gathers what it exports.
func pipelineMetrics(t *testing.T) exported {
	t.Helper()
	m := telemetry.New()
	const table = "shop.orders"
	m.ObserveLag(table, map[int32]int64{0: 5, 1: 7}, map[int32]int64{0: 10, 1: 7})
	m.ObserveBatch(telemetry.Batch{Table: table, Records: 10, Tombstones: 1, AppliedByOp: map[string]int{"c": 4, "u": 3, "d": 1},
		Duplicates: 1, Stale: 1, BronzeRows: 10, MirrorRows: 8, HistoryRows: 9, Commits: map[string]int{"bronze": 1, "mirror": 1, "history": 1},
		Duration: 120 * time.Millisecond, WatermarkWord: 0x1000, NewestSourceTime: time.Now().Add(-3 * time.Second)})
	m.CommitFailed(table)
	m.Quarantined(table, "undecodable", 2)
	m.Rebuilt(table, 3)
	m.StateRebuilt(table, "new")
	m.StateLoaded(table)
	m.RetentionGap(table)
	m.ObserveValidation(table, time.Now(), map[string]bool{"partitioning": false, "transitions": true})
	m.ObserveReconcile(table, map[string]int{"reconcile-ghost": 1}, 30*time.Second)
	m.CutPublished("shop", time.Now().Add(-time.Minute))
	m.SetStateFunc(func() telemetry.StateSnapshot {
		return telemetry.StateSnapshot{Tables: []telemetry.StateSample{{Table: table, IndexRAMBytes: 1 << 20, IndexDiskBytes: 1 << 30, LogBytes: 1 << 31}},
			WorkerBudgetBytes: 3 << 30, TableBudgetBytes: 768 << 20}
	})
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	e := exported{}
	e.add(fams)
	return e
}

// The worker's registry after a real run: the embedded Temporal server and
// Kafka broker, the worker built by runner.Start (pipeline metrics and
// the Temporal SDK's tally bridge on one registry), a table workflow
// applying a generated Debezium stream, and a probe workflow on a second
// worker of the same client whose first workflow task panics and whose
// activity fails once, so the SDK's failure counters exist.
var (
	workerOnce sync.Once
	workerFams exported
	workerErr  error
)

func workerMetrics(t *testing.T) exported {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the embedded Temporal server and Kafka broker")
	}
	workerOnce.Do(func() { workerFams, workerErr = runWorker() })
	if workerErr != nil {
		t.Fatal(workerErr)
	}
	return workerFams
}

const probeQueue = "dashboards-metrics-probe"

// probePanics makes the first workflow task of the probe fail (the SDK
// then retries the task, which replays the workflow function).
var probePanics atomic.Int32

func probeWorkflow(ctx workflow.Context) error {
	if probePanics.Add(1) == 1 {
		panic("probe: first workflow task fails")
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 50 * time.Millisecond, MaximumAttempts: 3}})
	return workflow.ExecuteActivity(ctx, probeActivity).Get(ctx, nil)
}

func probeActivity(ctx context.Context) error {
	if activity.GetInfo(ctx).Attempt == 1 {
		return errors.New("probe: first attempt fails")
	}
	return nil
}

func failingWorkflow(ctx workflow.Context) error { return errors.New("probe: workflow fails") }

func runWorker() (exported, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	dev, err := devstack.StartStack(ctx, devstack.StackOptions{UIPort: -1, SearchAttributes: workflows.SearchAttributeTypes})
	if err != nil {
		return nil, err
	}
	defer dev.Stop()
	r, err := runner.Start(ctx, dev.Settings, logger)
	if err != nil {
		return nil, err
	}
	defer r.Stop()

	stream := sample.Generate(sample.Options{Seed: 5, Inserts: 30, Updates: 40, Deletes: 5, Duplicates: 5, Late: 3,
		Tombstones: true, Envelope: true})
	spec := activities.TableSpec{Table: "metrics.orders", Topic: "metrics.public.orders", KeyColumns: []string{"order_id"},
		MaxEvents: 20, MaxWait: 100 * time.Millisecond}
	if err := r.Kafka.CreateTopic(ctx, spec.Topic, 2); err != nil {
		return nil, err
	}
	recs := make([]*kgo.Record, len(stream.Delivered))
	for i, m := range stream.Delivered {
		recs[i] = &kgo.Record{Topic: spec.Topic, Key: m.Key, Value: m.Value}
	}
	if err := r.Kafka.Produce(ctx, recs...); err != nil {
		return nil, err
	}
	ends, err := r.Kafka.EndOffsets(ctx, spec.Topic)
	if err != nil {
		return nil, err
	}
	if _, err := r.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.WorkflowID(spec.Table),
		TaskQueue: activities.TaskQueue}, workflows.TableWorkflowName, workflows.TableInput{Spec: spec}); err != nil {
		return nil, err
	}

	pw := worker.New(r.Client, probeQueue, worker.Options{})
	pw.RegisterWorkflow(probeWorkflow)
	pw.RegisterWorkflow(failingWorkflow)
	pw.RegisterActivity(probeActivity)
	if err := pw.Start(); err != nil {
		return nil, err
	}
	defer pw.Stop()
	for _, probe := range []struct {
		wf      any
		wantErr bool
	}{{probeWorkflow, false}, {failingWorkflow, true}} {
		run, err := r.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: probeQueue, WorkflowTaskTimeout: 2 * time.Second}, probe.wf)
		if err != nil {
			return nil, err
		}
		if err := run.Get(ctx, nil); (err != nil) != probe.wantErr {
			return nil, fmt.Errorf("probe workflow: error %v, want an error: %v", err, probe.wantErr)
		}
	}
	// A failed Temporal RPC (temporal_request_failure).
	if _, err := r.Client.DescribeWorkflowExecution(ctx, "dashboards-no-such-workflow", ""); err == nil {
		return nil, errors.New("describing a missing workflow succeeded")
	}

	// Wait until the table workflow has applied everything.
	for {
		v, err := r.Client.QueryWorkflow(ctx, workflows.WorkflowID(spec.Table), "", workflows.QueryStatus)
		if err != nil {
			return nil, err
		}
		var st workflows.Status
		if err := v.Get(&st); err != nil {
			return nil, err
		}
		done := true
		for p, e := range ends {
			done = done && st.Offsets[p] >= e
		}
		if done {
			break
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("table workflow not caught up: %+v", st)
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = r.Client.SignalWorkflow(ctx, workflows.WorkflowID(spec.Table), "", workflows.SignalStop, nil)
	_ = r.Client.GetWorkflow(ctx, workflows.WorkflowID(spec.Table), "").Get(ctx, nil)
	time.Sleep(1500 * time.Millisecond) // the tally scope reports every second
	fams, err := r.Metrics.Registry.Gather()
	if err != nil {
		return nil, err
	}
	e := exported{}
	e.add(fams)
	return e, nil
}
