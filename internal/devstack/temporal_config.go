package devstack

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
)

const (
	// DefaultGRPCPort is the frontend gRPC port `temporal server start-dev`
	// uses; pass it as TemporalOptions.GRPCPort to get the CLI's layout.
	DefaultGRPCPort = 7233
	// DefaultUIPortOffset is added to an explicit GRPCPort to get the UI port
	// when TemporalOptions.UIPort is 0 (7233 -> 8233), as the CLI does.
	DefaultUIPortOffset = 1000
	// DefaultNamespace is the namespace created when TemporalOptions.Namespace is "".
	DefaultNamespace = "default"
	// DefaultIP is the bind address used when TemporalOptions.IP is "".
	DefaultIP = "127.0.0.1"

	clusterName = "active" // single-cluster name, as in the CLI and temporaltest
)

// temporalPlan is TemporalOptions with every default applied and every port
// chosen; it is what the server config, the UI and the readiness checks use.
type temporalPlan struct {
	bindIP string // address services listen on
	hostIP string // address clients dial (bindIP, or 127.0.0.1 for 0.0.0.0/::)

	grpcPort, httpPort, uiPort, metricsPort int // uiPort/metricsPort 0 = off
	historyPort, matchingPort, workerPort   int

	namespace   string
	searchAttrs map[string]enumspb.IndexedValueType
	dbFile      string // "" = in-memory
	logLevel    slog.Level
}

// planTemporal validates opts, applies defaults and picks free ports.
func planTemporal(opts TemporalOptions) (*temporalPlan, error) {
	p := &temporalPlan{
		bindIP:      opts.IP,
		namespace:   opts.Namespace,
		searchAttrs: maps.Clone(opts.SearchAttributes),
		dbFile:      opts.DBFile,
		grpcPort:    opts.GRPCPort,
		httpPort:    opts.HTTPPort,
		metricsPort: opts.MetricsPort,
	}
	if p.bindIP == "" {
		p.bindIP = DefaultIP
	}
	ip := net.ParseIP(p.bindIP)
	if ip == nil {
		return nil, fmt.Errorf("devstack: IP %q is not an IP address", opts.IP)
	}
	p.hostIP = p.bindIP
	if ip.IsUnspecified() {
		p.hostIP = DefaultIP
	}
	if p.namespace == "" {
		p.namespace = DefaultNamespace
	}
	lvl, err := parseLogLevel(opts.LogLevel)
	if err != nil {
		return nil, err
	}
	p.logLevel = lvl

	for name, v := range map[string]int{"GRPCPort": opts.GRPCPort, "HTTPPort": opts.HTTPPort, "MetricsPort": opts.MetricsPort} {
		if v < 0 || v > 65535 {
			return nil, fmt.Errorf("devstack: %s %d out of range 0..65535", name, v)
		}
	}
	if opts.UIPort < -1 || opts.UIPort > 65535 {
		return nil, fmt.Errorf("devstack: UIPort %d out of range -1..65535", opts.UIPort)
	}
	switch {
	case opts.UIPort > 0:
		p.uiPort = opts.UIPort
	case opts.UIPort == 0 && opts.GRPCPort > 0 && opts.GRPCPort+DefaultUIPortOffset <= 65535:
		p.uiPort = opts.GRPCPort + DefaultUIPortOffset
	}
	wantUI := opts.UIPort != -1

	// Pick every port that is still 0 in one go so none repeats.
	var slots []*int
	for _, s := range []*int{&p.grpcPort, &p.httpPort} {
		if *s == 0 {
			slots = append(slots, s)
		}
	}
	if wantUI && p.uiPort == 0 {
		slots = append(slots, &p.uiPort)
	}
	slots = append(slots, &p.historyPort, &p.matchingPort, &p.workerPort)
	free, err := freePorts(p.bindIP, len(slots))
	if err != nil {
		return nil, err
	}
	for i, s := range slots {
		*s = free[i]
	}

	seen := map[int]string{}
	for name, v := range map[string]int{"GRPCPort": p.grpcPort, "HTTPPort": p.httpPort, "UIPort": p.uiPort, "MetricsPort": p.metricsPort} {
		if v == 0 {
			continue
		}
		if other, ok := seen[v]; ok {
			return nil, fmt.Errorf("devstack: %s and %s are both %d", name, other, v)
		}
		seen[v] = name
	}
	return p, nil
}

