package workercmd

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/buildinfo"
	"github.com/lakemirror/lakemirror/internal/devstack"
	"github.com/lakemirror/lakemirror/worker/runner"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// worker runs the production worker's command line in-process until it
// returns or ctx ends.
func worker(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	for _, env := range []string{"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "KAFKA_BROKERS", "CATALOG_TYPE", "CATALOG_URI", "WAREHOUSE", "CATALOG_PROPS", "LAKEMIRROR_DATA_DIR", "LAKEMIRROR_CATALOG_ID", "METRICS_ADDR"} {
		t.Setenv(env, "")
	}
	var out, errb syncBuffer
	code = Main(ctx, "worker", args, &out, &errb, nil)
	return code, out.String(), errb.String()
}

func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func TestVersionHelpAndDev(t *testing.T) {
	ctx := context.Background()
	if code, out, _ := worker(t, ctx, "--version"); code != ExitOK || out != "worker "+buildinfo.Get().String()+"\n" {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	if code, _, errOut := worker(t, ctx, "-h"); code != ExitOK || !strings.HasPrefix(errOut, "Usage: worker [flags]\n\nRuns the lakemirror Temporal worker (task queue \"lakemirror\").") {
		t.Errorf("-h: exit %d, %q", code, errOut)
	}
	for _, arg := range []string{"-dev", "--dev", "-dev=true", "-dev-kafka-port"} {
		want := "worker: " + arg + ": the production worker has no embedded dev stack any more: run `go run ./worker/dev` (or a binary built from ./worker/dev) with the same flags\n"
		if code, _, errOut := worker(t, ctx, arg); code != ExitUsage || errOut != want {
			t.Errorf("%s: exit %d, %q; want 2, %q", arg, code, errOut, want)
		}
	}
	if code, _, errOut := worker(t, ctx, "-no-such-flag"); code != ExitUsage || !strings.HasPrefix(errOut, "flag provided but not defined: -no-such-flag\n") || !strings.HasSuffix(errOut, "worker: flag provided but not defined: -no-such-flag\n") {
		t.Errorf("unknown flag: exit %d, %q", code, errOut)
	}
}

// The production worker links neither the embedded Temporal server nor
// the dev stack; the dev worker does.
func TestProductionWorkerLinksNoDevStack(t *testing.T) {
	deps := func(pkg string) string {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return string(out)
	}
	prod := deps("github.com/lakemirror/lakemirror/worker")
	for _, p := range []string{"github.com/lakemirror/lakemirror/internal/devstack", "go.temporal.io/server/temporal", "github.com/temporalio/ui-server/v2/server", "github.com/twmb/franz-go/pkg/kfake"} {
		if strings.Contains(prod, p+"\n") {
			t.Errorf("./worker links %s", p)
		}
	}
	if dev := deps("github.com/lakemirror/lakemirror/worker/dev"); !strings.Contains(dev, "github.com/lakemirror/lakemirror/internal/devstack\n") {
		t.Errorf("./worker/dev does not link the dev stack")
	}
}

// A worker whose wiring is wrong refuses to serve (exit code 1) with what
// is wrong and how to fix it: Kafka not reachable, another catalog than a
// worker already polling the task queue; wired right it serves until its
// context ends (exit code 0).
func TestWorkerRefusesWrongWiring(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	st, err := devstack.StartStack(ctx, devstack.StackOptions{UIPort: -1, SearchAttributes: runner.SearchAttributes})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Stop()
	s := st.Settings
	base := []string{"--temporal-address", s.TemporalAddress, "--kafka-brokers", strings.Join(s.KafkaBrokers, ","), "--metrics-addr", "", "--log-level", "warn"}

	noKafka := closedAddr(t)
	code, _, errOut := worker(t, ctx, "--temporal-address", s.TemporalAddress, "--kafka-brokers", noKafka, "--data-dir", s.DataDir, "--metrics-addr", "")
	if code != ExitFailure || !strings.HasPrefix(errOut, "worker: refusing to serve: no Kafka broker of "+noKafka+" answers within 10s: ") {
		t.Errorf("no Kafka: exit %d, %q", code, errOut)
	}

	// a worker on the stack's catalog polls the task queue
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	r, err := runner.Start(ctx, s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	other := t.TempDir()
	otherCfg := s.Catalog
	otherCfg.LocalDir = other
	ours, theirs := otherCfg.Identity(), s.Catalog.Identity()
	// the check sees the first worker once its pollers show on the task
	// queue, which under load takes a moment: wait for them, and give each
	// attempt a short life (a worker that misses them serves until its
	// context ends)
	waitPoller(t, ctx, r.Client, runner.CatalogHash(theirs))
	deadline := time.Now().Add(30 * time.Second)
	for {
		actx, acancel := context.WithTimeout(ctx, 15*time.Second)
		code, _, errOut = worker(t, actx, append(base, "--data-dir", other)...)
		acancel()
		want := fmt.Sprintf("worker: refusing to serve: this worker's catalog is %q (fingerprint %s), but worker %s polls task queue \"lakemirror\" with catalog fingerprint %s\n"+
			"  a worker must use the catalog of the tables it serves, or a table's batches would commit to two catalogs\n"+
			"  fix: start this worker with the tables' catalog settings (CATALOG_TYPE, CATALOG_URI, WAREHOUSE), or, if they name the same catalog under other addresses, give every worker the same --catalog-id (LAKEMIRROR_CATALOG_ID)\n",
			ours, runner.CatalogHash(ours), runner.ParsePoller(runner.Identity("", "")).Host, runner.CatalogHash(theirs))
		if code == ExitFailure && errOut == want {
			break
		}
		if time.Now().After(deadline) { // the first worker's pollers may take a moment to show
			t.Fatalf("another catalog: exit %d, %q; want 1, %q", code, errOut, want)
		}
		time.Sleep(500 * time.Millisecond)
	}

	// wired like the first worker: serves until its context ends
	sctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	var out syncBuffer
	go func() {
		defer close(done)
		code = Main(sctx, "worker", append(base, "--data-dir", s.DataDir, "--log-level", "info"), &out, &out, nil)
	}()
	for !strings.Contains(out.String(), "worker running") {
		select {
		case <-done:
			t.Fatalf("the worker exited: %s", out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	stop()
	<-done
	if code != ExitOK || !strings.Contains(out.String(), "shutting down") {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
}

// waitPoller waits (up to 30 s) until a poller of the shared task queue
// identifies itself with catalog fingerprint hash.
func waitPoller(t *testing.T, ctx context.Context, c client.Client, hash string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, tq := range []enumspb.TaskQueueType{enumspb.TASK_QUEUE_TYPE_WORKFLOW, enumspb.TASK_QUEUE_TYPE_ACTIVITY} {
			resp, err := c.DescribeTaskQueue(ctx, activities.TaskQueue, tq)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range resp.GetPollers() {
				if runner.ParsePoller(p.GetIdentity()).Catalog == hash {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no poller with catalog fingerprint %s on task queue %q", hash, activities.TaskQueue)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
