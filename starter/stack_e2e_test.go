//go:build e2e

package main

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/devstack"
	"github.com/lakemirror/lakemirror/workflows"
)

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