func (p *temporalPlan) hostPort(port int) string {
	return net.JoinHostPort(p.hostIP, strconv.Itoa(port))
}

// frontendHostPort is the address clients dial, e.g. "127.0.0.1:7233".
func (p *temporalPlan) frontendHostPort() string { return p.hostPort(p.grpcPort) }

// listenPorts are the ports the server and UI will bind on bindIP.
func (p *temporalPlan) listenPorts() []int {
	return []int{p.grpcPort, p.httpPort, p.uiPort, p.metricsPort, p.historyPort, p.matchingPort, p.workerPort}
}

// sqlConfig is the SQLite store used for both persistence and visibility.
//
// In-memory: mode=memory, cache=shared and a random database name, so several
// servers in one process never share a database. The SQLite plugin creates the
// schema itself on the first connection to a mode=memory database (running
// SetupSchema on it again fails with "table ... already exists").
// File: mode=rwc; the schema is created by prepareDatabase when the file is new.
func (p *temporalPlan) sqlConfig() (*config.SQL, error) {
	cfg := &config.SQL{PluginName: sqliteplugin.PluginName, ConnectAttributes: map[string]string{}}
	if p.dbFile == "" {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		cfg.DatabaseName = "devstack-" + hex.EncodeToString(b[:])
		cfg.ConnectAttributes["mode"] = "memory"
		cfg.ConnectAttributes["cache"] = "shared"
		return cfg, nil
	}
	abs, err := filepath.Abs(p.dbFile)
	if err != nil {
		return nil, err
	}
	cfg.DatabaseName = abs
	cfg.ConnectAttributes["mode"] = "rwc"
	// write-ahead log with synchronous=NORMAL: a transaction costs one
	// append to the log instead of a rollback journal written, synced and
	// deleted (three fsyncs); still crash-safe (a power loss may lose the
	// last transactions, never corrupt the file), and the server's task
	// round trips between a table's batches get shorter
	cfg.ConnectAttributes["journal_mode"] = "wal"
	cfg.ConnectAttributes["synchronous"] = "normal"
	return cfg, nil
}

// prepareDatabase creates the schema for a new DB file (never for an existing
// one) and inserts the namespace with its search attributes if it is missing.
// An existing namespace is left alone; missing search attributes are added
// through the operator API after start (ensureSearchAttributes).
func (p *temporalPlan) prepareDatabase(sqlCfg *config.SQL) error {
	if p.dbFile != "" {
		_, err := os.Stat(sqlCfg.DatabaseName)
		switch {
		case errors.Is(err, os.ErrNotExist):
			if _, err := os.Stat(filepath.Dir(sqlCfg.DatabaseName)); err != nil {
				return fmt.Errorf("devstack: DB file directory: %w", err)
			}
			if err := sqliteschema.SetupSchema(sqlCfg); err != nil {
				return fmt.Errorf("devstack: set up SQLite schema in %s: %w", sqlCfg.DatabaseName, err)
			}
		case err != nil:
			return fmt.Errorf("devstack: DB file: %w", err)
		}
	}
	ns, err := sqliteschema.NewNamespaceConfig(clusterName, p.namespace, false, p.searchAttrs)
	if err != nil {
		return fmt.Errorf("devstack: namespace %q: %w", p.namespace, err)
	}
	if err := sqliteschema.CreateNamespaces(sqlCfg, ns); err != nil {
		return fmt.Errorf("devstack: create namespace %q: %w", p.namespace, err)
	}
	return nil
}

