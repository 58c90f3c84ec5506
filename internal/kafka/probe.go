package kafka

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// probeRounds bounds the direct fetches of one probe (each reads up to
// probeMaxBytes of log).
const (
	probeRounds   = 16
	probeMaxBytes = 1 << 20
)

// probe learns the read_committed fetch position of topic/partition from
// offset from, by fetching directly from the partition leader without
// waiting and running the response through kgo.ProcessFetchPartition (which
// advances past aborted records, control markers and compacted-away
// offsets exactly as the consumer does). It reports done when the position
// reaches to with no data record in [from, to): then the consumer, whose
// position is the same, will never deliver another record of the range. A
// data record below to means the consumer simply has not delivered it yet
// (done = false). An error response is returned as its kerr error.
func (c *Client) probe(ctx context.Context, fcl *kgo.Client, topic string, topicID [16]byte, partition int32, from, to int64) (bool, error) {
	offset := from
	for range probeRounds {
		if offset >= to {
			return true, nil
		}
		leader, _, err := fcl.PartitionLeader(topic, partition)
		if err != nil {
			return false, err
		}
		if leader < 0 {
			return false, nil // metadata not loaded yet
		}
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.MaxWaitMillis = 0
		req.MinBytes = 1
		req.MaxBytes = probeMaxBytes
		req.IsolationLevel = 1 // read_committed
		req.SessionID = 0
		req.SessionEpoch = -1 // a full, sessionless fetch
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = topic
		rt.TopicID = topicID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = partition
		rp.FetchOffset = offset
		rp.PartitionMaxBytes = probeMaxBytes
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)

		c.probes.Add(1)
		// Sent through the shared client: fcl's fetch connection is busy
		// with its own long poll, and a broker answers one connection's
		// requests in order.
		kresp, err := c.cl.Broker(int(leader)).Request(ctx, req)
		if err != nil {
			return false, err
		}
		resp := kresp.(*kmsg.FetchResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return false, err
		}
		var part *kmsg.FetchResponseTopicPartition
		for i := range resp.Topics {
			t := &resp.Topics[i]
			if t.Topic != topic && t.TopicID != topicID {
				continue
			}
			for j := range t.Partitions {
				if t.Partitions[j].Partition == partition {
					part = &t.Partitions[j]
				}
			}
		}
		if part == nil {
			return false, fmt.Errorf("kafka: probe %s/%d: partition missing from fetch response", topic, partition)
		}
		if err := kerr.ErrorForCode(part.ErrorCode); err != nil {
			return false, err
		}
		fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
			KeepControlRecords: true,
			Offset:             offset,
			IsolationLevel:     kgo.ReadCommitted(),
			Topic:              topic,
			Partition:          partition,
		}, part, kgo.DefaultDecompressor(), nil)
		if fp.Err != nil {
			return false, fp.Err
		}
		for _, r := range fp.Records {
			if !r.Attrs.IsControl() && r.Offset < to {
				return false, nil
			}
		}
		if next >= to {
			return true, nil
		}
		if next <= offset {
			return false, nil // caught up below to: waiting for more log or for a transaction to end
		}
		offset = next
	}
	return false, nil
}
