package activities

import (
	"errors"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/telemetry"
)

// observeBatch reports an applied batch to the metrics, and records the
// table's local state usage in res (State).
func (a *Activities) observeBatch(table string, res *ApplyResult, took time.Duration) {
	res.State = a.stateUsage(table)
	if a.Metrics == nil {
		return
	}
	b := telemetry.Batch{Table: table, Records: res.Records, Tombstones: res.Tombstones, AppliedByOp: res.Mirror.AppliedOps,
		Duplicates: res.Mirror.Duplicates, Stale: res.Mirror.Stale, BronzeRows: res.Bronze.Appended,
		MirrorRows: res.Mirror.RowsWritten, HistoryRows: res.History.RowsWritten, Duration: took, Commits: map[string]int{}}
	if res.Bronze.SnapshotID != 0 {
		b.Commits["bronze"]++
	}
	if !res.Mirror.AlreadyCommitted {
		b.Commits["mirror"]++
	}
	if !res.History.AlreadyCommitted {
		b.Commits["history"]++
	}
	if res.Mirror.Watermark != "" {
		if s, err := cdc.ParseSeqHex(res.Mirror.Watermark); err == nil {
			if w := s.Words(); len(w) > 0 {
				b.WatermarkWord = w[len(w)-1]
			}
		}
	}
	if res.Mirror.MaxSourceTs > 0 {
		b.NewestSourceTime = time.UnixMicro(res.Mirror.MaxSourceTs)
	}
	a.Metrics.ObserveBatch(b)
	if !res.History.AlreadyCommitted && res.History.Unwoven > 0 {
		a.Metrics.Unwoven(table, res.History.Unwoven)
	}
	if !res.Mirror.AlreadyCommitted && res.Mirror.UnknownPlaceholders > 0 {
		a.Metrics.UnknownValues(table, res.Mirror.UnknownPlaceholders)
	}
	if !res.Mirror.AlreadyCommitted && res.Mirror.KeysMovedOntoLive > 0 {
		a.Metrics.KeysMovedOntoLive(table, res.Mirror.KeysMovedOntoLive)
	}
	if !res.Mirror.AlreadyCommitted {
		if n := res.WovenKeys(); n > 0 {
			a.Metrics.Rebuilt(table, n)
		}
	}
}

// observeFailure counts commit failures and retention gaps.
func (a *Activities) observeFailure(table, stage string, err error) {
	if a.Metrics == nil || err == nil {
		return
	}
	switch {
	case errors.Is(err, kafka.ErrRetentionGap):
		a.Metrics.RetentionGap(table)
	case stage == "bronze" || stage == "mirror" || stage == "history":
		a.Metrics.CommitFailed(table)
	}
}

// observeLag reports per-partition lag at planning time.
func (a *Activities) observeLag(table string, p Plan) {
	if a.Metrics == nil {
		return
	}
	next := map[int32]int64{}
	for part, o := range p.Offsets {
		next[part] = o
	}
	for _, r := range p.Ranges { // lag counts from the batch start: the batch is not applied yet
		next[r.Partition] = r.From
	}
	a.Metrics.ObserveLag(table, next, map[int32]int64(p.HighWatermarks))
}
