package devstack

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// WorkerIDFile is the file in a dev worker's data dir that holds its
// worker id.
const WorkerIDFile = "worker-id"

// WorkerID returns the worker id persisted in dataDir/worker-id, creating
// the file with a new random id (12 hex digits) when it does not exist.
// The dev worker uses it as its default -worker-id, so a restarted dev
// worker polls the same own queue (lakemirror@<id>) and takes its tables
// back at once instead of after the hand-over wait (docs/design.md,
// "Routing"). Errors: the file unreadable or not writable, or holding
// something other than one id of letters, digits, '-', '_' and '.' (at
// most 64 bytes): the message names the file to fix or remove.
func WorkerID(dataDir string) (string, error) {
	path := filepath.Join(dataDir, WorkerIDFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		id := strings.TrimSpace(string(b))
		if !validWorkerID(id) {
			return "", fmt.Errorf("devstack: %s holds %q, not a worker id (1 to 64 of a-z, A-Z, 0-9, '-', '_', '.'): fix it or remove the file for a new id", path, truncate(id, 80))
		}
		return id, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("devstack: worker id: %w", err)
	}
	var r [6]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", fmt.Errorf("devstack: worker id: %w", err)
	}
	id := hex.EncodeToString(r[:])
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return "", fmt.Errorf("devstack: data dir: %w", err)
	}
	if err := os.WriteFile(path, []byte(id+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("devstack: worker id: %w", err)
	}
	return id, nil
}

func validWorkerID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
