package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/apache/iceberg-go/catalog"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/internal/config"
	"github.com/lakemirror/lakemirror/internal/devstack"
	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/worker/runner"
	"github.com/lakemirror/lakemirror/workflows"
)

// cluster is the dev stack of a run (held by the suite's own process,
// never killed) and the worker processes it starts and kills: each is
// this binary's `worker` command with the stack's settings, its own
// state dir and log file, and the crash point armed through the file arm.
type cluster struct {
	dir         string
	stack       *devstack.Stack
	c           client.Client
	kc          *kafka.Client
	cat         catalog.Catalog
	arm, marker string
	env         []string
	self        string
	procs       map[int]*exec.Cmd
	logs        map[int]string // pid → its log file
	started     int
}

// runDir settles a run's directory: *dir, or a new temporary one named
// with prefix, made absolute (the workers run in it); cleanup removes it
// unless keep.
func runDir(dir *string, prefix string, keep bool) (cleanup func(), err error) {
	if *dir == "" {
		if *dir, err = os.MkdirTemp("", prefix); err != nil {
			return nil, err
		}
	}
	if abs, err := filepath.Abs(*dir); err == nil {
		*dir = abs
	}
	if keep {
		return func() {}, nil
	}
	d := *dir
	return func() { os.RemoveAll(d) }, nil
}

// startCluster starts the dev stack under dir and connects to it.
func startCluster(ctx context.Context, dir string) (*cluster, error) {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	stack, err := devstack.StartStack(ctx, devstack.StackOptions{DataDir: filepath.Join(dir, "stack"), UIPort: -1,
		SearchAttributes: workflows.SearchAttributeTypes, Logger: logger})
	if err != nil {
		return nil, err
	}
	cl := &cluster{dir: dir, stack: stack, procs: map[int]*exec.Cmd{}, logs: map[int]string{},
		arm: filepath.Join(dir, "arm"), marker: filepath.Join(dir, "marker")}
	s := stack.Settings
	if cl.c, err = runner.Dial(s, nil); err != nil {
		cl.stop()
		return nil, err
	}
	if cl.kc, err = runner.NewKafka(s); err != nil {
		cl.stop()
		return nil, err
	}
	if cl.cat, err = lake.OpenCatalog(ctx, s.Catalog); err != nil {
		cl.stop()
		return nil, err
	}
	cl.env = append(os.Environ(),
		config.EnvTemporalAddress+"="+s.TemporalAddress, config.EnvNamespace+"="+s.Namespace,
		config.EnvKafkaBrokers+"="+strings.Join(s.KafkaBrokers, ","),
		config.EnvCatalogType+"="+s.Catalog.Type, config.EnvCatalogURI+"="+s.Catalog.URI, config.EnvWarehouse+"="+s.Catalog.Warehouse,
		config.EnvDataDir+"="+s.DataDir) // the default SQLite catalog and warehouse: the stack's, not ./.lakemirror
	if cl.self, err = os.Executable(); err != nil {
		cl.stop()
		return nil, err
	}
	return cl, nil
}

// startWorker starts one worker process and returns its pid.
func (cl *cluster) startWorker() (int, error) {
	cl.started++
	logPath := filepath.Join(cl.dir, fmt.Sprintf("worker-%02d.log", cl.started))
	logf, err := os.Create(logPath)
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(cl.self, "worker", "-arm", cl.arm, "-marker", cl.marker,
		"-state-dir", filepath.Join(cl.dir, fmt.Sprintf("state-%02d", cl.started)))
	cmd.Env, cmd.Stdout, cmd.Stderr, cmd.Dir = cl.env, logf, logf, cl.dir
	if err := cmd.Start(); err != nil {
		logf.Close()
		return 0, err
	}
	cl.procs[cmd.Process.Pid] = cmd
	cl.logs[cmd.Process.Pid] = logPath
	go func() { _ = cmd.Wait(); logf.Close() }()
	return cmd.Process.Pid, nil
}

// kill SIGKILLs worker pid.
func (cl *cluster) kill(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill %d: %w", pid, err)
	}
	delete(cl.procs, pid)
	return nil
}

// stop kills every worker and stops the stack.
func (cl *cluster) stop() {
	for pid := range cl.procs {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if cl.c != nil {
		cl.c.Close()
	}
	if cl.kc != nil {
		cl.kc.Close()
	}
	cl.stack.Stop()
}
