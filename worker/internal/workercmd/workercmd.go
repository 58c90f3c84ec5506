// Package workercmd is the worker's command line, shared by the
// production worker (./worker) and the dev worker (./worker/dev, which
// adds the embedded dev stack): flags with environment defaults, the
// wiring check (runner.Preflight), the garbage-collector tuning, the
// Prometheus endpoint, and serving until SIGINT or SIGTERM.
package workercmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/buildinfo"
	"github.com/lakemirror/lakemirror/internal/config"
	"github.com/lakemirror/lakemirror/worker/runner"
)

// Exit codes of the worker.
const (
	ExitOK      = 0 // stopped by SIGINT or SIGTERM after serving, or -help, -version
	ExitFailure = 1 // a service not reachable, the wiring check refused, the worker failed
	ExitUsage   = 2 // bad flags
)

// Stack is an embedded stack the worker starts before serving (the dev
// worker's Temporal, Kafka and SQLite catalog); the production worker has
// none.
type Stack interface {
	// Bind registers the stack's flags on fs.
	Bind(fs *flag.FlagSet)
	// Start starts the stack and points s at it; explicit reports whether
	// a setting's flag or environment variable was given (such settings
	// may win over the stack's). stop stops the stack.
	Start(ctx context.Context, s *config.Settings, explicit func(flag, env string) bool, logger *slog.Logger) (stop func(), err error)
}

// Main runs the worker named name (for messages) with the command-line
// args until ctx ends or SIGINT or SIGTERM arrives, writing -help and
// -version to stdout and logs to stderr, and returns the exit code. stack
// is nil for the production worker.
func Main(ctx context.Context, name string, args []string, stdout, stderr io.Writer, stack Stack) int {
	if stack == nil {
		for _, a := range args {
			if a == "--" {
				break
			}
			if f, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && (f == "dev" || strings.HasPrefix(f, "dev-")) {
				fmt.Fprintf(stderr, "%s: %s: the production worker has no embedded dev stack any more: run `go run ./worker/dev` (or a binary built from ./worker/dev) with the same flags\n", name, a)
				return ExitUsage
			}
		}
	}
	err := run(ctx, name, args, stdout, stderr, stack)
	var ue usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitUsage
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return ExitFailure
}

// usageError marks a command-line error (exit code 2).
type usageError struct{ error }

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func run(ctx context.Context, name string, args []string, stdout, stderr io.Writer, stack Stack) error {
	var s config.Settings
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	bind := s.Bind(fs)
	if stack != nil {
		stack.Bind(fs)
	}
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	withPprof := fs.Bool("pprof", os.Getenv("LAKEMIRROR_PPROF") != "", "also serve Go profiles (net/http/pprof, /debug/pprof/) on -metrics-addr; off by default: profiles reveal internals (env LAKEMIRROR_PPROF=1)")
	gcPercent := fs.Int("gc-percent", -1, "garbage collector target percentage (GOGC); -1 = tuned to the live heap (100 to 400: up to 1 GiB of garbage between collections); the environment's GOGC wins when set")
	memLimit := fs.String("memory-limit", "auto", "soft memory limit of the Go heap (GOMEMLIMIT), e.g. 1536MiB; auto = 80% of the container's memory limit, else a quarter of the machine's memory; the environment's GOMEMLIMIT wins when set")
	metricsAddr := fs.String("metrics-addr", envOr("METRICS_ADDR", "127.0.0.1:9464"), "listen address of the Prometheus /metrics endpoint (pipeline and Temporal SDK metrics); empty = off (env METRICS_ADDR)")
	preflight := fs.Bool("preflight", true, "before serving, check that Kafka and the catalog are reachable and that the running tables and the other workers use this worker's catalog, and refuse to serve otherwise; -preflight=false skips the check (not recommended)")
	version := fs.Bool("version", false, "print the build (version, VCS revision, Go version) and exit")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s [flags]\n\nRuns the lakemirror Temporal worker (task queue %q).\n\nFlags:\n", name, activities.TaskQueue)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q (the worker takes flags only)", fs.Args())}
	}
	if *version {
		fmt.Fprintf(stdout, "%s %s\n", name, buildinfo.Get())
		return nil
	}
	if err := bind.Finish(); err != nil {
		return usageError{err}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return usageError{fmt.Errorf("bad -log-level: %w", err)}
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	ctx, cancel := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer cancel()
	percent, limit := *gcPercent, int64(0)
	if _, ok := os.LookupEnv("GOGC"); ok {
		percent = -2
	}
	if _, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		limit = -1
	} else if *memLimit != "auto" {
		var err error
		if limit, err = parseBytes(*memLimit); err != nil || limit == 0 {
			return usageError{fmt.Errorf("bad -memory-limit %q: a size such as 1536MiB, or auto", *memLimit)}
		}
	}
	set := tuneGC(ctx, percent, limit)
	logger.Debug("garbage collector", "gc_percent", percent, "memory_limit_bytes", set)

	if stack != nil {
		explicit := func(flagName, env string) bool {
			set := false
			fs.Visit(func(f *flag.Flag) { set = set || f.Name == flagName })
			_, inEnv := os.LookupEnv(env)
			return set || inEnv
		}
		stop, err := stack.Start(ctx, &s, explicit, logger)
		if err != nil {
			return err
		}
		defer stop()
	}
	if *preflight {
		warnings, err := runner.Preflight(ctx, s)
		for _, w := range warnings {
			logger.Warn(w)
		}
		if err != nil {
			return fmt.Errorf("refusing to serve: %w", err)
		}
	}
	r, err := runner.Start(ctx, s, logger)
	if err != nil {
		return err
	}
	defer r.Stop()
	if *metricsAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", r.Metrics.Handler())
		if *withPprof {
			mux.HandleFunc("/debug/pprof/", pprof.Index)
			mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
			mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
			mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		}
		srv := &http.Server{Addr: *metricsAddr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		ln, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			return fmt.Errorf("metrics listener: %w", err)
		}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		logger.Info("metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	}
	logger.Info("worker running", "temporal", s.TemporalAddress, "namespace", s.Namespace, "kafka", s.KafkaBrokers,
		"catalog", s.Catalog.Identity(), "build", buildinfo.Get().Short())
	<-ctx.Done()
	logger.Info("shutting down")
	return nil
}
