package kafka

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Range is the half-open offset interval [From, To) of one partition.
// From == To is an empty range.
type Range struct {
	Partition int32
	From, To  int64
}

// partState is Fetch's progress on one partition's range.
type partState struct {
	r        Range
	next     int64 // one past the highest offset seen (data or control), ≥ r.From
	done     bool
	recs     []*kgo.Record
	progress time.Time // last time next moved
}

// Fetch returns exactly the committed data records of topic whose offsets
// lie in the given ranges: partitions in ascending order, each partition's
// records in offset order. At most one range per partition; empty ranges
// are ignored. Records keep kgo's fields (Topic, Partition, Offset, Key,
// Value (nil for a tombstone), Headers, Timestamp, LeaderEpoch).
//
// Transactional data is read with read_committed isolation: aborted
// records and transaction control markers are not returned, so a range
// may hold fewer records than To−From. A range completes when a record
// with offset ≥ To−1 has been seen (control markers are consumed, with
// their offsets, for this and then dropped), or when the fetch position,
// learned by a direct fetch probe after 500 ms without progress, has
// reached To with no data record left below To (an offset compacted away
// or skipped by isolation). Completion never waits for a record at To−1.
//
// Errors: an unknown topic wraps ErrUnknownTopic; a range starting below
// the log start offset is a *RetentionGapError (wraps ErrRetentionGap), also
// when the deletion happens while fetching (the consumer never rewinds); a
// range ending past the high watermark wraps ErrRangePastEnd. A range that
// reaches into an open transaction waits until the transaction ends. The
// call honours ctx and is bounded by DefaultFetchTimeout when ctx has no
// deadline; on timeout or cancellation it returns ctx's error and no
// records. The consuming kgo client is borrowed from c's pool (one
// Fetch at a time per client) and returned after a clean Fetch; a
// failed Fetch closes it.
func (c *Client) Fetch(ctx context.Context, topic string, ranges []Range) ([]*kgo.Record, error) {
	states := make(map[int32]*partState, len(ranges))
	seen := make(map[int32]bool, len(ranges))
	for _, r := range ranges {
		if r.Partition < 0 || r.From < 0 || r.To < r.From {
			return nil, fmt.Errorf("kafka: fetch %q: invalid range %+v", topic, r)
		}
		if seen[r.Partition] {
			return nil, fmt.Errorf("kafka: fetch %q: more than one range for partition %d", topic, r.Partition)
		}
		seen[r.Partition] = true
		if r.From < r.To {
			states[r.Partition] = &partState{r: r, next: r.From}
		}
	}
	if len(states) == 0 {
		return nil, nil
	}

	ctx, cancel := withDefault(ctx, DefaultFetchTimeout)
	defer cancel()
	topicID, err := c.checkRanges(ctx, topic, states)
	if err != nil {
		return nil, err
	}

	start := make(map[int32]kgo.Offset, len(states))
	for p, st := range states {
		start[p] = kgo.NewOffset().At(st.r.From)
	}
	fc, err := c.takeConsumer()
	if err != nil {
		return nil, fmt.Errorf("kafka: fetch %q: %w", topic, err)
	}
	fcl := fc.cl
	clean := false
	defer func() { c.giveBack(fc, topic, slices.Sorted(maps.Keys(states)), clean) }()
	fcl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: start})

	pending := len(states)
	now := time.Now()
	for _, st := range states {
		st.progress = now
	}
	for pending > 0 {
		pollCtx, pollCancel := context.WithTimeout(ctx, c.idleProbe)
		fs := fcl.PollFetches(pollCtx)
		pollCancel()
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("kafka: fetch %q: %w", topic, err)
		}
		if err := c.fetchErrors(ctx, topic, fs, states); err != nil {
			return nil, err
		}
		now := time.Now()
		fs.EachRecord(func(r *kgo.Record) {
			st := states[r.Partition]
			if r.Topic != topic || st == nil || st.done || r.Offset < st.next {
				return
			}
			st.next, st.progress = r.Offset+1, now
			if !r.Attrs.IsControl() && r.Offset < st.r.To {
				st.recs = append(st.recs, r)
			}
			if r.Offset >= st.r.To-1 {
				st.done = true
				pending--
				fcl.PauseFetchPartitions(map[string][]int32{topic: {r.Partition}})
			}
		})
		// Partitions idle for a while may have their position past a
		// hole at the end of the range (nothing more will be delivered);
		// ask the broker directly.
		for _, p := range slices.Sorted(maps.Keys(states)) {
			st := states[p]
			if st.done || now.Sub(st.progress) < c.idleProbe {
				continue
			}
			done, err := c.probe(ctx, fcl, topic, topicID, p, st.next, st.r.To)
			if err != nil {
				if ctx.Err() != nil {
					return nil, fmt.Errorf("kafka: fetch %q: %w", topic, ctx.Err())
				}
				if errors.Is(err, kerr.OffsetOutOfRange) {
					return nil, c.retentionGap(ctx, topic, st, err)
				}
				// A failed probe is not fatal: the consumer may still
				// deliver, and the next idle round probes again.
			}
			st.progress = now
			if done {
				st.done = true
				pending--
				fcl.PauseFetchPartitions(map[string][]int32{topic: {p}})
			}
		}
	}

	var out []*kgo.Record
	for _, p := range slices.Sorted(maps.Keys(states)) {
		out = append(out, states[p].recs...)
	}
	clean = true
	return out, nil
}

