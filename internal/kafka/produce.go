package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Produce writes recs and waits until every one is acknowledged. Each
// record needs Topic; Key, Value (nil = tombstone), Headers and Timestamp
// (zero = now) are sent as given. Partition is chosen by key unless the
// Client was made with ManualPartitioner(), in which case Record.Partition
// is used as is. Records to the same partition are appended in argument
// order (the producer is idempotent, so retries do not reorder or
// duplicate). On return the records' Partition and Offset fields hold
// where they were written. The error is the first failure; records without
// an error were written. An unknown topic error wraps ErrUnknownTopic.
func (c *Client) Produce(ctx context.Context, recs ...*kgo.Record) error {
	for i, r := range recs {
		if r == nil || r.Topic == "" {
			return fmt.Errorf("kafka: produce: record %d has no topic", i)
		}
	}
	if len(recs) == 0 {
		return nil
	}
	ctx, cancel := withDefault(ctx, DefaultAdminTimeout)
	defer cancel()
	for _, res := range c.cl.ProduceSync(ctx, recs...) {
		if res.Err == nil {
			continue
		}
		if errors.Is(res.Err, kerr.UnknownTopicOrPartition) {
			return fmt.Errorf("kafka: produce to %q partition %d: %w", res.Record.Topic, res.Record.Partition, unknownTopic(res.Record.Topic, res.Err))
		}
		return fmt.Errorf("kafka: produce to %q: %w", res.Record.Topic, res.Err)
	}
	return nil
}
