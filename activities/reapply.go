package activities

import (
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
	"github.com/lakemirror/lakemirror/internal/validate"
)

// ReapplyBatches is how many of the mirror's newest batch commits the
// reapply check applies again (docs/validation.md); a variable for
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
func (a *Activities) reapply(ctx context.Context, spec TableSpec, name lake.TableName, runID string, purges validate.Purges, mirrorPending map[string]bool) (validate.Result, string, error) {
	mirror, err := lake.LoadTable(ctx, a.Catalog, name.Mirror())
	if err != nil || mirror == nil {
		return validate.Result{}, "no mirror table", err
	}
	keyCols, err := lakecat.KeyColumnsOf(mirror)
	if err != nil {
		return validate.Result{}, "", err
	}
	plan, why, err := lake.PlanReapply(mirror, spec.Topic, ReapplyBatches)
	if err != nil || plan == nil {
		return validate.Result{}, why, err
	}
	attempt := 1
	if activity.IsActivity(ctx) {
		attempt = int(activity.GetInfo(ctx).Attempt)
		for n := 1; n < attempt; n++ { // what earlier attempts of this run left
			if err := lake.DropScratch(ctx, a.Catalog, name.Scratch(runID, n)); err != nil {
				return validate.Result{}, "", err
			}
		}
	}
	// what runs that died or were abandoned left (older than the
	// activity's time limit: none of them still runs)
	if _, err := lake.DropStaleScratch(ctx, a.Catalog, name, 2*time.Hour, time.Now()); err != nil {
		return validate.Result{}, "", err
	}
	scratch := name.Scratch(runID, attempt)
	defer func() {
		if err := lake.DropScratch(context.WithoutCancel(ctx), a.Catalog, scratch); err != nil && activity.IsActivity(ctx) {
			activity.GetLogger(ctx).Warn("scratch table not dropped", "table", scratch.String(), "error", err)
		}
	}()
	if err := lake.SeedScratch(ctx, a.Catalog, name, scratch, plan.Base); err != nil {
		return validate.Result{}, "", err
	}
	tw := lake.NewTableWriter(a.Catalog, scratch, keyCols, lake.WriterOptions{StateDir: a.StateDir, WithoutBronze: true})
	defer tw.Mirror.State().Close()
	opts := a.decoderOptions(spec)
	opts.TableColumns = tableTypes(spec, mirror) // as the table's batches decoded
	opts.BitsLeastSignificantFirst = lake.BitsLeastSignificantFirst(mirror)
	decoders := newDecoderPool(opts)
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
		events, err := decoders.decodeBronze(rows, true)
		if err != nil {
			return validate.Result{}, "", fmt.Errorf("reapply batch %d: %w", rb.Batch.Seq, err)
		}
		b := rb.Batch
		b.ID = scratch.String() + "#" + strconv.FormatInt(b.Seq, 10)
		if _, err := tw.Write(ctx, lake.WriteInput{Batch: b, Events: events, SchemaDecision: lake.DecisionSkip, NoQuarantine: true}); err != nil {
			return validate.Result{}, "", fmt.Errorf("reapply batch %d: %w", rb.Batch.Seq, err)
		}
	}
	if err := a.rebuildScratchLate(ctx, spec, name, scratch, tw, decoders, plan, mirrorPending); err != nil {
		return validate.Result{}, "", err
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
	skip := reapplySkips(want, got, purges)
	scope.Skipped = len(skip)
	return validate.Reapply(scope, want, got, dups, skip), "", nil
}

// rebuildScratchLate rebuilds the scratch table's late keys as the
// pipeline does: a change that arrived after a newer one whose row took
// values from the stored row (a delete without a before image, a TOAST
// placeholder) needs the key's past changes. The pipeline's local state
// holds them and weaves the key in at once, or (a state built from the
// tables) marks it pending for RebuildKeys; the scratch writer, built
// from the seeded table, only marks it pending. So every key pending in
// the scratch table and not in the mirror (mirrorPending, hex) is rebuilt
// from all its bronze records up to the range's end (the topic's below
// the last batch's end offsets, and every direct load's and repair's),
// prepared like past changes (preparePast), by MirrorWriter.Rebuild, the fold
// RebuildKeys runs; keys pending in both stay as the guard left them on
// both sides. Errors: catalog, storage and decoding failures.
func (a *Activities) rebuildScratchLate(ctx context.Context, spec TableSpec, name, scratch lake.TableName, tw *lake.TableWriter,
	decoders *decoderPool, plan *lake.ReapplyPlan, mirrorPending map[string]bool) error {
	tbl, err := lake.LoadTable(ctx, a.Catalog, scratch.Mirror())
	if err != nil || tbl == nil {
		return err
	}
	pending, err := lakecat.PendingKeys(tbl)
	if err != nil {
		return err
	}
	var keys []cdc.Key
	for _, k := range pending {
		if !mirrorPending[hex.EncodeToString([]byte(k))] {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	rows, err := tableread.ReadBronzeKeys(ctx, a.Catalog, name, keys)
	if err != nil {
		return err
	}
	end := plan.Batches[len(plan.Batches)-1].Batch.EndOffsets
	kept := rows[:0]
	for _, r := range rows {
		if r.Topic == spec.Topic && r.Offset < end[r.Partition] || strings.HasPrefix(r.Topic, spec.Topic+"#") {
			kept = append(kept, r)
		}
	}
	events, err := decoders.decodeBronze(kept, false)
	if err != nil {
		return fmt.Errorf("reapply: late keys: %w", err)
	}
	byKey, err := preparePast(ctx, tw.Mirror, events)
	if err != nil {
		return fmt.Errorf("reapply: late keys: %w", err)
	}
	if _, _, err := tw.Rebuild(ctx, byKey); err != nil {
		return fmt.Errorf("reapply: late keys: %w", err)
	}
	return nil
}

// reapplySkips returns the keys the comparison leaves out: keys the
// mirror holds no row of because a purge removed them (the re-applied
// row at or below the key's purged `_seq`, or the legacy horizon): the
// scratch table has no purged-keys table, so a late change the mirror
// refused is applied there.
func reapplySkips(want, got map[string]validate.Image, purges validate.Purges) map[string]bool {
	skip := map[string]bool{}
	for k, g := range got {
		if _, ok := want[k]; ok {
			continue
		}
		if p, ok := purges.Keys[k]; (ok && g.Seq <= p) || (purges.Horizon != "" && g.Seq <= purges.Horizon) {
			skip[k] = true
		}
	}
	return skip
}