// checkRanges verifies the topic and every range against the log before
// consuming: partitions exist, no range starts below the log start offset
// (ErrRetentionGap) or ends past the high watermark (ErrRangePastEnd). It
// returns the topic ID (zero when the broker has none) for the probe.
func (c *Client) checkRanges(ctx context.Context, topic string, states map[int32]*partState) ([16]byte, error) {
	var id [16]byte
	tds, err := c.adm.ListTopics(ctx, topic)
	if err != nil {
		return id, fmt.Errorf("kafka: fetch %q: metadata: %w", topic, err)
	}
	td, ok := tds[topic]
	if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
		return id, fmt.Errorf("kafka: fetch: %w", unknownTopic(topic, td.Err))
	}
	if td.Err != nil {
		return id, fmt.Errorf("kafka: fetch %q: metadata: %w", topic, td.Err)
	}
	id = td.ID
	startOffs, err := c.StartOffsets(ctx, topic)
	if err != nil {
		return id, err
	}
	endOffs, err := c.EndOffsets(ctx, topic)
	if err != nil {
		return id, err
	}
	for _, p := range slices.Sorted(maps.Keys(states)) {
		st := states[p]
		logStart, ok := startOffs[p]
		if !ok {
			return id, fmt.Errorf("kafka: fetch %q: partition %d does not exist (topic has %d partitions)", topic, p, len(startOffs))
		}
		if st.r.From < logStart {
			return id, &RetentionGapError{Topic: topic, Partition: p, From: st.r.From, To: min(logStart, st.r.To), LogStart: logStart}
		}
		if hwm := endOffs[p]; st.r.To > hwm {
			return id, fmt.Errorf("kafka: fetch %q partition %d: range [%d, %d) vs high watermark %d: %w",
				topic, p, st.r.From, st.r.To, hwm, ErrRangePastEnd)
		}
	}
	return id, nil
}

// fetchErrors turns the partition errors of one poll into Fetch's error.
// The poll's own timeout is not an error; OFFSET_OUT_OF_RANGE is a
// retention gap (the consumer does not reset).
func (c *Client) fetchErrors(ctx context.Context, topic string, fs kgo.Fetches, states map[int32]*partState) error {
	var first error
	fs.EachError(func(t string, p int32, err error) {
		if first != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return
		}
		st := states[p]
		switch {
		case errors.Is(err, kerr.OffsetOutOfRange) && st != nil:
			first = c.retentionGap(ctx, topic, st, err)
		case errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(err, kerr.UnknownTopicID):
			first = fmt.Errorf("kafka: fetch: %w", unknownTopic(topic, err))
		default:
			first = fmt.Errorf("kafka: fetch %q partition %d: %w", t, p, err)
		}
	})
	return first
}

// retentionGap builds the error for a partition whose next offset fell
// below the log start while fetching.
func (c *Client) retentionGap(ctx context.Context, topic string, st *partState, cause error) error {
	gap := &RetentionGapError{Topic: topic, Partition: st.r.Partition, From: st.next, To: st.r.To, LogStart: -1}
	if starts, err := c.StartOffsets(ctx, topic); err == nil {
		if s, ok := starts[st.r.Partition]; ok {
			gap.LogStart = s
			gap.To = min(max(s, st.next), st.r.To)
		}
	}
	return fmt.Errorf("%w (broker: %w)", gap, cause)
}