// serverConfig builds the static server config `temporal server start-dev`
// builds: one SQLite store for persistence and visibility, one history shard,
// a single "active" cluster, frontend/history/matching/worker on their own
// ports, archival disabled. Metrics are configured separately (see
// newMetricsHandler) and pprof stays off (its listener is process-global).
func (p *temporalPlan) serverConfig(sqlCfg *config.SQL) *config.Config {
	svc := func(grpcPort, httpPort int) config.Service {
		return config.Service{RPC: config.RPC{GRPCPort: grpcPort, HTTPPort: httpPort, BindOnIP: p.bindIP}}
	}
	conf := &config.Config{}
	conf.Global.Membership = config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: p.hostIP}
	conf.Persistence = config.Persistence{
		DefaultStore:     sqliteplugin.PluginName,
		VisibilityStore:  sqliteplugin.PluginName,
		NumHistoryShards: 1,
		DataStores:       map[string]config.DataStore{sqliteplugin.PluginName: {SQL: sqlCfg}},
	}
	conf.ClusterMetadata = &cluster.Config{
		EnableGlobalNamespace:    false,
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{
			clusterName: {
				Enabled:                true,
				InitialFailoverVersion: 1,
				RPCAddress:             p.frontendHostPort(),
				HTTPAddress:            p.hostPort(p.httpPort),
			},
		},
	}
	conf.DCRedirectionPolicy = config.DCRedirectionPolicy{Policy: "noop"}
	conf.Services = map[string]config.Service{
		string(primitives.FrontendService): svc(p.grpcPort, p.httpPort),
		string(primitives.HistoryService):  svc(p.historyPort, 0),
		string(primitives.MatchingService): svc(p.matchingPort, 0),
		string(primitives.WorkerService):   svc(p.workerPort, 0),
	}
	conf.Archival = config.Archival{
		History:    config.HistoryArchival{State: "disabled"},
		Visibility: config.VisibilityArchival{State: "disabled"},
	}
	conf.NamespaceDefaults = config.NamespaceDefaults{Archival: config.ArchivalNamespaceDefaults{
		History:    config.HistoryArchivalNamespaceDefaults{State: "disabled"},
		Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
	}}
	// The server's internal SDK clients (worker service) dial this.
	conf.PublicClient = config.PublicClient{HostPort: p.frontendHostPort()}
	return conf
}

// staticHosts pins every service to its single local address (no ringpop
// membership), as the CLI does.
func (p *temporalPlan) staticHosts() map[primitives.ServiceName]static.Hosts {
	return map[primitives.ServiceName]static.Hosts{
		primitives.FrontendService: static.SingleLocalHost(p.frontendHostPort()),
		primitives.HistoryService:  static.SingleLocalHost(p.hostPort(p.historyPort)),
		primitives.MatchingService: static.SingleLocalHost(p.hostPort(p.matchingPort)),
		primitives.WorkerService:   static.SingleLocalHost(p.hostPort(p.workerPort)),
	}
}

// devDynamicConfig holds the dynamic config values the dev server runs with:
//   - the CLI's history cache size and visibility RPS;
//   - no version check (it calls out to the internet every few hours);
//   - no system SDK workers that the worker service starts but never stops
//     (server v1.32.1: the parent-close-policy processor and the task-queue
//     and history scanners; see the "Nothing is gracefully stopping these
//     workers" TODOs in service/worker/scanner). Left on, every stopped
//     server leaves ~100 goroutines behind that keep polling its frontend
//     address, and a later server on the same port in the same process. With
//     the processor off, history applies parent close policies inline for any
//     number of children; the scanners only garbage-collect old task-queue
//     rows and orphaned history branches, which a dev database can live with;
//   - frontend.enableCancelWorkerPollsOnShutdown on: a stopping worker's
//     SDK then tells the server (ShutdownWorker), which cancels its polls,
//     and the worker runs the tasks its pollers already took instead of
//     dropping them. Off (the server's default), a workflow task a
//     stopping worker had just polled is lost until its 10 s timeout,
//     which delays a table's graceful hand-over (docs/design.md
//     "Graceful stop").
func devDynamicConfig() dynamicconfig.StaticClient {
	return dynamicconfig.StaticClient{
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key():                 8096,
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		dynamicconfig.EnableServerVersionCheck.Key():                     false,
		dynamicconfig.EnableParentClosePolicyWorker.Key():                false,
		dynamicconfig.TaskQueueScannerEnabled.Key():                      false,
		dynamicconfig.HistoryScannerEnabled.Key():                        false,
		dynamicconfig.EnableCancelWorkerPollsOnShutdown.Key():            true,
	}
}
