// Package runner is the worker's composition root, shared by the worker
// binary and `starter demo`: settings → Temporal client, Kafka client,
// Iceberg catalog → activity set → a Temporal worker with the table
// workflow and activities registered.
package runner

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/apache/iceberg-go/catalog"
	"github.com/twmb/franz-go/pkg/sr"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/buildinfo"
	"github.com/lakemirror/lakemirror/internal/config"
	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/telemetry"
	"github.com/lakemirror/lakemirror/workflows"
)

// Runner is a started worker and the clients it owns.
type Runner struct {
	Client     client.Client
	Worker     worker.Worker
	Own        worker.Worker // polls the worker's own queue (WorkerQueue(WorkerID)): activities of the tables it holds
	WorkerID   string        // settings' WorkerID, or a random id
	Activities *activities.Activities
	Catalog    catalog.Catalog
	Kafka      *kafka.Client
	Metrics    *telemetry.Metrics // pipeline and Temporal SDK metrics; serve with Metrics.Handler()
	closers    []io.Closer
	logger     *slog.Logger
	stopping   *atomic.Bool  // set by Stop: the SDK's heartbeat flushes then log quietly (quietOnStop)
	leave      chan struct{} // activities.Activities.Stopping, closed by Stop
	leaveOnce  sync.Once
	own        *ownQueue // the activities on the worker's own queue, for Stop
}

