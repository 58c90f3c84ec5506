package activities

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/scd2"
	"github.com/lakemirror/lakemirror/internal/merge"
)

// Recover reads the table's committed position from Iceberg: the mirror's
// checkpoint when the mirror exists and has one, else the bronze table's
// when the mirror does not exist yet (bronze commits first and the mirror
// is created before any bronze batch that carries row changes), else
// nothing: then a table that starts from "latest" and has a start
// recorded for its topic (lakecat.StartRecord, written by its first plan)
// goes on from the recorded offsets (Source "start"), so a table stopped
// before its first commit and started again skips nothing; else it starts
// per spec.StartFrom. Errors: catalog failures
// (retryable); spec key columns other than the existing mirror's, or a
// topic other than the one the tables were fed from (non-retryable: the
// table blocks until started with the right key and topic; another
// topic's offsets mean nothing here, and its records would be skipped).
func (a *Activities) Recover(ctx context.Context, spec TableSpec) (RecoverResult, error) {
	if err := a.checkCatalog(spec); err != nil {
		return RecoverResult{}, err
	}
	name, err := lake.ParseTableName(spec.Table)
	if err != nil {
		return RecoverResult{}, badSpec(err)
	}
	out := RecoverResult{Source: "none", Offsets: lake.Offsets{}, Catalog: a.CatalogID}
	mirror, err := lake.LoadTable(ctx, a.Catalog, name.Mirror())
	if err != nil {
		return out, err
	}
	bronze, err := lake.LoadTable(ctx, a.Catalog, name.Bronze())
	if err != nil {
		return out, err
	}
	for _, tbl := range []*table.Table{mirror, bronze} {
		if tbl != nil {
			if had := lakecat.TopicOf(tbl); had != "" && had != spec.Topic {
				return out, topicMismatch(name, had, spec.Topic)
			}
		}
	}
	var bseq int64
	if bronze != nil {
		cp, err := lake.ReadCheckpoint(bronze)
		if err != nil {
			return out, err
		}
		bseq = cp.BatchSeq
		if mirror == nil && cp.BatchSeq > 0 {
			out = RecoverResult{BatchSeq: cp.BatchSeq, BatchID: cp.BatchID, Offsets: maps.Clone(cp.EndOffsets), Source: "bronze"}
		}
	}
	maxSeq, loaded := bseq, false
	if mirror != nil && len(spec.KeyColumns) > 0 {
		recorded, err := lakecat.KeyColumnsOf(mirror)
		if err != nil {
			return out, err
		}
		if !slices.Equal(recorded, spec.KeyColumns) {
			return out, keyMismatch(name, recorded, spec.KeyColumns)
		}
	}
	if mirror != nil {
		cp, err := lake.ReadCheckpoint(mirror)
		if err != nil {
			return out, err
		}
		maxSeq = max(maxSeq, cp.BatchSeq)
		if cp.BatchSeq > 0 {
			out = RecoverResult{BatchSeq: cp.BatchSeq, BatchID: cp.BatchID, Offsets: maps.Clone(cp.EndOffsets), Source: "mirror",
				Watermark: mirror.Properties()[lake.PropAppliedPosition]}
			if spec.Group != "" {
				if out.FetchedPast, err = lakecat.FetchedPastOf(mirror); err != nil {
					return out, err
				}
				if out.NewestTx, err = lakecat.NewestTxOf(mirror); err != nil {
					return out, err
				}
			}
		}
		if lc, err := lake.ReadLoadCursor(mirror); err != nil {
			return out, err
		} else if lc != nil && (lc.ID != InitialLoadID || lc.Done) {
			loaded = true // the initial load finished (a later re-snapshot implies it did)
		}
		var history *table.Table // a table without history ignores one left from before
		if !spec.WithoutHistory {
			if history, err = lake.LoadTable(ctx, a.Catalog, name.History()); err != nil {
				return out, err
			}
		}
		if history != nil {
			hcp, err := lake.ReadCheckpoint(history)
			if err != nil {
				return out, err
			}
			// the history commits after the mirror: when it lags (a crash
			// between the two), resume from its position; the mirror's guard
			// makes the repeat a no-op there
			if hcp.BatchSeq < cp.BatchSeq {
				out = RecoverResult{BatchSeq: hcp.BatchSeq, BatchID: hcp.BatchID, Offsets: maps.Clone(hcp.EndOffsets), Source: "history"}
				if out.Offsets == nil {
					out.Offsets = lake.Offsets{}
				}
			}
			pending, err := scd2.NewHistoryWriter(a.Catalog, name, nil, merge.HistoryOptions{}).Pending(ctx)
			if err != nil {
				return out, err
			}
			out.Pending = len(pending)
		} else if spec.WithoutHistory { // the mirror keeps the pending set (lake/mirror_pending.go)
			pending, err := lakecat.PendingKeys(mirror)
			if err != nil {
				return out, err
			}
			out.Pending = len(pending)
		}
	}
	if out.Source == "none" && spec.StartFrom == "latest" {
		// started from latest before: go on from where that start read, not
		// from the topic's end now (records produced since would be skipped)
		rec, err := lakecat.ReadStart(ctx, a.Catalog, name)
		if err != nil {
			return out, err
		}
		if rec != nil && rec.Topic == spec.Topic && len(rec.Offsets) > 0 {
			out.Offsets, out.Source = maps.Clone(rec.Offsets), "start"
		}
	}
	// batch numbers stay strictly increasing whichever table is ahead
	out.BatchSeq, out.Loaded = maxSeq, loaded
	a.pos.set(spec.Table, spec.Topic, out.Offsets)
	return out, nil
}

// topicMismatch is the non-retryable error for a table started on another
// topic than the one its tables hold.
func topicMismatch(name lake.TableName, had, spec string) error {
	return badSpec(fmt.Errorf("table %s holds the records of topic %s, not %s: its offsets are %s's; start it with topic %s, or mirror %s into a new table name",
		name, had, spec, had, had, spec))
}
