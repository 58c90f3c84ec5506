package activities

import (
	"context"
	"fmt"
)

// Maintenance jobs run outside a table's workflow but on the worker that
// holds the table's local state (docs/design.md, "Routing"): a purge locks
// the table's state against its batches and uses its key index, which a
// worker that does not hold the table would have to build from the mirror
// first, and a compaction serialized with the batches in the worker that
// applies them does not lose its commit race to them. The job's workflow
// asks TableOwner for the table's worker and schedules the job on that
// worker's queue.

// OwnerLookup returns the own task queue of the worker holding table's
// state (the running table workflow's claimed owner, workflows.Status.Owner),
// or "" when no table workflow of that name runs or it holds no claim;
// Activities.Owners. Errors: Temporal's (the job then runs on the shared
// queue).
type OwnerLookup func(ctx context.Context, table string) (queue string, err error)

// TableOwner returns the own task queue of the worker holding the state
// of table (mirror ns.table), "" when none does or when this worker has
// no OwnerLookup (routing off). Errors: the lookup's, retryable.
func (a *Activities) TableOwner(ctx context.Context, table string) (string, error) {
	if a.Owners == nil {
		return "", nil
	}
	q, err := a.Owners(ctx, table)
	if err != nil {
		return "", fmt.Errorf("owner of table %s: %w", table, err)
	}
	return q, nil
}
