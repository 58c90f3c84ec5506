package activities

import (
	"github.com/lakemirror/lakemirror/internal/telemetry"
)

// StateUsage is a table's local state on the worker holding it
// (docs/design.md, "Local state"), in bytes, as of the table's last
// batch: its key index in RAM and on local disk (an index past its budget
// spills to disk, keeping the batch's entries in RAM), its chain log on
// local disk, and the worker's budget for the indexes (0: unbounded).
type StateUsage struct {
	IndexKeys           int64 `json:"index_keys"`             // keys the index holds
	IndexSpilled        bool  `json:"index_spilled"`          // the index lives on local disk
	IndexRAMBytes       int64 `json:"index_ram_bytes"`        // the index's RAM: hash table and entries, and a spilled index's memtables
	IndexDiskBytes      int64 `json:"index_disk_bytes"`       // the spilled index's store on local disk
	LogBytes            int64 `json:"log_bytes"`              // the chain log on local disk
	WorkerIndexRAMBytes int64 `json:"worker_index_ram_bytes"` // RAM of every table's index on this worker
	WorkerBudgetBytes   int64 `json:"worker_budget_bytes"`    // RAM the worker's indexes may hold together (--index-memory)
	TableBudgetBytes    int64 `json:"table_budget_bytes"`     // RAM one table's index may hold (--index-table-memory)
	CacheBytes          int64 `json:"cache_bytes"`            // the spilled indexes' shared block cache, within the worker's budget
}

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
