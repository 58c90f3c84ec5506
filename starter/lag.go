package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/config"
	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/worker/runner"
	"github.com/lakemirror/lakemirror/workflows"
)

// Lag sources: where a status's high watermarks and lag come from.
const (
	lagFromKafka = "kafka"     // read from Kafka by this command, now
	lagFromPlan  = "last plan" // the workflow's last PlanBatch (Kafka not reachable from here)
)

// lagReader reads topics' offsets from Kafka for the status commands, so
// that lag is current also while a table is paused, idle or has not
// planned since records were produced (the workflow's own numbers are
// those of its last PlanBatch).
type lagReader struct {
	kc  *kafka.Client
	err error
}

// newLagReader connects to s's Kafka; a failure is kept and reported by
// refresh (the commands then show the workflow's numbers).
func newLagReader(s config.Settings) *lagReader {
	kc, err := runner.NewKafka(s)
	return &lagReader{kc: kc, err: err}
}

func (l *lagReader) Close() {
	if l.kc != nil {
		l.kc.Close()
	}
}

// refresh replaces st's high watermarks, per-partition lag and total lag
// (records) with values computed from Kafka's current end offsets and the
// table's applied offsets, within 3 s, and sets LagSource. A partition the
// workflow has no offset for yet counts from its log start ("earliest")
// or not at all ("latest"). A missing topic sets TopicMissing. When Kafka
// cannot be read, st keeps the workflow's numbers, LagSource says so and
// the error is returned for the caller to mention.
func (l *lagReader) refresh(ctx context.Context, st *workflows.Status) error {
	st.LagSource = lagFromPlan
	if l.err != nil {
		return l.err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	ends, err := l.kc.EndOffsets(ctx, st.Topic)
	if errors.Is(err, kafka.ErrUnknownTopic) {
		st.TopicMissing, st.LagSource = true, lagFromKafka
		return nil
	}
	if err != nil {
		return err
	}
	var starts map[int32]int64
	for p := range ends {
		if _, ok := st.Offsets[p]; !ok { // a partition the table has not read yet: counts from its log start
			if starts, err = l.kc.StartOffsets(ctx, st.Topic); err != nil {
				return err
			}
			break
		}
	}
	applyLiveLag(st, ends, starts)
	return nil
}

// applyLiveLag sets st's high watermarks, lag and total lag from a
// topic's end and start offsets (records per partition; starts is needed
// only for partitions st has no offset for).
func applyLiveLag(st *workflows.Status, ends, starts map[int32]int64) {
	st.HighWatermarks, st.Lag, st.TotalLag = lake.Offsets{}, lake.Offsets{}, 0
	from := activities.StartOffsets(st.Spec, st.Offsets, st.TopicMissing, starts, ends)
	st.TopicMissing, st.LagSource = false, lagFromKafka
	for p, end := range ends {
		st.HighWatermarks[p] = end
		lag := max(end-from[p], 0)
		st.Lag[p] = lag
		st.TotalLag += lag
	}
}

// status queries the table's status and refreshes its lag from Kafka. A
// Kafka failure does not fail it: note then says the lag is the
// workflow's, and why. Errors are those of queryStatus.
func (l *lagReader) status(ctx context.Context, c client.Client, table string) (st workflows.Status, note string, err error) {
	if st, err = queryStatus(ctx, c, table); err != nil {
		return st, "", err
	}
	if err := l.refresh(ctx, &st); err != nil {
		note = fmt.Sprintf("lag as of the table's last plan: Kafka is not readable from here (%v)", err)
	}
	return st, note, nil
}
