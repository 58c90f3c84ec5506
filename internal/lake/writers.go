package lake

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/apache/iceberg-go/catalog"

	"github.com/lakemirror/lakemirror/internal/merge"
)

// WriterOptions configure NewWriters.
type WriterOptions struct {
	// StateDir is the directory of the tables' local state logs (see
	// State); "" = the system temp directory.
	StateDir string
	// History: the table keeps an SCD type 2 history table, written with
	// HistoryOptions.
	History        bool
	HistoryOptions merge.HistoryOptions
	// OnBuild, when set, is called after each build of the writers' local
	// state from the tables, with its reason (BuildNew, BuildSnapshotMoved,
	// BuildInvalidated, BuildStaleSidecar); it runs on the writer's
	// goroutine and must not block.
	OnBuild func(reason string)
	// Sidecar: a worker without the state first loads it from the table's
	// sidecar (State.WriteSidecar) when that is for the tables' current
	// snapshots, instead of reading the tables; OnLoad is told of each
	// load.
	Sidecar bool
	OnLoad  func()
}

// NewWriters returns the writers of one source table sharing one local
// State: the mirror writer, and the history writer (nil without
// o.History). The history writer, when there is one, records each batch's
// row changes in the log; otherwise the mirror writer does.
func NewWriters(cat catalog.Catalog, name TableName, keyCols []string, o WriterOptions) (*MirrorWriter, *HistoryWriter) {
	st := newState(cat, name, keyCols, o.StateDir, true, o.History)
	st.onBuild = o.OnBuild
	st.sidecar, st.onLoad = o.Sidecar, o.OnLoad
	m := NewMirrorWriter(cat, name, keyCols)
	m.state = st
	if !o.History {
		return m, nil
	}
	h := NewHistoryWriter(cat, name, keyCols, o.HistoryOptions)
	h.state = st
	return m, h
}

// OpenStateDir creates this process's directory for local state logs
// under base ("" = the system temp directory): base/worker-<pid>-<random>.
// Directories of processes that no longer run (a worker killed before it
// could clean up) are removed. cleanup removes the directory.
func OpenStateDir(base string) (dir string, cleanup func(), err error) {
	if base == "" {
		base = filepath.Join(os.TempDir(), "lakemirror-state")
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", nil, fmt.Errorf("lake: local state directory %s: %w", base, err)
	}
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "worker-")
		if !ok {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			os.RemoveAll(filepath.Join(base, e.Name()))
		}
	}
	dir, err = os.MkdirTemp(base, fmt.Sprintf("worker-%d-", os.Getpid()))
	if err != nil {
		return "", nil, fmt.Errorf("lake: local state directory: %w", err)
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}
