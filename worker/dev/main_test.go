package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/config"
	"github.com/lakemirror/lakemirror/internal/devstack"
)

// TestDevWorkerIDIsStable: without -worker-id the dev worker takes the id
// persisted in its data dir, the same after a restart; an explicit id
// wins; without a data dir the id stays "" (random per process).
func TestDevWorkerIDIsStable(t *testing.T) {
	dir := t.TempDir()
	none := func(string, string) bool { return false }
	first, err := devWorkerID(config.Settings{DataDir: dir}, none)
	if err != nil || len(first) != 12 {
		t.Fatalf("first start: id %q (%v), want 12 hex digits", first, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, devstack.WorkerIDFile))
	if err != nil || string(b) != first+"\n" {
		t.Fatalf("persisted %q (%v), want %q", b, err, first+"\n")
	}
	restarted, err := devWorkerID(config.Settings{DataDir: dir}, none)
	if err != nil || restarted != first {
		t.Fatalf("restart: id %q (%v), want %q", restarted, err, first)
	}
	given := func(flag, env string) bool { return flag == "worker-id" && env == config.EnvWorkerID }
	if id, err := devWorkerID(config.Settings{DataDir: dir, WorkerID: "w2"}, given); err != nil || id != "w2" {
		t.Fatalf("explicit: id %q (%v), want w2", id, err)
	}
	if id, err := devWorkerID(config.Settings{}, none); err != nil || id != "" {
		t.Fatalf("no data dir: id %q (%v), want \"\"", id, err)
	}
}

// TestWithStackKeepsWorkerSettings: the dev worker takes Temporal, Kafka
// and the catalog from its embedded stack but keeps the worker's own
// flags: the index budget (--index-memory, --index-table-memory), the
// sidecars (--sidecar-every), the idle release, the state dir, sources.
func TestWithStackKeepsWorkerSettings(t *testing.T) {
	given := config.Settings{TemporalAddress: "127.0.0.1:7233", KafkaBrokers: []string{"127.0.0.1:9092"}, StateDir: "/state",
		Sources: map[string]string{"shop": "postgres://x"}, SchemaRegistry: "http://registry", SidecarEvery: 7,
		IndexMemory: 1 << 30, IndexTableMemory: 256 << 20, ReleaseIdleState: 90 * time.Minute}
	given.Catalog.Type = "sql"
	given.Catalog.ID = "cat"
	given.KafkaSecurity.User = "u"
	stack := config.Settings{TemporalAddress: "127.0.0.1:17233", Namespace: "default", KafkaBrokers: []string{"127.0.0.1:19092"}, DataDir: "/data"}
	stack.Catalog.Type, stack.Catalog.LocalDir = "sql", "/data"
	s := withStack(given, stack, false, "abc")
	if s.TemporalAddress != "127.0.0.1:17233" || s.KafkaBrokers[0] != "127.0.0.1:19092" || s.DataDir != "/data" ||
		s.Catalog.LocalDir != "/data" || s.Catalog.ID != "cat" || s.KafkaSecurity.User != "" {
		t.Errorf("stack settings not taken: %+v", s)
	}
	if s.SidecarEvery != 7 || s.IndexMemory != 1<<30 || s.IndexTableMemory != 256<<20 || s.ReleaseIdleState != 90*time.Minute ||
		s.StateDir != "/state" || s.Sources["shop"] != "postgres://x" || s.SchemaRegistry != "http://registry" || s.WorkerID != "abc" {
		t.Errorf("worker settings lost: sidecar every %d, index %d/%d, release %v, state dir %q, sources %v, registry %q, id %q",
			s.SidecarEvery, s.IndexMemory, s.IndexTableMemory, s.ReleaseIdleState, s.StateDir, s.Sources, s.SchemaRegistry, s.WorkerID)
	}
	if s = withStack(given, stack, true, "abc"); s.KafkaSecurity.User != "u" {
		t.Error("an external Kafka's security was not kept")
	}
}
