package devstack

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestWorkerIDPersists: the first call writes a new id to the data dir,
// later calls (a restarted dev worker) return the same id; another data
// dir gets another id; a damaged file is an error naming the file.
func TestWorkerIDPersists(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	id, err := WorkerID(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(id) {
		t.Fatalf("id %q, want 12 hex digits", id)
	}
	b, err := os.ReadFile(filepath.Join(dir, WorkerIDFile))
	if err != nil || string(b) != id+"\n" {
		t.Fatalf("file %q (%v), want %q", b, err, id+"\n")
	}
	again, err := WorkerID(dir)
	if err != nil || again != id {
		t.Fatalf("second call %q (%v), want %q", again, err, id)
	}
	other, err := WorkerID(t.TempDir())
	if err != nil || other == id {
		t.Fatalf("other dir's id %q (%v), want one other than %q", other, err, id)
	}
	if err := os.WriteFile(filepath.Join(dir, WorkerIDFile), []byte("my laptop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = WorkerID(dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, WorkerIDFile)+` holds "my laptop", not a worker id`) {
		t.Fatalf("damaged file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, WorkerIDFile), []byte(" laptop-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := WorkerID(dir); err != nil || got != "laptop-1" {
		t.Fatalf("hand-written id: %q (%v), want laptop-1", got, err)
	}
}
