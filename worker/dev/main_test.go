package main

import (
	"os"
	"path/filepath"
	"testing"

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
