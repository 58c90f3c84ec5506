package lake

import (
	"context"
	"fmt"
	"maps"

	"github.com/apache/iceberg-go/catalog"
)

// Committed is what each table recorded for a batch found committed
// everywhere (FindCommitted).
type Committed struct {
	Bronze     BronzeResult
	Mirror     MirrorResult
	History    HistoryResult
	EndOffsets Offsets // the offsets to continue from, as the mirror recorded them
}

// FindCommitted reports whether every table in kinds ("bronze", "mirror",
// "history") exists and already holds batch b (its checkpoint's batch
// sequence number is b's or later), and returns their recorded results
// (docs/design.md, "Exactly-once batch bookkeeping"). A retried batch that
// finds itself committed needs none of its Kafka records, which may be
// gone by then (retention). A direct-load chunk (b.Load) is never
// reported committed here. Errors: catalog failures and malformed
// bookkeeping properties.
func FindCommitted(ctx context.Context, cat catalog.Catalog, name TableName, b Batch, kinds []string) (Committed, bool, error) {
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
		switch kind {
		case "bronze":
			recordedResult(cp, b, &c.Bronze)
			c.Bronze.BatchID, c.Bronze.BatchSeq = b.ID, b.Seq
		case "mirror":
			c.Mirror = recordedMirrorResult(cp, b)
			c.EndOffsets = b.EndOffsets
			if cp.BatchSeq == b.Seq {
				c.EndOffsets = maps.Clone(cp.EndOffsets)
			}
		case "history":
			recordedResult(cp, b, &c.History)
			c.History.BatchID, c.History.BatchSeq, c.History.AlreadyCommitted = b.ID, b.Seq, true
		}
	}
	return c, true, nil
}
