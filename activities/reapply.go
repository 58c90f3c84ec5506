package activities

import (
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"

	"go.temporal.io/sdk/activity"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/validate"
)

// ReapplyBatches is how many of the mirror's newest batch commits the
// reapply check applies again (README, "Validation"); a variable for
// tests.
var ReapplyBatches = 5

// reapply runs the reapply check (docs/design.md, "Validation"): it
// finds the mirror's newest run of batch commits (lake.PlanReapply),
// seeds a scratch table with the mirror's rows before them, applies the
// batches' bronze records to it through a mirror writer of its own
// (decoded and prepared as a batch is: schema changes an operator
// skipped stay skipped, truncates expanded), compares it with the mirror
// after them (validate.Reapply, purged keys left out) and drops the
// scratch table. It returns the result, or "" and the reason the check
// was skipped (no run of batch commits). Errors: catalog, storage and
// decoding failures; the scratch table is dropped on every return.
func (a *Activities) reapply(ctx context.Context, spec TableSpec, name lake.TableName, runID string, purges validate.Purges) (validate.Result, string, error) {
	mirror, err := lake.LoadTable(ctx, a.Catalog, name.Mirror())
	if err != nil || mirror == nil {
		return validate.Result{}, "no mirror table", err
	}
	keyCols, err := lake.KeyColumnsOf(mirror)
	if err != nil {
		return validate.Result{}, "", err
	}
	plan, why, err := lake.PlanReapply(mirror, spec.Topic, ReapplyBatches)
	if err != nil || plan == nil {
		return validate.Result{}, why, err
	}
	scratch := name.Scratch(runID)
	defer func() {
		if err := lake.DropScratch(context.WithoutCancel(ctx), a.Catalog, scratch); err != nil && activity.IsActivity(ctx) {
			activity.GetLogger(ctx).Warn("scratch table not dropped", "table", scratch.String(), "error", err)
		}
	}()
	if err := lake.SeedScratch(ctx, a.Catalog, name, scratch, plan.Base); err != nil {
		return validate.Result{}, "", err
	}
	w, _ := lake.NewWriters(a.Catalog, scratch, keyCols, lake.WriterOptions{StateDir: a.StateDir})
	defer w.State().Close()
	decoders := newDecoderPool(a.decoderOptions(spec))
	scope := validate.ReapplyScope{Base: plan.Base, Target: plan.Target, Batches: len(plan.Batches),
		FromBatch: plan.Batches[0].Batch.Seq, ToBatch: plan.Batches[len(plan.Batches)-1].Batch.Seq,
		Table: name.String(), ScratchTable: scratch.String()}
	for _, rb := range plan.Batches {
		var rows []lake.BronzeRow
		err := lake.ReadBronzeRange(ctx, a.Catalog, name, spec.Topic, rb.Batch.Ranges, func(rs []lake.BronzeRow) error {
			rows = append(rows, rs...)
			return nil
		})
		if err != nil {
			return validate.Result{}, "", err
		}
		// in the order the batch read them: by partition, then offset
		slices.SortFunc(rows, func(x, y lake.BronzeRow) int {
			return cmp.Or(cmp.Compare(x.Partition, y.Partition), cmp.Compare(x.Offset, y.Offset))
		})
		scope.Records += len(rows)
		d := decoders.get()
		events, err := decodeBronzeKinds(d, rows, true)
		decoders.put(d)
		if err != nil {
			return validate.Result{}, "", fmt.Errorf("reapply batch %d: %w", rb.Batch.Seq, err)
		}
		prep, err := w.Prepare(ctx, events, lake.WithSchemaDecision(lake.DecisionSkip))
		if err != nil {
			return validate.Result{}, "", fmt.Errorf("reapply batch %d: %w", rb.Batch.Seq, err)
		}
		if events, err = w.ExpandTruncates(ctx, prep.Events); err != nil {
			return validate.Result{}, "", fmt.Errorf("reapply batch %d: %w", rb.Batch.Seq, err)
		}
		b := rb.Batch
		b.ID = scratch.String() + "#" + strconv.FormatInt(b.Seq, 10)
		if _, _, err := w.Apply(ctx, b, events); err != nil {
			return validate.Result{}, "", fmt.Errorf("reapply batch %d: %w", rb.Batch.Seq, err)
		}
	}
	want, mirrorDups, err := lake.ReadImages(ctx, a.Catalog, name.Mirror(), plan.Target, keyCols)
	if err != nil {
		return validate.Result{}, "", err
	}
	got, scratchDups, err := lake.ReadImages(ctx, a.Catalog, scratch.Mirror(), 0, keyCols)
	if err != nil {
		return validate.Result{}, "", err
	}
	dups := map[string]string{}
	for _, k := range mirrorDups {
		dups[k] = "mirror"
	}
	for _, k := range scratchDups {
		if dups[k] != "" {
			dups[k] = "mirror and re-applied"
		} else {
			dups[k] = "re-applied"
		}
	}
	skip, late, err := a.reapplySkips(ctx, scratch, want, got, purges)
	if err != nil {
		return validate.Result{}, "", err
	}
	scope.Skipped, scope.Late = len(skip)-late, late
	return validate.Reapply(scope, want, got, dups, skip), "", nil
}

// reapplySkips returns the keys the comparison leaves out, and how many
// of them are late keys:
//   - a late key of the re-apply (the scratch table's pending-rebuild
//     set): a change that arrived after a newer one whose row took values
//     from the stored row (a delete without a before image, a TOAST
//     placeholder) needs the key's past changes, which the pipeline's
//     local state holds and weaves in at once, but the scratch writer,
//     built from the seeded table, lacks;
//   - a key the mirror holds no row of because a purge removed it (its
//     purged `_seq`, or the legacy horizon, at or above the re-applied
//     row): the scratch table has no purged-keys table, so a late change
//     the mirror refused is applied there.
//
// Errors: catalog failures, a malformed pending-rebuild set.
func (a *Activities) reapplySkips(ctx context.Context, scratch lake.TableName, want, got map[string]validate.Image, purges validate.Purges) (map[string]bool, int, error) {
	skip := map[string]bool{}
	tbl, err := lake.LoadTable(ctx, a.Catalog, scratch.Mirror())
	if err != nil {
		return nil, 0, err
	}
	if tbl != nil {
		pending, err := lake.PendingKeys(tbl)
		if err != nil {
			return nil, 0, err
		}
		for _, k := range pending {
			skip[hex.EncodeToString([]byte(k))] = true
		}
	}
	late := len(skip)
	for k, g := range got {
		if _, ok := want[k]; ok || skip[k] {
			continue
		}
		if p, ok := purges.Keys[k]; (ok && g.Seq <= p) || (purges.Horizon != "" && g.Seq <= purges.Horizon) {
			skip[k] = true
		}
	}
	return skip, late, nil
}
