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
