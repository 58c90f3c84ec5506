package devstack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/metrics"
	"go.temporal.io/server/temporal"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/types/known/durationpb"
)

// DefaultStartTimeout bounds StartTemporal when ctx has no deadline.
const DefaultStartTimeout = 60 * time.Second

// TemporalOptions configures StartTemporal. The zero value is valid: an
// in-memory server on free ports of 127.0.0.1 with the UI on a free port,
// namespace "default", no metrics listener and no log output.
type TemporalOptions struct {
	// IP is the bind address of every listener; "" = "127.0.0.1". With
	// "0.0.0.0" or "::" clients are pointed at 127.0.0.1.
	IP string
	// GRPCPort is the frontend gRPC port; 0 = a free port. `temporal server
	// start-dev` uses DefaultGRPCPort (7233).
	GRPCPort int
	// UIPort is the Web UI port; -1 = no UI; 0 = GRPCPort+1000 (8233 for
	// 7233) when GRPCPort is set, else a free port.
	UIPort int
	// HTTPPort is the frontend HTTP API port; 0 = a free port.
	HTTPPort int
	// MetricsPort is the server's Prometheus listener (path /metrics,
	// OpenTelemetry naming); 0 = no metrics.
	MetricsPort int
	// DBFile is the SQLite file for persistence; "" = in-memory (state is
	// gone after Stop). A new file gets the schema; an existing file is
	// reused as is. Its directory must exist.
	DBFile string
	// Namespace is created if missing (idempotent); "" = "default".
	Namespace string
	// SearchAttributes are custom search attributes registered on Namespace,
	// idempotently: on a new namespace they are written with it, on an
	// existing one the missing ones are added through the operator API.
	// SQLite visibility allows per namespace at most 10 Keyword and 3 each of
	// Bool, Int, Double, Datetime, KeywordList and Text.
	SearchAttributes map[string]enumspb.IndexedValueType
	// LogLevel is the minimum server log level written to Logger: "debug",
	// "info", "warn" or "error"; "" = "error".
	LogLevel string
	// Logger receives server logs at LogLevel and above; nil drops them.
	Logger *slog.Logger
}

// Temporal is an embedded Temporal dev server (frontend, history, matching
// and worker services in this process, SQLite persistence) with the Web UI,
// configured the way `temporal server start-dev` configures it.
type Temporal struct {
	plan *temporalPlan
	srv  temporal.Server
	ui   *uiServer // nil without UI

	stopOnce sync.Once
	stopErr  error
}

// StartTemporal starts the server and returns once the frontend answers a
// health check, the namespace is described successfully, every requested
// search attribute is usable in visibility queries, and the UI (if enabled)
// answers /healthz. ctx bounds the whole start (DefaultStartTimeout if ctx has
// no deadline). Concurrent calls in one process run one after the other.
//
// Errors: invalid options, a port that is already bound, schema or
// namespace setup failures, a search attribute that exists with another type
// or exceeds the SQLite limits, and start/readiness failures; on error
// everything started so far is stopped again.
func StartTemporal(ctx context.Context, opts TemporalOptions) (*Temporal, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultStartTimeout)
		defer cancel()
	}
	// One server is planned, built and started at a time in a process: two
	// built at once can pick each other's just-released ports, and the
	// server's fx graph is not known to be safe to construct concurrently
	// (a CI run panicked inside fx's invoke while two were built at once).
	startMu.Lock()
	defer startMu.Unlock()
	plan, err := planTemporal(opts)
	if err != nil {
		return nil, err
	}
	// The server logs a fatal error (and our logger does not exit) when it
	// cannot bind, and ends up with a nil listener; catch taken ports first.
	if err := checkPortsFree(plan.bindIP, plan.listenPorts()...); err != nil {
		return nil, err
	}
	sqlCfg, err := plan.sqlConfig()
	if err != nil {
		return nil, err
	}
	if err := plan.prepareDatabase(sqlCfg); err != nil {
		return nil, err
	}

	fatal := &fatalRecorder{}
	logger := newServerLogger(opts.Logger, plan.logLevel, fatal)
	srv, err := newTemporalServer(plan, plan.serverConfig(sqlCfg), logger)
	if err != nil {
		return nil, err
	}
	if err := startServer(ctx, srv); err != nil {
		return nil, err
	}
	t := &Temporal{plan: plan, srv: srv}
	fail := func(err error) (*Temporal, error) {
		_ = t.Stop()
		return nil, err
	}
	if err := fatal.err(); err != nil {
		return fail(err)
	}
	if err := t.waitReady(ctx, logger.SLog()); err != nil {
		return fail(errors.Join(err, fatal.err()))
	}
	if plan.uiPort != 0 {
		ui, err := startUI(ctx, plan)
		if err != nil {
			return fail(err)
		}
		t.ui = ui
	}
	return t, nil
}

