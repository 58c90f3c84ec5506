package activities

import (
	"github.com/lakemirror/lakemirror/internal/telemetry"
)

// stateUsage is the table's local state usage on this worker; nil when
// the worker has no state for it.
func (a *Activities) stateUsage(table string) *StateUsage {
	a.mu.Lock()
	st := a.tables[table]
	a.mu.Unlock()
	if st == nil {
		return nil
	}
	s := st.local.Load()
	if s == nil {
		return nil
	}
	ix, logBytes := s.Memory()
	u := &StateUsage{IndexKeys: ix.Keys, IndexSpilled: ix.Spilled, IndexRAMBytes: ix.RAMBytes, IndexDiskBytes: ix.DiskBytes, LogBytes: logBytes}
	if b := a.IndexBudget; b != nil {
		u.WorkerIndexRAMBytes, u.WorkerBudgetBytes, u.TableBudgetBytes, u.CacheBytes = b.InRAM(), b.Worker(), b.Table(), b.CacheBytes()
	}
	return u
}

// StateSamples is every table's local state usage on worker a and its
// index budget, for the metrics (computed at scrape). (A function, not a
// method: every exported method of Activities is an activity.)
func StateSamples(a *Activities) telemetry.StateSnapshot {
	a.mu.Lock()
	var tables []string
	for t, st := range a.tables {
		if st.local.Load() != nil {
			tables = append(tables, t)
		}
	}
	a.mu.Unlock()
	var out telemetry.StateSnapshot
	for _, t := range tables {
		if u := a.stateUsage(t); u != nil {
			out.Tables = append(out.Tables, telemetry.StateSample{Table: t, IndexRAMBytes: u.IndexRAMBytes, IndexDiskBytes: u.IndexDiskBytes, LogBytes: u.LogBytes})
		}
	}
	if b := a.IndexBudget; b != nil {
		out.WorkerBudgetBytes, out.TableBudgetBytes = b.Worker(), b.Table()
	}
	return out
}
