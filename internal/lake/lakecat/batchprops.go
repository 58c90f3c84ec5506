package lakecat

import (
	"encoding/json"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// RecordedResult unmarshals into out the result checkpoint cp recorded
// for batch b (the same batch sequence number), and reports whether it
// held one. A retried batch that finds its commit returns that result.
func RecordedResult(cp Checkpoint, b payload.Batch, out any) bool {
	if cp.BatchSeq != b.Seq || len(cp.Result) == 0 {
		return false
	}
	return json.Unmarshal(cp.Result, out) == nil
}

// BatchProps returns the bookkeeping properties for a commit of b with
// result res (marshalled to JSON).
func BatchProps(b payload.Batch, res any) (iceberg.Properties, error) {
	if b.Load != nil {
		cur, err := json.Marshal(b.Load)
		if err != nil {
			return nil, err
		}
		return iceberg.Properties{PropBatchID: b.ID, PropLoadCursor: string(cur)}, nil
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
		PropBatchID:     b.ID,
		PropBatchSeq:    strconv.FormatInt(b.Seq, 10),
		PropEndOffsets:  string(off),
		PropBatchResult: string(r),
		PropTopic:       b.Topic,
	}
	if b.Tally != nil {
		t, err := json.Marshal(b.Tally)
		if err != nil {
			return nil, err
		}
		p[PropBatchTally] = string(t)
	}
	return p, nil
}
