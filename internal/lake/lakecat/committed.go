package lakecat

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// Committed is what each table recorded for a batch found committed
// everywhere (FindCommitted).
type Committed struct {
	Bronze     payload.BronzeResult
	Mirror     payload.MirrorResult
	History    payload.HistoryResult
	EndOffsets payload.Offsets // the offsets to continue from, as the mirror recorded them
	// Tally is the batch's record counts as its commits recorded them
	// (PropBatchTally); nil when none of the tables recorded one (batches
	// committed before the tally was written).
	Tally *payload.BatchTally
}

// FindCommitted reports whether every table in kinds ("bronze", "mirror",
// "history") exists and already holds batch b (its checkpoint's batch
// sequence number is b's or later), and returns their recorded results
// (docs/design.md, "Exactly-once batch bookkeeping"). A retried batch that
// finds itself committed needs none of its Kafka records, which may be
// gone by then (retention). A direct-load chunk (b.Load) is never
// reported committed here. Errors: catalog failures and malformed
// bookkeeping properties.
func FindCommitted(ctx context.Context, cat catalog.Catalog, name TableName, b payload.Batch, kinds []string) (Committed, bool, error) {
	var c Committed
	if b.Load != nil || b.Seq <= 0 {
		return c, false, nil
	}
	idents := map[string][]string{"bronze": name.Bronze(), "mirror": name.Mirror(), "history": name.History()}
	for _, kind := range kinds {
		ident, ok := idents[kind]
		if !ok {
			return c, false, fmt.Errorf("lake: no table kind %q", kind)
		}
		tbl, err := LoadTable(ctx, cat, ident)
		if err != nil || tbl == nil {
			return c, false, err
		}
		cp, err := ReadCheckpoint(tbl)
		if err != nil || cp.BatchSeq < b.Seq {
			return c, false, err
		}
		if c.Tally == nil {
			c.Tally, err = tallyOf(tbl, cp, b)
			if err != nil {
				return c, false, err
			}
		}
		switch kind {
		case "bronze":
			RecordedResult(cp, b, &c.Bronze)
			c.Bronze.BatchID, c.Bronze.BatchSeq = b.ID, b.Seq
		case "mirror":
			c.Mirror = RecordedMirrorResult(cp, b)
			c.EndOffsets = b.EndOffsets
			if cp.BatchSeq == b.Seq {
				c.EndOffsets = maps.Clone(cp.EndOffsets)
			}
		case "history":
			RecordedResult(cp, b, &c.History)
			c.History.BatchID, c.History.BatchSeq, c.History.AlreadyCommitted = b.ID, b.Seq, true
		}
	}
	return c, true, nil
}

// tallyOf is the payload.BatchTally table tbl recorded for batch b: from its
// checkpoint cp when that is b's, else from the summary of the table's
// Iceberg snapshot that committed b (searched newest first among the
// current snapshot's ancestors); nil when neither holds one.
func tallyOf(tbl *table.Table, cp Checkpoint, b payload.Batch) (*payload.BatchTally, error) {
	if cp.BatchSeq == b.Seq && cp.BatchID == b.ID {
		return cp.Tally, nil
	}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return nil, nil
	}
	for _, s := range Ancestors(tbl, snap.SnapshotID) {
		if s.Summary == nil || s.Summary.Properties[PropBatchID] != b.ID {
			continue
		}
		t := s.Summary.Properties[PropBatchTally]
		if t == "" {
			return nil, nil
		}
		var out payload.BatchTally
		if err := json.Unmarshal([]byte(t), &out); err != nil {
			return nil, fmt.Errorf("lake: bad %s %q in Iceberg snapshot %d: %w", PropBatchTally, t, s.SnapshotID, err)
		}
		return &out, nil
	}
	return nil, nil
}

// RecordedMirrorResult is the result of a batch found already committed.
func RecordedMirrorResult(cp Checkpoint, b payload.Batch) payload.MirrorResult {
	var r payload.MirrorResult
	RecordedResult(cp, b, &r)
	r.BatchID, r.BatchSeq, r.AlreadyCommitted = b.ID, b.Seq, true
	return r
}
