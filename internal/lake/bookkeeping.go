package lake

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
)

// Checkpoint is the last batch a table committed, read back from it.
type Checkpoint struct {
	BatchID    string
	BatchSeq   int64 // 0 when the table has never committed a batch
	EndOffsets Offsets
	Result     json.RawMessage // the lakecat.PropBatchResult JSON of that batch
	Tally      *BatchTally     // the lakecat.PropBatchTally of that batch; nil for batches committed before it was recorded
}

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

// ReadCheckpoint returns the table's last committed batch. It prefers the
// table properties (always written with the batch's commit) and falls back
// to the newest ancestor snapshot whose summary carries a batch id (for
// tables whose properties were edited by hand). A table that never
// committed a batch gives a zero Checkpoint.
func ReadCheckpoint(tbl *table.Table) (Checkpoint, error) {
	if cp, ok, err := checkpointFrom(tbl.Properties()); ok || err != nil {
		return cp, err
	}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return Checkpoint{}, nil
	}
	for _, s := range lakecat.Ancestors(tbl, snap.SnapshotID) {
		if s.Summary == nil {
			continue
		}
		if cp, ok, err := checkpointFrom(s.Summary.Properties); ok || err != nil {
			return cp, err
		}
	}
	return Checkpoint{}, nil
}

func checkpointFrom(p map[string]string) (Checkpoint, bool, error) {
	seqText, ok := p[lakecat.PropBatchSeq]
	if !ok {
		return Checkpoint{}, false, nil
	}
	seq, err := strconv.ParseInt(seqText, 10, 64)
	if err != nil {
		return Checkpoint{}, true, fmt.Errorf("lake: bad %s %q: %w", lakecat.PropBatchSeq, seqText, err)
	}
	cp := Checkpoint{BatchID: p[lakecat.PropBatchID], BatchSeq: seq, EndOffsets: Offsets{}}
	if t := p[lakecat.PropEndOffsets]; t != "" {
		if err := json.Unmarshal([]byte(t), &cp.EndOffsets); err != nil {
			return Checkpoint{}, true, fmt.Errorf("lake: bad %s %q: %w", lakecat.PropEndOffsets, t, err)
		}
	}
	if r := p[lakecat.PropBatchResult]; r != "" {
		cp.Result = json.RawMessage(r)
	}
	if t := p[lakecat.PropBatchTally]; t != "" {
		cp.Tally = new(BatchTally)
		if err := json.Unmarshal([]byte(t), cp.Tally); err != nil {
			return Checkpoint{}, true, fmt.Errorf("lake: bad %s %q: %w", lakecat.PropBatchTally, t, err)
		}
	}
	return cp, true, nil
}

// Coverage records which offsets of each partition the bronze table holds,
// as sorted, non-overlapping, non-adjacent half-open ranges. It is how
// bronze stays free of duplicates under retries and backfills.
type Coverage map[int32][][2]int64

// Contains reports whether offset o of partition p is covered.
func (c Coverage) Contains(p int32, o int64) bool {
	for _, r := range c[p] {
		if o >= r[0] && o < r[1] {
			return true
		}
		if o < r[0] {
			return false
		}
	}
	return false
}

// Add marks [from, to) of partition p as covered, merging ranges.
func (c Coverage) Add(p int32, from, to int64) {
	if from >= to {
		return
	}
	rs := append(c[p], [2]int64{from, to})
	slices.SortFunc(rs, func(a, b [2]int64) int {
		switch {
		case a[0] < b[0]:
			return -1
		case a[0] > b[0]:
			return 1
		}
		return 0
	})
	merged := rs[:1]
	for _, r := range rs[1:] {
		last := &merged[len(merged)-1]
		if r[0] <= last[1] {
			last[1] = max(last[1], r[1])
			continue
		}
		merged = append(merged, r)
	}
	c[p] = merged
}

// Clone returns a deep copy.
func (c Coverage) Clone() Coverage {
	out := make(Coverage, len(c))
	for p, rs := range c {
		out[p] = slices.Clone(rs)
	}
	return out
}

// readCoverage returns the bronze table's coverage per topic.
func readCoverage(tbl *table.Table) (map[string]Coverage, error) {
	cov := map[string]Coverage{}
	if t := tbl.Properties()[lakecat.PropCovered]; t != "" {
		if err := json.Unmarshal([]byte(t), &cov); err != nil {
			return nil, fmt.Errorf("lake: bad %s: %w", lakecat.PropCovered, err)
		}
	}
	return cov, nil
}
