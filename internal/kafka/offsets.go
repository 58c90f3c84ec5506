package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// EndOffsets returns the high watermark of every partition of topic: one
// past the last offset written (not only the last committed one: an open
// transaction's records count). An error wraps ErrUnknownTopic when the
// topic does not exist.
func (c *Client) EndOffsets(ctx context.Context, topic string) (map[int32]int64, error) {
	return c.listOffsets(ctx, topic, "end offsets", func(ctx context.Context) (kadm.ListedOffsets, error) {
		return c.adm.ListEndOffsets(ctx, topic)
	})
}

// StartOffsets returns the log start offset of every partition of topic:
// the oldest offset still readable (records below it were deleted by
// retention or DeleteRecords). An error wraps ErrUnknownTopic when the
// topic does not exist.
func (c *Client) StartOffsets(ctx context.Context, topic string) (map[int32]int64, error) {
	return c.listOffsets(ctx, topic, "start offsets", func(ctx context.Context) (kadm.ListedOffsets, error) {
		return c.adm.ListStartOffsets(ctx, topic)
	})
}

// OffsetsAfterTime returns, per partition of topic, the first offset whose
// record timestamp is at or after ts (Kafka's offset-for-time lookup, at
// millisecond precision; ts is truncated to the millisecond). A partition
// with no such record gets its high watermark. An error wraps
// ErrUnknownTopic when the topic does not exist.
func (c *Client) OffsetsAfterTime(ctx context.Context, topic string, ts time.Time) (map[int32]int64, error) {
	return c.listOffsets(ctx, topic, "offsets after "+ts.UTC().Format(time.RFC3339Nano), func(ctx context.Context) (kadm.ListedOffsets, error) {
		return c.adm.ListOffsetsAfterMilli(ctx, ts.UnixMilli(), topic)
	})
}

func (c *Client) listOffsets(ctx context.Context, topic, what string, list func(context.Context) (kadm.ListedOffsets, error)) (map[int32]int64, error) {
	ctx, cancel := withDefault(ctx, DefaultAdminTimeout)
	defer cancel()
	listed, err := list(ctx)
	if err != nil {
		return nil, fmt.Errorf("kafka: list %s of %q: %w", what, topic, err)
	}
	parts, ok := listed[topic]
	if !ok || len(parts) == 0 {
		return nil, fmt.Errorf("kafka: list %s: %w", what, unknownTopic(topic, nil))
	}
	out := make(map[int32]int64, len(parts))
	for p, o := range parts {
		if o.Err != nil {
			if errors.Is(o.Err, kerr.UnknownTopicOrPartition) || errors.Is(o.Err, kerr.UnknownTopicID) {
				return nil, fmt.Errorf("kafka: list %s: %w", what, unknownTopic(topic, o.Err))
			}
			return nil, fmt.Errorf("kafka: list %s of %q partition %d: %w", what, topic, p, o.Err)
		}
		out[p] = o.Offset
	}
	return out, nil
}

// EndOffsetsOf lists the high watermarks of many topics in one
// ListOffsets round (kadm.ListEndOffsets, one request per partition
// leader), for callers that watch many tables' topics at once (the lag
// scrape, idle tables' waits). ends maps each readable topic to its
// partitions' high watermarks; errs holds, per topic that could not be
// listed, why (wrapping ErrUnknownTopic for a missing topic). err is set
// only when the request as a whole failed; then ends and errs are nil.
func (c *Client) EndOffsetsOf(ctx context.Context, topics []string) (ends map[string]map[int32]int64, errs map[string]error, err error) {
	if len(topics) == 0 {
		return map[string]map[int32]int64{}, map[string]error{}, nil
	}
	ctx, cancel := withDefault(ctx, DefaultAdminTimeout)
	defer cancel()
	listed, err := c.adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, nil, fmt.Errorf("kafka: list end offsets of %d topics: %w", len(topics), err)
	}
	ends, errs = make(map[string]map[int32]int64, len(topics)), map[string]error{}
	for _, topic := range topics {
		parts, ok := listed[topic]
		if !ok || len(parts) == 0 {
			errs[topic] = fmt.Errorf("kafka: list end offsets: %w", unknownTopic(topic, nil))
			continue
		}
		out := make(map[int32]int64, len(parts))
		for p, o := range parts {
			if o.Err != nil {
				if errors.Is(o.Err, kerr.UnknownTopicOrPartition) || errors.Is(o.Err, kerr.UnknownTopicID) {
					errs[topic] = fmt.Errorf("kafka: list end offsets: %w", unknownTopic(topic, o.Err))
				} else {
					errs[topic] = fmt.Errorf("kafka: list end offsets of %q partition %d: %w", topic, p, o.Err)
				}
				out = nil
				break
			}
			out[p] = o.Offset
		}
		if out != nil {
			ends[topic] = out
		}
	}
	return ends, errs, nil
}
