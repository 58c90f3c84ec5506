package cdc

// SnapshotMark is Debezium's source.snapshot field: whether the event is a
// source snapshot read, and whether it is the last one.
type SnapshotMark uint8

// Values of source.snapshot. Debezium writes "true", "first", "first_in_data_collection",
// "last_in_data_collection", "last", "incremental" or "false"; they collapse to these.
const (
	SnapshotNone        SnapshotMark = iota // "false" or absent: a streamed change
	SnapshotRow                             // "true", "first", "first_in_data_collection"
	SnapshotLast                            // "last" or "last_in_data_collection": the table's last source snapshot read
	SnapshotIncremental                     // "incremental": a chunk of an incremental source snapshot
)

// Origin is where a change event was read: the Kafka record's coordinates.
type Origin struct {
	Topic     string
	Partition int32
	Offset    int64
}

// Event is one decoded row change.
type Event struct {
	Op       Op
	Seq      Seq   // source position (see Seq)
	Key      Key   // primary key, from the key columns of After (or Before for deletes)
	Before   *Row  // before image; nil when absent
	After    *Row  // after image; nil for deletes
	SourceTs int64 // source commit time, µs since the epoch (source.ts_us, else source.ts_ms×1000); 0 = unknown
	Snapshot SnapshotMark
	TxID     string // source transaction id when known ("" otherwise)
	// TxOrder is the event's data_collection_order from the envelope's
	// transaction block (Debezium provide.transaction.metadata=true;
	// Debezium docs, "Transaction metadata"): its place, from 1, among
	// its transaction's events of its data collection, the same when the
	// event is redelivered. 0 when the event has no transaction block.
	TxOrder int64
	// SourceServer is a MySQL or MariaDB change's source.server_id, the
	// server whose binlog gave its position (Seq); "" for other
	// connectors and for snapshot reads and direct loads (server_id 0).
	// Binlog positions of two servers do not order against each other
	// (docs/design.md, rule 1).
	SourceServer string
	// Collection is the event's data collection, the name Debezium's
	// transaction metadata gives its source table (DataCollection of the
	// source block's connector, db, schema and table); "" when the
	// connector's form is unknown or the record carries no such fields
	// (a flattened record without them, a direct load's row).
	Collection string
	Origin     Origin
	// Schema is the row image's column list from the Connect schema
	// envelope ({schema, payload}) or a declared table definition; nil
	// when the record carried no schema. Events decoded with the same
	// schema share one slice.
	Schema []Column
	// OldKey is, for the create that a primary-key update produces, the
	// key the row had before (Debezium's __debezium.oldkey header); ""
	// otherwise. Values the create leaves unavailable (TOAST) are the old
	// row's.
	OldKey Key
	// NewKey is, for the old key's delete that a primary-key update
	// produces, the key the row has after it (Debezium's
	// __debezium.newkey header); "" otherwise. A change of the old key
	// below that delete that arrives after it (late, or redelivered)
	// changes what the new key's create took (its TOAST placeholders).
	NewKey Key
}

// Image returns the image that holds the row's columns: After for
// creates, updates and reads, Before for deletes.
func (e *Event) Image() *Row {
	if e.Op == OpDelete {
		return e.Before
	}
	return e.After
}
