package schemas

import (
	"fmt"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// Record is one Kafka record as read from the topic (payload.Record:
// topic, partition, offset, key, value, timestamp in µs, headers).
type Record = payload.Record

// Header is one Kafka record header (payload.Header).
type Header = payload.Header

// RecordKind classifies a decoded record.
type RecordKind uint8

// The record kinds.
const (
	// KindChange is a row change (op c, u, d or r); Decoded.Event is set.
	KindChange RecordKind = iota
	// KindTombstone is a null value: the Kafka tombstone Debezium writes
	// after a delete so that log compaction can drop the key. Counted and
	// skipped; the delete event before it carries the change.
	KindTombstone
	// KindTxMetadata is a Debezium transaction metadata event
	// (provide.transaction.metadata=true: status BEGIN/END, id,
	// event_count, data_collections). Recognized, not a row.
	KindTxMetadata
	// KindTruncate is op "t": Decoded.Event is set with Op = cdc.OpTruncate,
	// no key and no images.
	KindTruncate
)

// String names the kind.
func (k RecordKind) String() string {
	switch k {
	case KindChange:
		return "change"
	case KindTombstone:
		return "tombstone"
	case KindTxMetadata:
		return "tx-metadata"
	case KindTruncate:
		return "truncate"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Decoded is the outcome of decoding one Record.
type Decoded struct {
	Kind RecordKind
	// Event is set for KindChange and KindTruncate; its Origin is the
	// Record's topic, partition and offset.
	Event *cdc.Event
	// RawOp is the op string as received ("" for tombstones and
	// transaction metadata; for a flattened record without __op, the op
	// the decoder derived).
	RawOp string
	// OldKey and NewKey are the raw values of the record's
	// __debezium.oldkey and __debezium.newkey headers, nil when absent.
	// Debezium emits a primary-key change as a delete of the old key
	// carrying __debezium.newkey and a create of the new key carrying
	// __debezium.oldkey; the values are serialized like Kafka keys (JSON
	// or Avro), see Decoder.DecodeKey. They alias the Record's headers.
	OldKey, NewKey []byte
	// Headers are the Record's headers, in order (aliased, not copied).
	Headers []Header
	// SourceTsFromKafka: the record gave no source commit time
	// (source.ts_us and ts_ms 0 or missing, and no envelope ts_us/ts_ms),
	// so Event.SourceTs is the Kafka record timestamp (Record.Timestamp)
	// instead: when the record was produced (Kafka Connect's CreateTime) or
	// appended (LogAppendTime), at or after the commit.
	SourceTsFromKafka bool
}

// DecodeError is returned for a record that cannot be decoded: malformed
// JSON, a field of the wrong JSON type, an unknown op or connector, a
// missing position, a value that does not fit its column type. It keeps
// the record's coordinates so that the record can be found and inspected.
type DecodeError struct {
	Topic     string
	Partition int32
	Offset    int64
	Reason    string
}

// Error renders "schemas: topic[partition]@offset: reason".
func (e *DecodeError) Error() string {
	return fmt.Sprintf("schemas: cannot decode %s[%d]@%d: %s", e.Topic, e.Partition, e.Offset, e.Reason)
}

// RegistryError is returned when an Avro record's schema could not be
// fetched from the schema registry for a reason other than the id being
// unknown (the registry is unreachable, times out, answers 5xx). The
// record itself may be fine: retry rather than quarantine it. An unknown
// schema id is a *DecodeError.
type RegistryError struct {
	Topic     string
	Partition int32
	Offset    int64
	SchemaID  int
	Err       error
}

// Error renders "schemas: schema registry: topic[partition]@offset: schema id N: err".
func (e *RegistryError) Error() string {
	return fmt.Sprintf("schemas: schema registry: %s[%d]@%d: schema id %d: %v", e.Topic, e.Partition, e.Offset, e.SchemaID, e.Err)
}

// Unwrap returns the registry client's error.
func (e *RegistryError) Unwrap() error { return e.Err }

func decodeErr(rec *Record, err error) *DecodeError {
	return &DecodeError{Topic: rec.Topic, Partition: rec.Partition, Offset: rec.Offset, Reason: err.Error()}
}
