package activities

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/compact"
	"github.com/lakemirror/lakemirror/internal/lake/maintain"
	"github.com/lakemirror/lakemirror/internal/retention"
)

// Maintain runs one maintenance job on a table's Iceberg tables (a purge
// with DryRun only counts, lake.MirrorWriter.PurgeDryRun). Purge
// goes through the worker's mirror writer and compaction runs between the
// table's batches (both serialized with them in this worker, so they make
// progress under continuous load); every commit is checked by Iceberg for
// conflicts, so a batch committed by another worker meanwhile makes one
// side fail and retry, never lose data. Errors: a purge window below its floor
// (non-retryable InvalidTableSpec), catalog, storage and commit conflicts
// (retried).
func (a *Activities) Maintain(ctx context.Context, req MaintenanceRequest) (MaintenanceResult, error) {
	spec := req.Spec.Defaults()
	res := MaintenanceResult{Job: req.Job}
	if err := a.checkCatalog(spec); err != nil {
		return res, err
	}
	st, name, done, err := a.jobState(spec)
	defer done()
	if err != nil {
		return res, badSpec(err)
	}
	stop := keepAlive(ctx, 5*time.Second, func() any { return req.Job })
	defer stop()
	idents := map[string][]string{"mirror": name.Mirror(), "history": name.History(), "bronze": name.Bronze()}
	tables := map[string][]string{} // the tables the spec keeps
	for _, kind := range spec.Tables() {
		tables[kind] = idents[kind]
	}
	switch req.Job {
	case JobPurge:
		st.mu.Lock()
		defer st.mu.Unlock()
		if err := st.settleKeys(ctx, a, name); err != nil {
			return res, err
		}
		mirror, _ := st.writers(a, name)
		retention := req.Retention
		if retention <= 0 {
			retention = 30 * 24 * time.Hour
		}
		purge := mirror.Purge
		if req.DryRun {
			purge = mirror.PurgeDryRun
		}
		p, err := purge(ctx, retention, req.RetentionFloor)
		var re *lake.RetentionError
		if errors.As(err, &re) {
			return res, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadSpec, err)
		}
		if err != nil {
			return res, err
		}
		res.Purge = &p
	case JobCompact:
		// serialized with the table's batches in this worker: a batch commits
		// position deletes against most data files, so a rewrite racing the
		// batches would lose the commit race every time
		st.mu.Lock()
		defer st.mu.Unlock()
		res.Compact = map[string]lake.CompactResult{}
		for kind, ident := range tables {
			c, err := compact.Compact(ctx, a.Catalog, ident, compact.Options{TargetFileBytes: req.TargetFileSize})
			if err != nil {
				return res, err
			}
			res.Compact[kind] = c
		}
	case JobExpire:
		if req.BronzeRetention != 0 {
			if err := retention.Check(req.BronzeRetention); err != nil {
				return res, badSpec(err)
			}
			// serialized with the batches: each commits to bronze
			st.mu.Lock()
			trim, err := maintain.TrimBronze(ctx, a.Catalog, name, req.BronzeRetention, time.Now())
			st.mu.Unlock()
			if err != nil {
				return res, err
			}
			res.Trim = trim
		}
		res.Expire = map[string]lake.ExpireResult{}
		for kind, ident := range tables {
			e, err := maintain.Expire(ctx, a.Catalog, ident, maintain.ExpireOptions{RetainLast: req.RetainLast, OlderThan: req.OlderThan, CleanOrphans: req.CleanOrphans})
			if err != nil {
				return res, err
			}
			res.Expire[kind] = e
		}
	case JobKeepApplied:
		st.mu.Lock()
		defer st.mu.Unlock()
		if err := st.settleKeys(ctx, a, name); err != nil {
			return res, err
		}
		w := st.tableWriter(a, name)
		keys, err := w.Pending(ctx)
		if err != nil || len(keys) == 0 {
			return res, classify(err)
		}
		byKey, err := a.pastEvents(ctx, st, name, keys)
		if err != nil {
			return res, classify(err)
		}
		kept, err := w.KeepApplied(ctx, byKey)
		if err != nil {
			return res, classify(err)
		}
		res.KeptAppliedKeys = len(kept)
		for _, k := range kept[:min(len(kept), 20)] {
			res.KeptApplied = append(res.KeptApplied, hex.EncodeToString([]byte(k.Key)))
		}
		if a.Metrics != nil && len(kept) > 0 {
			a.Metrics.Unwoven(spec.Table, len(kept))
		}
	default:
		return res, badSpec(fmt.Errorf("unknown maintenance job %q (want %s, %s, %s or %s)", req.Job, JobPurge, JobCompact, JobExpire, JobKeepApplied))
	}
	return res, nil
}
