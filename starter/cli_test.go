package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/devstack"
	"github.com/lakemirror/lakemirror/workflows"
)

// cli runs the starter's command line in-process and returns its exit
// code, standard output and standard error. The environment's connection
// settings do not apply unless args leave them out on purpose: tests
// give every address as a flag.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return cliContext(t, context.Background(), args...)
}

func cliContext(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	for _, env := range []string{"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "KAFKA_BROKERS", "CATALOG_TYPE", "CATALOG_URI", "WAREHOUSE", "CATALOG_PROPS", "LAKEMIRROR_DATA_DIR", "TEMPORAL_API_KEY"} {
		t.Setenv(env, "") // restored when the test ends
		os.Unsetenv(env)
	}
	var out, errb syncBuffer
	code = runContext(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

// syncBuffer is a bytes.Buffer safe for concurrent writes and reads.
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

// closedAddr is a 127.0.0.1 address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func hasPrefix(s, prefix string) bool { return strings.HasPrefix(s, prefix) }

// The package's shared embedded stack (Temporal, Kafka, a SQLite catalog
// in a temp dir), started by the first test that needs it; no worker runs
// on it unless a test starts one.
var (
	stackOnce sync.Once
	shared    *devstack.Stack
	stackErr  error
)

func testStack(t *testing.T) *devstack.Stack {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the embedded Temporal server")
	}
	stackOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		shared, stackErr = devstack.StartStack(ctx, devstack.StackOptions{UIPort: -1, SearchAttributes: workflows.SearchAttributeTypes})
	})
	if stackErr != nil {
		t.Fatal(stackErr)
	}
	return shared
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.Stop()
	}
	os.Exit(code)
}

// stackArgs are the connection flags of the shared stack.
func stackArgs(st *devstack.Stack) []string {
	return []string{"--temporal-address", st.Settings.TemporalAddress, "--kafka-brokers", strings.Join(st.Settings.KafkaBrokers, ","), "--data-dir", st.Settings.DataDir}
}

// waitUntil polls cond for up to a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