// Register registers the table, maintenance and validation workflows and
// the activity set on w.
func Register(w worker.Registry, acts *activities.Activities) {
	w.RegisterWorkflowWithOptions(workflows.TableWorkflow, workflow.RegisterOptions{Name: workflows.TableWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.MaintenanceWorkflow, workflow.RegisterOptions{Name: workflows.MaintenanceWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.ValidationWorkflow, workflow.RegisterOptions{Name: workflows.ValidationWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.ReconcileWorkflow, workflow.RegisterOptions{Name: workflows.ReconcileWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.EraseWorkflow, workflow.RegisterOptions{Name: workflows.EraseWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.GroupWorkflow, workflow.RegisterOptions{Name: workflows.GroupWorkflowName})
	w.RegisterActivity(acts)
}

// Dial connects a Temporal client per the settings (DialContext without
// a deadline: the SDK's own 5 s for the first call).
func Dial(s config.Settings, logger *slog.Logger) (client.Client, error) {
	return DialContext(context.Background(), s, logger)
}

// DialContext connects a Temporal client per the settings; ctx bounds the
// connection check. Errors: bad TLS settings, and a Temporal frontend not
// reachable at s.TemporalAddress ("runner: connect to Temporal at ...").
func DialContext(ctx context.Context, s config.Settings, logger *slog.Logger) (client.Client, error) {
	return dial(ctx, s, logger, nil, "")
}

func dial(ctx context.Context, s config.Settings, logger *slog.Logger, mh client.MetricsHandler, identity string) (client.Client, error) {
	opts := client.Options{HostPort: s.TemporalAddress, Namespace: s.Namespace, MetricsHandler: mh, Identity: identity}
	tlsCfg, err := s.TemporalSecurity.TLSConfig()
	if err != nil {
		return nil, err
	}
	opts.ConnectionOptions.TLS = tlsCfg
	if key := s.TemporalSecurity.APIKey; key != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(key)
	}
	if logger != nil {
		opts.Logger = sdklog.NewStructuredLogger(logger)
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("runner: connect to Temporal at %s: %w", s.TemporalAddress, err)
	}
	return c, nil
}

// NewKafka returns a Kafka client for s's brokers with its TLS and SASL
// settings. Errors: bad security settings, no brokers.
func NewKafka(s config.Settings, opts ...kgo.Opt) (*kafka.Client, error) {
	sec, err := s.KafkaSecurity.Opts()
	if err != nil {
		return nil, err
	}
	return kafka.NewClient(s.KafkaBrokers, append(sec, opts...)...)
}

// Start opens the catalog and the Kafka client, connects to Temporal and
// starts a worker on activities.TaskQueue (workflows and activities) and
// one on the worker's own queue WorkerQueue(WorkerID) (activities of the
// tables it holds; routing, docs/design.md). Stop releases everything.
// The worker's log records (through logger) and its activities' errors
// are redacted of the catalog's credentials (lakecat.RedactText).
func Start(ctx context.Context, s config.Settings, logger *slog.Logger) (*Runner, error) {
	return StartWith(ctx, s, logger, Hooks{})
}

// Hooks let a harness observe a worker from inside (the crash suite,
// scripts/crashsuite): Prepare runs on the activity set before the
// workers start (e.g. to set Activities.AfterCommit), Interceptors are
// added to both Temporal workers after the worker's own.
type Hooks struct {
	Prepare      func(*activities.Activities)
	Interceptors []interceptor.WorkerInterceptor
}

// StartWith is Start with hooks.
func StartWith(ctx context.Context, s config.Settings, logger *slog.Logger, hooks Hooks) (*Runner, error) {
	redact := s.Catalog.Redact
	if props, err := s.Catalog.Properties(); err == nil {
		redact = func(text string) string { return lakecat.RedactText(props, text) }
	}
	logger = redactLogger(logger, redact)
	cat, err := lake.OpenCatalog(ctx, s.Catalog)
	if err != nil {
		return nil, err
	}
	kc, err := NewKafka(s)
	if err != nil {
		return nil, err
	}
	m := telemetry.New()
	mh, closer := sdkMetrics(m.Registry)
	workerID := s.WorkerID
	if workerID == "" {
		workerID = newWorkerID()
	}
	stopping := new(atomic.Bool)
	c, err := dial(ctx, s, quietOnStop(logger, stopping), mh, Identity(buildinfo.Get().Short(), s.Catalog.Identity())+" worker/"+workerID)
	if err != nil {
		kc.Close()
		closer.Close()
		return nil, err
	}
	stateDir, removeState, err := lake.OpenStateDir(s.StateDir)
	if err != nil {
		c.Close()
		kc.Close()
		closer.Close()
		return nil, err
	}
	acts := activities.New(cat, kc)
	acts.StateDir = stateDir
	budget := keyindex.NewBudget(s.IndexBudget())
	acts.IndexBudget = budget
	m.SetStateFunc(func() telemetry.StateSnapshot { return activities.StateSamples(acts) })
	acts.CatalogID = s.Catalog.Identity()
	acts.Metrics = m
	acts.BatchLog = logger
	acts.WorkerQueue = WorkerQueue(workerID)
	acts.SidecarEvery = s.SidecarEvery
	leave := make(chan struct{})
	acts.Stopping = leave
	fl := newFleet(c)
	acts.Fleet, acts.Gone = fl.count, fl.markGone
	acts.Owners = tableOwner(c)
	m.SetLagFunc(func() []telemetry.LagSample { return activities.LagSamples(acts) })
	acts.Sources = s.Sources
	if s.SchemaRegistry != "" {
		ropts, err := s.RegistrySecurity.Opts()
		if err == nil {
			acts.Registry, err = sr.NewClient(append(ropts, sr.URLs(strings.Split(s.SchemaRegistry, ",")...))...)
		}
		if err != nil {
			removeState()
			c.Close()
			kc.Close()
			closer.Close()
			return nil, fmt.Errorf("runner: schema registry: %w", err)
		}
	}
	// The workflow code is tiny; a generous deadlock timeout only keeps a
	// loaded 2-core machine from failing workflow tasks spuriously.
	redactErrs := append([]interceptor.WorkerInterceptor{&redactInterceptor{redact: redact}}, hooks.Interceptors...)
	if hooks.Prepare != nil {
		hooks.Prepare(acts)
	}
	// A killed worker's sticky queue holds its workflows' next task until
	// StickyScheduleToStartTimeout (the SDK's default is 5 s): stickyWait
	// keeps that short part of recovering from a dead worker.
	w := worker.New(c, activities.TaskQueue, worker.Options{DeadlockDetectionTimeout: 10 * time.Second, Interceptors: redactErrs,
		StickyScheduleToStartTimeout: stickyWait, WorkerStopTimeout: stopWait})
	Register(w, acts)
	// the worker's own queue: activities only, of the tables it holds
	ownQ := newOwnQueue()
	own := worker.New(c, acts.WorkerQueue, worker.Options{Interceptors: append([]interceptor.WorkerInterceptor{ownQ}, redactErrs...), WorkerStopTimeout: stopWait})
	own.RegisterActivity(acts)
	if err := own.Start(); err != nil {
		removeState()
		c.Close()
		kc.Close()
		return nil, fmt.Errorf("runner: start worker on %s: %w", acts.WorkerQueue, err)
	}
	if err := w.Start(); err != nil {
		own.Stop()
		removeState()
		c.Close()
		kc.Close()
		return nil, fmt.Errorf("runner: start worker: %w", err)
	}
	stopRelease := releaseIdle(acts, s.ReleaseIdleState, logger)
	return &Runner{Client: c, Worker: w, Own: own, WorkerID: workerID, Activities: acts, Catalog: cat, Kafka: kc, Metrics: m,
		closers: []io.Closer{closeFunc(stopRelease), closer, closeFunc(removeState), closeFunc(budget.Close)}, logger: logger, stopping: stopping,
		leave: leave, own: ownQ}, nil
}

// releaseIdle frees the local state of the tables idle for after or more
// (activities.ReleaseIdleStates), checking every after/4 (at least a
// second, at most a minute), until the returned stop is called; stop
// waits for a release in progress. after 0: nothing runs.
func releaseIdle(acts *activities.Activities, after time.Duration, logger *slog.Logger) (stop func()) {
	if after <= 0 {
		return func() {}
	}
	every := min(max(after/4, time.Second), time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				n, err := activities.ReleaseIdleStates(ctx, acts, after, now)
				if logger != nil && (n > 0 || err != nil) {
					logger.Info("released idle tables' local state", "tables", n, "idle_for", after.String(), "errors", err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// stickyWait is how long a workflow task waits on the sticky queue of the
// worker that ran the workflow last before going to the shared queue,
// where any worker replays the history: a live worker takes it within
// milliseconds.
const stickyWait = 2 * time.Second

// closeFunc adapts a cleanup function to io.Closer.
type closeFunc func()

func (f closeFunc) Close() error { f(); return nil }

// sidecarsOnStop bounds the writing of the state sidecars when a worker
// stops (Stop).
const sidecarsOnStop = 30 * time.Second

// stopWait is each Temporal worker's WorkerStopTimeout: how long Stop
// lets the activities in flight finish (a batch its commits, an idle plan
// its result that hands the table over) before their contexts are
// cancelled.
const stopWait = 20 * time.Second

// Stop stops the worker gracefully, handing its tables over at once
// (docs/design.md, "Graceful stop"), and closes the clients. First the
// activities learn of the stop (activities.Activities.Stopping): idle
// plans return at once with activities.Plan.Leaving, a batch in flight
// commits and returns activities.ApplyResult.Leaving, claims are
// refused, so each table's workflow claims the table again on the shared
// queue without waiting for a timeout. Then the worker on the shared
// queue stops (no more workflow tasks or claims); the one on its own
// queue keeps polling, up to handOverWait, while a table's workflow is
// about to schedule its next activity there (its last one ended without
// handing the table over, ownQueue, and the workflow runs) and another
// worker polls the shared queue to schedule it (othersPoll), so that
// activity leaves at once too; then it stops, giving what is still in
// flight up to stopWait. It logs
// one INFO line with the number of tables it hands over. With sidecars on
// (Settings.SidecarEvery), the state sidecar of every table the worker
// holds is written then, after its in-flight batch
// (activities.WriteSidecars), so the worker that takes the table loads
// its state instead of reading the tables; a failure is logged.
func (r *Runner) Stop() {
	stopAt := time.Now()
	if r.stopping != nil {
		r.stopping.Store(true)
	}
	if r.logger != nil {
		r.logger.Info("stopping: handing this worker's tables over to the other workers", "tables", activities.Held(r.Activities), "worker_queue", r.Activities.WorkerQueue)
	}
	if r.leave != nil {
		r.leaveOnce.Do(func() { close(r.leave) })
	}
	r.Worker.Stop()
	if r.own != nil && othersPoll(context.Background(), r.Client, r.WorkerID) {
		open := func(id string) bool { return workflowOpen(context.Background(), r.Client, id) }
		if n := r.own.waitHandedOver(stopAt, open); n > 0 && r.logger != nil {
			r.logger.Info("stopping: tables whose next activity did not come to this worker in time", "tables", n, "waited", handOverWait)
		}
	}
	r.Own.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), sidecarsOnStop)
	n, err := activities.WriteSidecars(ctx, r.Activities)
	cancel()
	if r.logger != nil && (n > 0 || err != nil) {
		r.logger.Info("state sidecars written on stop", "tables", n, "errors", err)
	}
	r.Client.Close()
	r.Kafka.Close()
	if cl, ok := r.Catalog.(interface{ Close() error }); ok {
		_ = cl.Close()
	}
	for _, c := range r.closers {
		_ = c.Close()
	}
}