// startMu serializes StartTemporal within the process.
var startMu sync.Mutex

// newTemporalServer assembles the server with the options the CLI passes.
func newTemporalServer(plan *temporalPlan, conf *config.Config, logger log.Logger) (temporal.Server, error) {
	authorizer, err := authorization.GetAuthorizerFromConfig(&conf.Global.Authorization)
	if err != nil {
		return nil, fmt.Errorf("devstack: authorizer: %w", err)
	}
	claimMapper, err := authorization.GetClaimMapperFromConfig(&conf.Global.Authorization, logger)
	if err != nil {
		return nil, fmt.Errorf("devstack: claim mapper: %w", err)
	}
	serverOpts := []temporal.ServerOption{
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(plan.staticHosts()),
		temporal.WithLogger(logger),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithDynamicConfigClient(devDynamicConfig()),
	}
	var mh metrics.Handler
	if plan.metricsPort != 0 {
		if mh, err = newMetricsHandler(plan, logger); err != nil {
			return nil, err
		}
		serverOpts = append(serverOpts, temporal.WithCustomMetricsHandler(mh))
	}
	srv, err := temporal.NewServer(serverOpts...)
	if err != nil {
		if mh != nil {
			mh.Stop(logger) // closes the metrics listener the server would have closed
		}
		return nil, fmt.Errorf("devstack: create Temporal server: %w", err)
	}
	return srv, nil
}

// newMetricsHandler builds the Prometheus handler (own registry, OpenTelemetry
// framework) and hands it to the server as a custom handler. Passed through
// config.Global.Metrics instead, the server never stops it: the tally
// listener is never closed and the OTel one only is for custom handlers, so a
// restart in the same process could not rebind the port.
func newMetricsHandler(plan *temporalPlan, logger log.Logger) (metrics.Handler, error) {
	mh, err := metrics.MetricsHandlerFromConfig(logger, &metrics.Config{
		Prometheus: &metrics.PrometheusConfig{
			Framework:     metrics.FrameworkOpentelemetry,
			ListenAddress: net.JoinHostPort(plan.bindIP, strconv.Itoa(plan.metricsPort)),
			HandlerPath:   "/metrics",
		},
	})
	if err != nil {
		return nil, fmt.Errorf("devstack: metrics handler: %w", err)
	}
	return mh, nil
}

// startServer runs srv.Start (which blocks until all services started) and
// gives up when ctx ends; the server is then stopped once Start returns.
func startServer(ctx context.Context, srv temporal.Server) error {
	done := make(chan error, 1)
	go func() { done <- srv.Start() }()
	select {
	case err := <-done:
		if err != nil {
			_ = srv.Stop()
			return fmt.Errorf("devstack: start Temporal server: %w", err)
		}
		return nil
	case <-ctx.Done():
		go func() {
			<-done
			_ = srv.Stop()
		}()
		return fmt.Errorf("devstack: start Temporal server: %w", ctx.Err())
	}
}

// waitReady dials the frontend until it answers a health check, checks
// the namespace and makes sure the requested search attributes exist and
// are queryable. It talks to the frontend through the raw API services
// (go.temporal.io/api), not the SDK client.
func (t *Temporal) waitReady(ctx context.Context, _ *slog.Logger) error {
	conn, err := grpc.NewClient(t.HostPort(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("devstack: dial %s: %w", t.HostPort(), err)
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	var last error
	for {
		hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := health.Check(hctx, &healthpb.HealthCheckRequest{Service: "temporal.api.workflowservice.v1.WorkflowService"})
		cancel()
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			break
		}
		last = err
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("devstack: Temporal frontend %s not ready: %w", t.HostPort(), errors.Join(err, last))
		}
	}
	ws := workflowservice.NewWorkflowServiceClient(conn)
	for {
		_, err := ws.DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: t.plan.namespace})
		if err == nil {
			break
		}
		if errCode(err) != codes.Unavailable && errCode(err) != codes.NotFound {
			return fmt.Errorf("devstack: describe namespace %q: %w", t.plan.namespace, err)
		}
		if serr := sleepCtx(ctx, 100*time.Millisecond); serr != nil {
			return fmt.Errorf("devstack: describe namespace %q: %w", t.plan.namespace, errors.Join(serr, err))
		}
	}
	return ensureSearchAttributes(ctx, ws, operatorservice.NewOperatorServiceClient(conn), t.plan.namespace, t.plan.searchAttrs)
}

