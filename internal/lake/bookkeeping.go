package lake

import (
	"encoding/json"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
)

// PropAppliedPosition is lakecat.PropAppliedPosition: the mirror's
// applied position (hex), which never moves back.
const PropAppliedPosition = lakecat.PropAppliedPosition

// Checkpoint is lakecat.Checkpoint: the last batch a table committed,
// read back from it.
type Checkpoint = lakecat.Checkpoint

// ReadCheckpoint is lakecat.ReadCheckpoint, for callers outside
// internal/lake.
func ReadCheckpoint(tbl *table.Table) (Checkpoint, error) { return lakecat.ReadCheckpoint(tbl) }

// recordedResult unmarshals into out the result checkpoint cp recorded
// for batch b (the same batch sequence number), and reports whether it
// held one. A retried batch that finds its commit returns that result.
func recordedResult(cp Checkpoint, b Batch, out any) bool {
	if cp.BatchSeq != b.Seq || len(cp.Result) == 0 {
		return false
	}
	return json.Unmarshal(cp.Result, out) == nil
}

// batchProps returns the bookkeeping properties for a commit of b with
// result res (marshalled to JSON).
func batchProps(b Batch, res any) (iceberg.Properties, error) {
	if b.Load != nil {
		cur, err := json.Marshal(b.Load)
		if err != nil {
			return nil, err
		}
		return iceberg.Properties{lakecat.PropBatchID: b.ID, PropLoadCursor: string(cur)}, nil
	}
	off, err := json.Marshal(b.EndOffsets)
	if err != nil {
		return nil, err
	}
	r, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	p := iceberg.Properties{
		lakecat.PropBatchID:     b.ID,
		lakecat.PropBatchSeq:    strconv.FormatInt(b.Seq, 10),
		lakecat.PropEndOffsets:  string(off),
		lakecat.PropBatchResult: string(r),
		lakecat.PropTopic:       b.Topic,
	}
	if b.Tally != nil {
		t, err := json.Marshal(b.Tally)
		if err != nil {
			return nil, err
		}
		p[lakecat.PropBatchTally] = string(t)
	}
	return p, nil
}
