package payload

// Record is one Kafka record as read from its topic: the one type of a
// record from the fetch (activities converts franz-go's kgo.Record at
// the Kafka boundary) through the decoder (schemas.Record is this type)
// to the bronze table (lake.BronzeRecord embeds it, with what decoding
// found) and back (lake.BronzeRow is a BronzeRecord read from bronze).
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte // nil when absent
	Value     []byte // nil = Kafka tombstone
	Timestamp int64  // Kafka record timestamp, µs since the epoch
	Headers   []Header
}

// Header is one Kafka record header (schemas.Header, lake.BronzeHeader).
type Header struct {
	Key   string
	Value []byte
}
