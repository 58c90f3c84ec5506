package kafka

import (
	"context"
	"fmt"
)

// TxRecord is one decoded record of a transaction metadata topic.
type TxRecord[T any] struct {
	Partition int32
	Offset    int64
	Value     T // what the decoder made of the record's value
}

// KeptRecord is a record the decoder refused, kept as it came: never
// dropped, so that the caller can count it, show it and stop on it.
type KeptRecord struct {
	Partition int32
	Offset    int64
	Key       []byte // as in Kafka; nil when the record has none
	Value     []byte // as in Kafka; nil for a tombstone
	Reason    string // the decoder's error
}

// TxTopicRead is what ReadTransactionTopic read: every data record of the
// ranges, each either in Records or in Kept, both in partition order then
// offset order.
type TxTopicRead[T any] struct {
	Records []TxRecord[T]
	Kept    []KeptRecord
}

// Undecodable is the number of records the decoder refused (len(Kept)).
func (r TxTopicRead[T]) Undecodable() int { return len(r.Kept) }

// ReadTransactionTopic reads exactly the committed data records of the
// given offset ranges of a transaction metadata topic (Debezium
// provide.transaction.metadata=true, topic <topic.prefix>.transaction:
// one BEGIN and one END record per source transaction; Debezium docs,
// "Transaction metadata") and decodes each value with decode, which the
// caller gives as schemas.DecodeTransaction (packages under internal/ do
// not import schemas: docs/design.md, "Layout").
//
// Ranges are Fetch's: half-open [From, To) per partition, at most one per
// partition, empty ones ignored; reading is Fetch's, with its exactness
// (read_committed, offsets with no data record skipped, never a silent
// rewind) and its errors (ErrUnknownTopic, *RetentionGapError,
// ErrRangePastEnd, ctx's error). On an error nothing is returned.
//
// A record that decode refuses (an error, a tombstone included: decode
// gets its nil value) is not dropped: it is returned in Kept with its
// partition, offset, key, raw value and decode's error text, and counted
// by Undecodable. decode must not keep the slice it is given beyond the
// call.
func ReadTransactionTopic[T any](ctx context.Context, c *Client, topic string, ranges []Range, decode func(value []byte) (T, error)) (TxTopicRead[T], error) {
	var out TxTopicRead[T]
	recs, err := c.Fetch(ctx, topic, ranges)
	if err != nil {
		return out, fmt.Errorf("kafka: transaction topic: %w", err)
	}
	for _, r := range recs {
		v, err := decode(r.Value)
		if err != nil {
			out.Kept = append(out.Kept, KeptRecord{Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value, Reason: err.Error()})
			continue
		}
		out.Records = append(out.Records, TxRecord[T]{Partition: r.Partition, Offset: r.Offset, Value: v})
	}
	return out, nil
}
