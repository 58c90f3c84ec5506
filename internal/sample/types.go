package sample

import "github.com/lakemirror/lakemirror/internal/cdc"

// Topic is the Kafka topic Debezium writes the orders table to.
const Topic = "shop.public.orders"

// Message is one Kafka record of the stream.
type Message struct {
	Key, Value []byte  // JSON; Value nil = tombstone
	Op         byte    // 'c', 'u', 'd', or 0 for a tombstone
	OrderID    int64   // the key's order_id
	Seq        cdc.Seq // streamSeq(last commit LSN, lsn) of the change (cdc.PostgresSeq rules); "" for tombstones
}

// Tombstone reports whether m is a tombstone (null value).
func (m Message) Tombstone() bool { return m.Value == nil }

// Stream is a generated change stream.
type Stream struct {
	// Clean holds every source change exactly once, in source commit
	// order, each delete followed by its tombstone when
	// Options.Tombstones.
	Clean []Message
	// Delivered is Clean with the faults applied (duplicates, late and
	// out-of-order records): what a consumer really sees. Its messages
	// share their Key and Value bytes with Clean's.
	Delivered []Message
}

// Row is one row of the expected mirror table.
type Row struct {
	OrderID         int64
	Customer        string  // "" when unknown (a delete of a never-seen key without values)
	Status          string  // as Customer
	Amount          string  // decimal text with two digits, e.g. "25.50"; "" when unknown
	Note            *string // nil = NULL
	UpdatedAtMicros int64   // updated_at, µs since the epoch (UTC); 0 when unknown
	Deleted         bool    // soft-deleted
	Seq             cdc.Seq // position of the row's last change
	SourceTsMicros  int64   // source commit time of that change (source.ts_us), µs since the epoch
}
