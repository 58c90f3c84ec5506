package lake

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/apache/iceberg-go/catalog"

	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/scd2"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/merge"
)

// WriterOptions configure NewWriters.
type WriterOptions struct {
	// StateDir is the directory of the tables' local state logs (see
	// State), and of their key indexes when they spill to disk; "" = the
	// system temp directory.
	StateDir string
	// IndexBudget bounds the memory of the state's key index: past it the
	// index spills to local disk under StateDir (keyindex.Budget, shared
	// by the worker's tables); nil = all in RAM, unbounded.
	IndexBudget *keyindex.Budget
	// History: the table keeps an SCD type 2 history table, written with
	// HistoryOptions.
	History        bool
	HistoryOptions merge.HistoryOptions
	// OnBuild, when set, is called after each build of the writers' local
	// state from the tables, with its reason (BuildNew, BuildSnapshotMoved,
	// BuildInvalidated, BuildStaleSidecar); it runs on the goroutine that
	// builds (State.buildDetached; the writer's call waits for it, unless
	// its context ended first) and must not block.
	OnBuild func(reason string)
	// Sidecar: a worker without the state first loads it from the table's
	// sidecar (State.WriteSidecar) when that is for the tables' current
	// snapshots, instead of reading the tables; OnLoad is told of each
	// load.
	Sidecar bool
	OnLoad  func()
	// WithoutBronze: the table keeps no bronze table, so a key's past
	// changes exist only in the local state log while it holds them
	// (State.EventsComplete); a history key that needs them when it does
	// not is extended by the batch's changes instead of waiting for a
	// rebuild that cannot run.
	WithoutBronze bool
	// AfterCommit, when set, runs after each of a batch's table commits
	// in TableWriter.Write, with the table ("bronze", "mirror",
	// "history"); an error fails the batch after that commit (crash
	// tests use it).
	AfterCommit func(ctx context.Context, b Batch, table string) error
	// Layout is the tables' partition fields and sort orders (zero:
	// unpartitioned, unsorted mirror and history; bronze by ingestion day).
	Layout layout.Tables
	// DeleteFormat is how the mirror and history remove replaced rows:
	// v2 position deletes (zero, layout.DeletePosition) or v3 deletion
	// vectors (layout.DeleteVector). A new mirror or history is created
	// with its format version (2 or 3); an existing one with the other
	// stops the table (*DeleteFormatError).
	DeleteFormat layout.DeleteFormat
}

// NewWriters returns the writers of one source table sharing one local
// State: the mirror writer, and the history writer (nil without
// o.History). The history writer, when there is one, records each batch's
// row changes in the log; otherwise the mirror writer does.
func NewWriters(cat catalog.Catalog, name lakecat.TableName, keyCols []string, o WriterOptions) (*MirrorWriter, *scd2.HistoryWriter) {
	st := tablestate.NewState(cat, name, keyCols, o.StateDir, true, o.History)
	st.OnBuild = o.OnBuild
	st.Budget = o.IndexBudget
	st.Sidecar, st.OnLoad = o.Sidecar, o.OnLoad
	m := NewMirrorWriter(cat, name, keyCols)
	m.state, m.layout, m.deletes, m.withoutBronze = st, o.Layout.Mirror, o.DeleteFormat.Or(), o.WithoutBronze
	if !o.History {
		return m, nil
	}
	h := scd2.NewHistoryWriterOn(cat, name, keyCols, st, scd2.HistoryOptions{History: o.HistoryOptions, WithoutBronze: o.WithoutBronze,
		Layout: o.Layout.History, DeleteFormat: o.DeleteFormat.Or()})
	return m, h
}

// OpenStateDir creates this process's directory for local state logs
// under base ("" = the system temp directory):
// base/worker-<pid>@<host>-<random>, host being the machine's (or
// container's) host name. Directories of processes of this host that no
// longer run (a worker killed before it could clean up) are removed;
// those of other hosts are left alone, since a pid says nothing about
// another container sharing the volume. A directory of the older form
// worker-<pid>-<random> (no host) is removed when its pid does not run
// here. cleanup removes the directory.
func OpenStateDir(base string) (dir string, cleanup func(), err error) {
	if base == "" {
		base = filepath.Join(os.TempDir(), "lakemirror-state")
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", nil, fmt.Errorf("lake: local state directory %s: %w", base, err)
	}
	host := stateDirHost()
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		pid, owner, ok := parseStateDir(e.Name())
		if !ok || pid == os.Getpid() || (owner != "" && owner != host) {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			os.RemoveAll(filepath.Join(base, e.Name()))
		}
	}
	dir, err = os.MkdirTemp(base, fmt.Sprintf("worker-%d@%s-", os.Getpid(), host))
	if err != nil {
		return "", nil, fmt.Errorf("lake: local state directory: %w", err)
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// stateDirHost is the host name as it goes into a state directory's name
// (path separators and '@' replaced; "unknown" when there is none).
func stateDirHost() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return strings.NewReplacer("/", "_", "@", "_").Replace(h)
}

// parseStateDir reads a state directory's name: worker-<pid>@<host>-<random>
// (host may contain '-': the random suffix follows the last one), or the
// older worker-<pid>-<random> (host ""). ok is false for other names.
func parseStateDir(name string) (pid int, host string, ok bool) {
	rest, found := strings.CutPrefix(name, "worker-")
	if !found {
		return 0, "", false
	}
	pidText, after, withHost := strings.Cut(rest, "@")
	if withHost {
		i := strings.LastIndexByte(after, '-')
		if i <= 0 {
			return 0, "", false
		}
		host = after[:i]
	} else {
		pidText, _, _ = strings.Cut(rest, "-")
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil {
		return 0, "", false
	}
	return pid, host, true
}
