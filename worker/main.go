// Command worker runs the lakemirror Temporal worker: it executes the
// table workflows and their activities against Temporal, Kafka and an
// Iceberg catalog given by flags or environment. With -dev it first starts
// an embedded Temporal dev server with the Web UI (ports 7233 and 8233), an
// embedded Kafka broker (port 19092) and a local SQLite catalog, all
// persisted under -data-dir.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/lakemirror/lakemirror/internal/config"
	"github.com/lakemirror/lakemirror/worker/runner"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// explicit reports whether a flag was set on the command line or through
// its environment variable.
func explicit(fs *flag.FlagSet, name, env string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	_, inEnv := os.LookupEnv(env)
	return set || inEnv
}

func run() error {
	var s config.Settings
	fs := flag.NewFlagSet("worker", flag.ExitOnError)
	bind := s.Bind(fs)
	dev := fs.Bool("dev", false, "start an embedded Temporal dev server + Web UI, Kafka broker and SQLite catalog, persisted under -data-dir; with an explicit -kafka-brokers (or KAFKA_BROKERS) that Kafka is used instead of the embedded one")
	grpcPort := fs.Int("dev-temporal-port", 7233, "with -dev: Temporal frontend port (Web UI on port+1000)")
	kafkaPort := fs.Int("dev-kafka-port", 19092, "with -dev: Kafka broker port")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	withPprof := fs.Bool("pprof", os.Getenv("LAKEMIRROR_PPROF") != "", "also serve Go profiles (net/http/pprof, /debug/pprof/) on -metrics-addr; off by default: profiles reveal internals (env LAKEMIRROR_PPROF=1)")
	gcPercent := fs.Int("gc-percent", -1, "garbage collector target percentage (GOGC); -1 = tuned to the live heap (100 to 400: up to 1 GiB of garbage between collections); the environment's GOGC wins when set")
	memLimit := fs.String("memory-limit", "auto", "soft memory limit of the Go heap (GOMEMLIMIT), e.g. 1536MiB; auto = 80% of the container's memory limit, else a quarter of the machine's memory; the environment's GOMEMLIMIT wins when set")
	metricsAddr := fs.String("metrics-addr", envOr("METRICS_ADDR", "127.0.0.1:9464"), "listen address of the Prometheus /metrics endpoint (pipeline and Temporal SDK metrics); empty = off (env METRICS_ADDR)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: worker [flags]\n\nRuns the lakemirror Temporal worker (task queue %q).\n\nFlags:\n", "lakemirror")
		fs.PrintDefaults()
	}
	_ = fs.Parse(os.Args[1:])
	if err := bind.Finish(); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("bad -log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
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
			return fmt.Errorf("bad -memory-limit %q: a size such as 1536MiB, or auto", *memLimit)
		}
	}
	set := tuneGC(ctx, percent, limit)
	logger.Debug("garbage collector", "gc_percent", percent, "memory_limit_bytes", set)

	if *dev {
		opts := runner.DevOptions{DataDir: s.DataDir, GRPCPort: *grpcPort, KafkaPort: *kafkaPort, Logger: logger}
		if explicit(fs, "kafka-brokers", config.EnvKafkaBrokers) {
			opts.KafkaBrokers = s.KafkaBrokers // embedded Temporal and catalog, the given Kafka
		}
		d, err := runner.StartDev(ctx, opts)
		if err != nil {
			return err
		}
		defer d.Stop()
		catalog := s.Catalog
		s = d.Settings
		if catalog.URI != "" || catalog.Warehouse != "" || catalog.Type != "sql" {
			s.Catalog = catalog // an explicit catalog wins over the local one
		}
		logger.Info("dev stack up", "temporal", s.TemporalAddress, "web_ui", d.Temporal.UIURL(), "embedded_kafka", d.Kafka != nil,
			"kafka", s.KafkaBrokers, "data_dir", s.DataDir)
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
		"catalog", s.Catalog.Type)
	<-ctx.Done()
	logger.Info("shutting down")
	return nil
}
