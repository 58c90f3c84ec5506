package lake

import (
	"context"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/maintain"
)

// ingestClock gives bronze's and the quarantine's `_ingested_at`
// (time.Now; tests set days).
var ingestClock = time.Now

// TrimmedPast returns, once bronze retention has dropped records (bronze
// has maintain.PropTrimmedBefore, returned as before), the keys of byKey
// whose stored rows name a change byKey lacks: the mirror row's position, or a
// history version's opening or closing position. Such a key's changes
// before the cutoff are gone from bronze, and a rebuild from the rest
// would replace its rows with a wrong history. The keys come sorted,
// each with the first position it misses. A table without bronze, or
// whose bronze never lost a record, returns none. Errors: catalog and
// state loading.
func (w *TableWriter) TrimmedPast(ctx context.Context, byKey map[cdc.Key][]*cdc.Event) (keys []TrimmedKey, before time.Time, err error) {
	if w.withoutBronze || len(byKey) == 0 {
		return nil, time.Time{}, nil
	}
	btbl, err := lakecat.LoadTable(ctx, w.cat, w.name.Bronze())
	if err != nil || btbl == nil {
		return nil, time.Time{}, err
	}
	if before, err = maintain.TrimmedBefore(btbl); err != nil || before.IsZero() {
		return nil, before, err
	}
	w.Mirror.state.Settle()
	mtbl, err := lakecat.LoadTable(ctx, w.cat, w.name.Mirror())
	if err != nil || mtbl == nil {
		return nil, before, err
	}
	if err := w.Mirror.ensureIndex(ctx, mtbl); err != nil {
		return nil, before, err
	}
	if w.History != nil {
		htbl, err := lakecat.LoadTable(ctx, w.cat, w.name.History())
		if err != nil {
			return nil, before, err
		}
		if htbl != nil {
			if err := w.History.State().EnsureHistory(ctx, htbl); err != nil {
				return nil, before, err
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		seqs := make(map[cdc.Seq]bool, len(byKey[k]))
		for _, e := range byKey[k] {
			seqs[e.Seq] = true
		}
		var miss cdc.Seq
		if e, ok := w.Mirror.state.Ix.Lookup(k); ok && !seqs[e.Seq] {
			miss = e.Seq
		}
		if miss == "" && w.History != nil {
			rows, err := w.History.State().LiveRows(k)
			if err != nil {
				return nil, before, err
			}
			for _, r := range rows {
				if !seqs[r.Seq] {
					miss = r.Seq
					break
				}
				if r.ToSeq != "" && !seqs[r.ToSeq] {
					miss = r.ToSeq
					break
				}
			}
		}
		if miss != "" {
			keys = append(keys, TrimmedKey{Key: k, Missing: miss})
		}
	}
	return keys, before, nil
}

// TrimmedKey is a key whose past bronze retention cut: Missing is the
// first position its stored rows name that the past read back lacks.
type TrimmedKey struct {
	Key     cdc.Key
	Missing cdc.Seq
}

// pastTrimmed is the error of a rebuild that stops on keys.
func pastTrimmed(name lakecat.TableName, before time.Time, keys []TrimmedKey) *PastTrimmedError {
	e := &PastTrimmedError{Table: name.String(), Before: before, Keys: len(keys), Missing: keys[0].Missing}
	for _, k := range keys[:min(len(keys), 5)] {
		e.Sample = append(e.Sample, hex.EncodeToString([]byte(k.Key)))
	}
	return e
}

// KeepApplied takes out of the pending-rebuild set (the history's, or the
// mirror's for a table without history) the keys of byKey whose past
// bronze retention cut (TrimmedPast), in one properties-only commit: their
// history and mirror row stay as the batches applied them in position
// order, and their late change is not woven into the history. This is the
// operator's way on after a *PastTrimmedError (`starter maintain TABLE
// keep-applied`). It returns the keys taken out; none when nothing was
// trimmed. Errors: TrimmedPast's, catalog and commit errors.
func (w *TableWriter) KeepApplied(ctx context.Context, byKey map[cdc.Key][]*cdc.Event) ([]TrimmedKey, error) {
	keys, _, err := w.TrimmedPast(ctx, byKey)
	if err != nil || len(keys) == 0 {
		return nil, err
	}
	ident := w.name.Mirror()
	if w.History != nil {
		ident = w.name.History()
	}
	tbl, err := lakecat.LoadTable(ctx, w.cat, ident)
	if err != nil || tbl == nil {
		return nil, err
	}
	pending, err := lakecat.ReadPending(tbl)
	if err != nil {
		return nil, err
	}
	var out []TrimmedKey
	for _, k := range keys {
		if pending[k.Key] {
			delete(pending, k.Key)
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	tx := tbl.NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{lakecat.PropPendingRebuild: lakecat.PendingJSON(pending)}); err != nil {
		return nil, err
	}
	if _, err := lakecat.CommitTx(ctx, tbl, tx); err != nil {
		return nil, fmt.Errorf("lake: keep %d keys of %s as applied: %w", len(out), lakecat.IdentString(ident), err)
	}
	return out, nil
}
