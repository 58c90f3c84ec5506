package activities

import (
	"context"
	"errors"
	"fmt"
)

// WriteSidecars writes the state sidecar (tablestate.State.WriteSidecar) of
// every table this worker holds, one table at a time, each after its
// in-flight batch: for a worker that stops gracefully, so that the worker
// that takes its tables next loads their local state instead of reading
// the tables (docs/design.md, "State sidecar"). A table without a settled
// state (none built, or a batch not recorded) is skipped with its error.
// Nothing is written when sidecars are off (SidecarEvery 0). It returns
// the number written and the other tables' errors, joined; ctx bounds
// the whole (tables not reached report ctx's error). (A function, not a
// method: every exported method of Activities is an activity.)
func WriteSidecars(ctx context.Context, a *Activities) (written int, err error) {
	if a.SidecarEvery <= 0 {
		return 0, nil
	}
	var errs []error
	for _, st := range a.tableStates() {
		if a.WorkerQueue != "" && !a.owner.holds(st.spec.Table) {
			continue // released: its new worker has the state
		}
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("table %s: %w", st.spec.Table, err))
			continue
		}
		st.mu.Lock() // after the table's in-flight batch
		if st.mirror != nil {
			if err := st.mirror.State().WriteSidecar(ctx); err != nil {
				errs = append(errs, fmt.Errorf("table %s: %w", st.spec.Table, err))
			} else {
				written++
				st.sinceSidecar = 0
			}
		}
		st.mu.Unlock()
	}
	return written, errors.Join(errs...)
}
