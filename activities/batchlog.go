package activities

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// BatchLogEvery is the least time between two INFO batch lines of one
// table (Activities.BatchLog).
const BatchLogEvery = 10 * time.Second

// batchLogLimiter decides which batches of a table get an INFO line.
type batchLogLimiter struct {
	mu    sync.Mutex
	last  map[string]time.Time // the table's last INFO line
	quiet map[string]int       // batches logged at DEBUG since then
}

// take reports whether the batch of table applied at now gets an INFO
// line (the table's first, or BatchLogEvery after its last one) and, if
// so, how many batches were logged at DEBUG since the last INFO line.
func (l *batchLogLimiter) take(table string, now time.Time) (info bool, quiet int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last, l.quiet = map[string]time.Time{}, map[string]int{}
	}
	if last, ok := l.last[table]; ok && now.Sub(last) < BatchLogEvery {
		l.quiet[table]++
		return false, 0
	}
	quiet = l.quiet[table]
	l.last[table], l.quiet[table] = now, 0
	return true, quiet
}

// logBatch writes the batch line of an applied batch to a.BatchLog: at
// INFO when the limiter allows, else at DEBUG. lag is the records between
// the batch's end offsets and the topic's end offsets, read from Kafka
// (within 2 s; -1 when they cannot be read) only for INFO lines.
func (a *Activities) logBatch(ctx context.Context, spec TableSpec, res *ApplyResult, took time.Duration) {
	if a.BatchLog == nil {
		return
	}
	info, quiet := a.batchLog.take(spec.Table, time.Now())
	if !info {
		a.BatchLog.Debug("batch applied", "table", spec.Table, "batch", res.BatchID, "records", res.Records,
			"changes", res.Changes, "duration", took.Round(time.Millisecond))
		return
	}
	lag := int64(-1)
	if a.Kafka != nil && len(res.EndOffsets) > 0 {
		kctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		ends, err := a.Kafka.EndOffsets(kctx, spec.Topic)
		cancel()
		if err == nil {
			lag = 0
			for p, next := range res.EndOffsets {
				lag += max(ends[p]-next, 0)
			}
		}
	}
	a.BatchLog.LogAttrs(ctx, slog.LevelInfo, "batch applied", slog.String("table", spec.Table), slog.String("batch", res.BatchID),
		slog.Int("records", res.Records), slog.Int("changes", res.Changes), slog.Duration("duration", took.Round(time.Millisecond)),
		slog.Int64("lag", lag), slog.Int("batches_since_last_line", quiet))
}
