package lakecat

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/payload"
)

// Checkpoint is the last batch a table committed, read back from it.
type Checkpoint struct {
	BatchID    string
	BatchSeq   int64 // 0 when the table has never committed a batch
	EndOffsets payload.Offsets
	Result     json.RawMessage     // the PropBatchResult JSON of that batch
	Tally      *payload.BatchTally // the PropBatchTally of that batch; nil for batches committed before it was recorded
}

// ReadCheckpoint returns the table's last committed batch. It prefers the
// table properties (always written with the batch's commit) and falls back
// to the newest ancestor snapshot whose summary carries a batch id (for
// tables whose properties were edited by hand). A table that never
// committed a batch gives a zero Checkpoint.
func ReadCheckpoint(tbl *table.Table) (Checkpoint, error) {
	if cp, ok, err := CheckpointFrom(tbl.Properties()); ok || err != nil {
		return cp, err
	}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return Checkpoint{}, nil
	}
	for _, s := range Ancestors(tbl, snap.SnapshotID) {
		if s.Summary == nil {
			continue
		}
		if cp, ok, err := CheckpointFrom(s.Summary.Properties); ok || err != nil {
			return cp, err
		}
	}
	return Checkpoint{}, nil
}

// CheckpointFrom reads a checkpoint from table properties or a snapshot
// summary; false when they hold none.
func CheckpointFrom(p map[string]string) (Checkpoint, bool, error) {
	seqText, ok := p[PropBatchSeq]
	if !ok {
		return Checkpoint{}, false, nil
	}
	seq, err := strconv.ParseInt(seqText, 10, 64)
	if err != nil {
		return Checkpoint{}, true, fmt.Errorf("lake: bad %s %q: %w", PropBatchSeq, seqText, err)
	}
	cp := Checkpoint{BatchID: p[PropBatchID], BatchSeq: seq, EndOffsets: payload.Offsets{}}
	if t := p[PropEndOffsets]; t != "" {
		if err := json.Unmarshal([]byte(t), &cp.EndOffsets); err != nil {
			return Checkpoint{}, true, fmt.Errorf("lake: bad %s %q: %w", PropEndOffsets, t, err)
		}
	}
	if r := p[PropBatchResult]; r != "" {
		cp.Result = json.RawMessage(r)
	}
	if t := p[PropBatchTally]; t != "" {
		cp.Tally = new(payload.BatchTally)
		if err := json.Unmarshal([]byte(t), cp.Tally); err != nil {
			return Checkpoint{}, true, fmt.Errorf("lake: bad %s %q: %w", PropBatchTally, t, err)
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

// ReadCoverage returns the bronze table's coverage per topic.
func ReadCoverage(tbl *table.Table) (map[string]Coverage, error) {
	cov := map[string]Coverage{}
	if t := tbl.Properties()[PropCovered]; t != "" {
		if err := json.Unmarshal([]byte(t), &cov); err != nil {
			return nil, fmt.Errorf("lake: bad %s: %w", PropCovered, err)
		}
	}
	return cov, nil
}
