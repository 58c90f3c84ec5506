package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// CreateTopic creates topic with the given number of partitions and the
// broker's default replication factor and configs. It is idempotent: a
// topic that already exists (whatever its partition count) is not an
// error.
func (c *Client) CreateTopic(ctx context.Context, topic string, partitions int32) error {
	if topic == "" || partitions <= 0 {
		return fmt.Errorf("kafka: create topic %q: need a name and a positive partition count (got %d)", topic, partitions)
	}
	ctx, cancel := withDefault(ctx, DefaultAdminTimeout)
	defer cancel()
	resp, err := c.adm.CreateTopic(ctx, partitions, -1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("kafka: create topic %q: %w", topic, err)
	}
	return nil
}

// Topics lists the cluster's topics, sorted, without Kafka's internal
// ones (__consumer_offsets, __transaction_state). Errors: the metadata
// request's.
func (c *Client) Topics(ctx context.Context) ([]string, error) {
	ctx, cancel := withDefault(ctx, DefaultAdminTimeout)
	defer cancel()
	tds, err := c.adm.ListTopics(ctx)
	if err != nil {
		return nil, fmt.Errorf("kafka: list topics: %w", err)
	}
	return tds.Names(), nil
}