// ensureSearchAttributes adds the attributes of want that ns lacks (an
// "already exists" answer counts as success), fails on a name registered with
// another type, then waits until the frontend accepts a visibility query on
// each (its namespace cache refreshes every 2 s).
func ensureSearchAttributes(ctx context.Context, ws workflowservice.WorkflowServiceClient, op operatorservice.OperatorServiceClient, ns string, want map[string]enumspb.IndexedValueType) error {
	if len(want) == 0 {
		return nil
	}
	have, err := op.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: ns})
	if err != nil {
		return fmt.Errorf("devstack: list search attributes of %q: %w", ns, err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, typ := range want {
		if got, ok := have.GetSystemAttributes()[name]; ok {
			return fmt.Errorf("devstack: search attribute %q is a system attribute (%s)", name, got)
		}
		got, ok := have.GetCustomAttributes()[name]
		switch {
		case !ok:
			missing[name] = typ
		case got != typ:
			return fmt.Errorf("devstack: search attribute %q exists in %q as %s, want %s", name, ns, got, typ)
		}
	}
	if len(missing) > 0 {
		_, err := op.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: ns, SearchAttributes: missing})
		if err != nil && errCode(err) != codes.AlreadyExists && !strings.Contains(err.Error(), "already exists") {
			return fmt.Errorf("devstack: add search attributes %v to %q: %w", slices.Sorted(maps.Keys(missing)), ns, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		query := fmt.Sprintf("`%s` IS NULL", name)
		for {
			_, err := ws.CountWorkflowExecutions(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: ns, Query: query})
			if err == nil {
				break
			}
			if errCode(err) != codes.InvalidArgument {
				return fmt.Errorf("devstack: query search attribute %q: %w", name, err)
			}
			if serr := sleepCtx(ctx, 100*time.Millisecond); serr != nil {
				return fmt.Errorf("devstack: search attribute %q not usable: %w", name, errors.Join(serr, err))
			}
		}
	}
	return nil
}

// errCode is the gRPC code of err, whether it is a raw gRPC status error (raw
// service clients) or a serviceerror (SDK client methods).
func errCode(err error) codes.Code { return serviceerror.ToStatus(err).Code() }

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// HostPort returns the frontend gRPC address clients dial, e.g. "127.0.0.1:7233".
func (t *Temporal) HostPort() string { return t.plan.frontendHostPort() }

// HTTPHostPort returns the frontend HTTP API address, e.g. "127.0.0.1:7243".
func (t *Temporal) HTTPHostPort() string { return t.plan.hostPort(t.plan.httpPort) }

// UIURL returns the Web UI base URL, e.g. "http://127.0.0.1:8233", or "" when
// the UI is disabled.
func (t *Temporal) UIURL() string {
	if t.ui == nil {
		return ""
	}
	return t.ui.url
}

// Namespace returns the namespace created at start, e.g. "default".
func (t *Temporal) Namespace() string { return t.plan.namespace }

// Stop stops the UI, then the server (all services, listeners closed so the
// ports can be reused). It is safe to call more than once and from several
// goroutines; later calls return the first call's result. SQLite connections
// are pooled process-wide by the server's SQLite plugin and never closed, so
// an in-memory database stays in memory and a DB file stays open until the
// process exits.
func (t *Temporal) Stop() error {
	t.stopOnce.Do(func() {
		if t.ui != nil {
			t.ui.stop()
		}
		if err := t.srv.Stop(); err != nil {
			t.stopErr = fmt.Errorf("devstack: stop Temporal server: %w", err)
		}
	})
	return t.stopErr
}

// CreateNamespace registers namespace ns on the server (an existing one is
// kept), waits until the frontend describes it, and registers
// searchAttrs on it as StartTemporal does for the default namespace (nil:
// none). For tests and tools that want a namespace of their own: workers,
// pollers and visibility are per namespace. Errors: the frontend's.
func (t *Temporal) CreateNamespace(ctx context.Context, ns string, searchAttrs map[string]enumspb.IndexedValueType) error {
	conn, err := grpc.NewClient(t.HostPort(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("devstack: dial %s: %w", t.HostPort(), err)
	}
	defer conn.Close()
	ws := workflowservice.NewWorkflowServiceClient(conn)
	_, err = ws.RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{Namespace: ns, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour)})
	if err != nil && errCode(err) != codes.AlreadyExists {
		return fmt.Errorf("devstack: register namespace %q: %w", ns, err)
	}
	for {
		_, err := ws.DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: ns})
		if err == nil {
			break
		}
		if errCode(err) != codes.Unavailable && errCode(err) != codes.NotFound {
			return fmt.Errorf("devstack: describe namespace %q: %w", ns, err)
		}
		if serr := sleepCtx(ctx, 100*time.Millisecond); serr != nil {
			return fmt.Errorf("devstack: describe namespace %q: %w", ns, errors.Join(serr, err))
		}
	}
	return ensureSearchAttributes(ctx, ws, operatorservice.NewOperatorServiceClient(conn), ns, searchAttrs)
}
