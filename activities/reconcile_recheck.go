package activities

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/source"
	"github.com/lakemirror/lakemirror/internal/validate"
)

// recheckOut is what the re-read of the candidates confirmed: the
// differences (sorted by kind and key), how many keys were re-read and
// how many could not be compared (changed again after the re-read), the
// mirror's live rows and keys at the final read, and for the repair the
// re-read's position, the source rows read (by key) and the mirror rows
// of the differing keys.
type recheckOut struct {
	// snaps are the re-reads' snapshots (PostgreSQL), recorded by a
	// repair like a re-snapshot's
	snaps     []cdc.PostgresSnapshot
	diffs     []validate.Diff
	rechecked int
	unsettled int
	live      int64
	liveKeys  map[string]bool
	// applied is the mirror's applied position at the final read
	applied string
	// deletedSeqs: the `_seq` of each soft-deleted mirror row, by key
	deletedSeqs map[string]string
	pos         source.Position
	srcRows     map[string]*cdc.Row
	mirRows     map[string]*cdc.Row
}

// recheck re-reads the candidate keys (cands, and the ghost candidates
// by key hex, whose key values come from the mirror) from the source by
// key, waits for the mirror to pass the last re-read's position plus the
// settling period, reads the mirror again and keeps the differences that
// remain (validate.Recheck).
func (r *reconciler) recheck(ctx context.Context, cands []candidate, ghosts map[string]bool, settle time.Duration) (recheckOut, error) {
	out := recheckOut{srcRows: map[string]*cdc.Row{}, mirRows: map[string]*cdc.Row{}}
	want := map[string][]cdc.Value{}
	for _, c := range cands {
		want[c.Key] = (&lake.LoadCursor{After: c.Vals}).Values()
	}
	if len(ghosts) > 0 {
		// the ghost candidates' key values, from the mirror
		_, err := tableread.ScanMirrorRows(ctx, r.a.Catalog, r.name, func(m tableread.MirrorRow) error {
			k, err := cdc.KeyOf(m.Row, r.info.Key)
			if err != nil {
				return err
			}
			h := hex.EncodeToString([]byte(k))
			if ghosts[h] && len(want) < maxCandidates {
				want[h] = r.keyVals(m.Row)
			}
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	})
	readAt := map[string]string{}
	// inFlightSince: keys read by a snapshot with transactions in
	// progress, and when: a mirror row ingested after that read may hold
	// such a transaction's change, which the read did not see although
	// its position sorts below the read's (cdc.PostgresSnapshot)
	inFlightSince := map[string]int64{}
	var readTime time.Time
	for i := 0; i < len(keys); i += 1000 {
		batch := keys[i:min(i+1000, len(keys))]
		vals := make([][]cdc.Value, len(batch))
		for j, k := range batch {
			vals[j] = want[k]
		}
		rows, pos, err := r.src.ReadKeys(ctx, r.info, vals)
		if err != nil {
			return out, sourceError(err)
		}
		readTime, out.pos = time.Now(), pos
		if pos.Snapshot != nil {
			out.snaps = lake.WithSnapshot(out.snaps, *pos.Snapshot)
		}
		for _, k := range batch {
			readAt[k] = pos.Seq.Hex()
			if pos.Snapshot != nil && len(pos.Snapshot.Xip) > 0 {
				inFlightSince[k] = readTime.Add(-time.Second).UnixMicro() // a second of clock skew between worker clocks
			}
		}
		for _, row := range rows {
			k, _, err := r.keyAndDigest(row)
			if err != nil {
				return out, err
			}
			out.srcRows[k] = row
		}
	}
	out.rechecked = len(keys)
	if reconcileHook != nil {
		reconcileHook("reread")
	}
	if len(keys) > 0 {
		if err := r.waitCaughtUp(ctx, out.pos, readTime, settle); err != nil {
			return out, err
		}
	}
	// the final mirror read
	mir := map[string]*validate.RowState{}
	ingestedAfter := map[string]bool{}
	out.liveKeys, out.deletedSeqs = map[string]bool{}, map[string]string{}
	applied, err := tableread.ScanMirrorRows(ctx, r.a.Catalog, r.name, func(m tableread.MirrorRow) error {
		k, err := cdc.KeyOf(m.Row, r.info.Key)
		if err != nil {
			return err
		}
		h := hex.EncodeToString([]byte(k))
		if !m.Deleted {
			out.live++
			out.liveKeys[h] = true
		} else {
			out.deletedSeqs[h] = m.Seq
		}
		if _, ok := want[h]; ok {
			if since, ok := inFlightSince[h]; ok && m.Ingested >= since {
				ingestedAfter[h] = true
			}
			mir[h] = &validate.RowState{Digest: merge.RowHash(m.Row, r.compared), Seq: m.Seq, Deleted: m.Deleted}
			out.mirRows[h] = m.Row
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	out.applied = applied
	for _, k := range keys {
		var src *validate.RowState
		if row := out.srcRows[k]; row != nil {
			src = &validate.RowState{Digest: merge.RowHash(row, r.compared)}
		}
		m := mir[k]
		mseq := ""
		if m != nil {
			mseq = m.Seq
		}
		if validate.Unsettled(readAt[k], mseq) || ingestedAfter[k] {
			out.unsettled++
			continue
		}
		if d, ok := validate.Recheck(k, validate.Classify(src, m), readAt[k], mseq); ok {
			out.diffs = append(out.diffs, d)
		}
	}
	return out, nil
}

// waitCaughtUp waits until the mirror has applied every change committed
// before the source read at pos (taken at readTime): the settling period
// after readTime has passed and then either the mirror's applied
// position (lake.PropAppliedPosition) is at or above pos, or the table's
// Kafka position (the mirror's checkpoint) has reached the topic's end
// offsets as first read after the settling period. It polls every 2 s,
// up to the request's CatchUpTimeout. Errors: a position of another
// width than the table's (a source of another connector: non-retryable),
// errNotCaughtUp at the timeout, catalog and Kafka failures.
func (r *reconciler) waitCaughtUp(ctx context.Context, pos source.Position, readTime time.Time, settle time.Duration) error {
	deadline := time.Now().Add(r.req.CatchUpTimeout)
	if err := sleepCtx(ctx, time.Until(readTime.Add(settle))); err != nil {
		return err
	}
	want := pos.Seq.Hex()
	var ends map[int32]int64
	for {
		tbl, err := lake.LoadTable(ctx, r.a.Catalog, r.name.Mirror())
		if err != nil {
			return err
		}
		if tbl == nil {
			return nil // no mirror: nothing to wait for
		}
		applied := tbl.Properties()[lake.PropAppliedPosition]
		if applied != "" && len(applied) != len(want) {
			return badSpec(fmt.Errorf("table %s: its positions have %d words, the source read's %d: the source is not the table's connector's database", r.spec.Table, len(applied)/16, len(want)/16))
		}
		if applied != "" && applied >= want {
			return nil
		}
		if r.a.Kafka != nil && r.spec.Topic != "" {
			if ends == nil {
				if ends, err = r.a.Kafka.EndOffsets(ctx, r.spec.Topic); err != nil && !errors.Is(err, kafka.ErrUnknownTopic) {
					return err
				}
				if ends == nil {
					ends = map[int32]int64{}
				}
			}
			cp, err := lake.ReadCheckpoint(tbl)
			if err != nil {
				return err
			}
			caught := true
			for p, e := range ends {
				if cp.EndOffsets[p] < e {
					caught = false
				}
			}
			if caught {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: applied position %q below the read's %s (%s) after %s", errNotCaughtUp, applied, want, pos.Text, r.req.CatchUpTimeout)
		}
		if err := sleepCtx(ctx, 2*time.Second); err != nil {
			return err
		}
	}
}
