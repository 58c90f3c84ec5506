package activities

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ReleaseIdleStates frees the local state (tablestate.State: key index, chain
// log file, the writers' caches) of every table on worker a whose writer
// was last used after or more before now (its last batch ended then, or
// a job last took the writer), so that an idle table costs the worker
// little memory and no open file. The table stays held by this worker
// (routing is unchanged); its next batch or job makes a new writer whose
// state is loaded like a restarted worker's: from the table's sidecar
// when it is for the tables' current Iceberg snapshots, else built from
// the tables (lakemirror_state_rebuilds_total reason "new"). With
// sidecars on (SidecarEvery > 0) the sidecar is written first, so that
// the next batch loads instead of reading the tables; a sidecar that
// cannot be written is reported in err and the state is released anyway
// (the tables are the truth, the state a cache of them), except for a
// table without bronze, which keeps it (releaseState). A table whose
// batch or job is running (its lock is held) is left for a later call;
// so is every table when after is 0 or less (release off). It returns
// how many tables' states it released. (A function, not a method: every
// exported method of Activities is an activity.)
func ReleaseIdleStates(ctx context.Context, a *Activities, after time.Duration, now time.Time) (released int, err error) {
	if after <= 0 {
		return 0, nil
	}
	var errs []error
	for _, st := range a.tableStates() {
		if ctx.Err() != nil {
			break
		}
		if !st.mu.TryLock() { // a batch or job in flight: not idle
			continue
		}
		if st.writer != nil && now.Sub(st.used) >= after {
			ok, err := a.releaseState(ctx, st)
			if err != nil {
				errs = append(errs, fmt.Errorf("table %s: %w", st.spec.Table, err))
			}
			if ok {
				released++
			}
		}
		st.mu.Unlock()
	}
	return released, errors.Join(errs...)
}

// releaseState writes st's sidecar (with sidecars on), then closes its
// local state (the log file is removed, the index emptied and no longer
// counted in the worker's budget) and drops the writers and the prefetch
// slot; st's decoders and settled key columns stay. The caller holds
// st.mu. A table without bronze keeps its state unless its sidecar was
// written: its chain log is the only record of its past changes, which
// a late change is woven into (a state built from the tables cannot,
// and counts such keys as unwoven). It reports whether it released the
// state, and the sidecar's error.
func (a *Activities) releaseState(ctx context.Context, st *tableState) (bool, error) {
	var err error
	if a.SidecarEvery > 0 {
		err = st.mirror.State().WriteSidecar(ctx)
	}
	if st.spec.WithoutBronze && (a.SidecarEvery <= 0 || err != nil) {
		return false, err
	}
	if p := st.prefetch.swap(nil); p != nil {
		p.cancel()
	}
	st.mirror.State().Close()
	st.writer, st.mirror, st.history = nil, nil, nil
	st.local.Store(nil)
	st.sinceSidecar = 0
	a.stateReleases.Add(1)
	if a.Metrics != nil {
		a.Metrics.StateReleased(st.spec.Table)
	}
	return true, err
}

// StateReleases is how many times worker a released an idle table's
// local state (ReleaseIdleStates) since it started. (A function, not a
// method: every exported method of Activities is an activity.)
func StateReleases(a *Activities) int64 { return a.stateReleases.Load() }
