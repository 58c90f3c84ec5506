package activities

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/source"
	"github.com/lakemirror/lakemirror/internal/validate"
	"github.com/lakemirror/lakemirror/schemas"
)

// CheckRepair is the name of the validation row a repairing run adds:
// what it repaired (verdict pass).
const CheckRepair = "reconcile-repair"

// repair writes the confirmed differences back from the source: each
// missing or changed key's row as the source returned it at the
// re-read's position, as a snapshot read (op r), and each ghost row as a
// delete (op d, before image the mirror's values), all at that position
// (source.Renderer.RepairValue), applied as one load batch of the topic
// "<topic>#reconcile-<run id>" through the normal path: bronze, the
// sequence-guarded mirror merge, history. A streamed change above the
// position wins over the repair; one at or below it loses, as it would
// to a re-snapshot. The batch is a load (lake.Batch.Load) with the id
// "reconcile-<run id>": a retried attempt finds it committed and writes
// nothing again. It returns the keys repaired by kind and the position.
func (r *reconciler) repair(ctx context.Context, out recheckOut) (map[string]int, string, error) {
	a, spec := r.a, r.spec
	st, name, done, err := a.jobState(spec)
	defer done()
	if err != nil {
		return nil, "", badSpec(err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	id := "reconcile-" + strings.NewReplacer("/", "_", "#", "_").Replace(r.req.RunID)
	repaired := map[string]int{}
	for _, d := range out.diffs {
		repaired[d.Kind]++
	}
	if cur, err := a.loadCursor(ctx, name, spec, id); err != nil {
		return nil, "", err
	} else if cur != nil && cur.Done {
		return repaired, out.pos.Text, nil // committed by an earlier attempt
	}
	serverName, _, _ := strings.Cut(spec.Topic, ".")
	renderer, err := source.NewRenderer(r.info, serverName)
	if err != nil {
		return nil, "", badSpec(err)
	}
	topic := spec.Topic + "#" + id
	now := time.Now().UnixMicro()
	var recs []schemas.Record
	for _, d := range out.diffs {
		row, op := out.srcRows[d.Key], "r"
		if d.Kind == validate.KindGhost {
			row, op = r.sourceShaped(out.mirRows[d.Key]), "d"
		}
		if row == nil {
			return nil, "", fmt.Errorf("reconcile: repair of key %s: no row", d.Key)
		}
		v, err := renderer.RepairValue(row, out.pos, op, now)
		if err != nil {
			return nil, "", badSpec(fmt.Errorf("reconcile: repair of key %s: %w", d.Key, err))
		}
		k, err := renderer.Key(row)
		if err != nil {
			return nil, "", badSpec(err)
		}
		recs = append(recs, schemas.Record{Topic: topic, Offset: int64(len(recs)), Key: k, Value: v, Timestamp: now})
	}
	var position lake.Offsets
	if tbl, err := lake.LoadTable(ctx, a.Catalog, name.Mirror()); err != nil {
		return nil, "", err
	} else if tbl != nil {
		cp, err := lake.ReadCheckpoint(tbl)
		if err != nil {
			return nil, "", err
		}
		position = cp.EndOffsets
	}
	// The repair is a re-snapshot of its keys: it keeps the table's
	// recorded re-snapshot reads and adds its own (PostgreSQL), so a change
	// of a transaction its read did not see, streamed later below (P, 0),
	// is lifted above the repaired row instead of losing to it.
	snaps, err := a.tableSnapshots(ctx, name)
	if err != nil {
		return nil, "", err
	}
	for _, s := range out.snaps {
		snaps = lake.WithSnapshot(snaps, s)
	}
	b := lake.Batch{ID: spec.Table + "#" + id, Topic: topic, Ranges: []lake.Range{{From: 0, To: int64(len(recs))}},
		EndOffsets: position, Load: &lake.LoadCursor{ID: id, LSN: out.pos.LSN, Read: int64(len(recs)), Done: true, Snapshots: snaps}}
	stage := ""
	ares, _, err := a.applyRecords(ctx, st, name, spec, b, recs, nil, "", &stage)
	if err != nil {
		return nil, "", err
	}
	if ares.History.Pending > 0 {
		if _, err := a.rebuildPending(ctx, st, name); err != nil {
			return nil, "", err
		}
	}
	return repaired, out.pos.Text, nil
}

// sourceShaped is a mirror row with the source's columns (NULL where the
// mirror has none).
func (r *reconciler) sourceShaped(m *cdc.Row) *cdc.Row {
	if m == nil {
		return nil
	}
	names := make([]string, len(r.info.Columns))
	vals := make([]cdc.Value, len(r.info.Columns))
	for i, c := range r.info.Columns {
		names[i] = c.Name
		if v, ok := m.Get(c.Name); ok {
			vals[i] = v
		} else {
			vals[i] = cdc.Null()
		}
	}
	return &cdc.Row{Cols: cdc.NewColumns(names), Vals: vals}
}

// repairResult is the validation row of a repair: the keys by kind.
func repairResult(scope validate.ReconcileScope, out recheckOut, repaired map[string]int, at string) validate.Result {
	res := validate.Result{Check: CheckRepair, Scope: scope.String(), Verdict: validate.Pass,
		Expected: "every confirmed difference written from the source",
		Observed: fmt.Sprintf("repaired %d ghost rows (soft-deleted), %d missing rows, %d changed rows at source position %s",
			repaired[validate.KindGhost], repaired[validate.KindMissing], repaired[validate.KindChanged], at)}
	for _, d := range out.diffs {
		if len(res.Findings) < validate.MaxFindings {
			res.Findings = append(res.Findings, validate.Finding{Key: d.Key, What: "repaired (" + d.Kind + ")"})
		}
	}
	res.Total = len(out.diffs)
	return res
}
