package payload

import (
	"maps"
	"slices"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// BatchTally counts what a batch's Kafka records were, once, before any of
// its commits: every commit of the batch (bronze, mirror, history) carries
// it under lakecat.PropBatchTally in its snapshot summary and the table
// properties, so a retried batch found committed (lakecat.FindCommitted) reports
// the same counts as the attempt that committed it. Counts are records.
type BatchTally struct {
	Records      int  `json:"records"`       // Kafka records of the batch
	Changes      int  `json:"changes"`       // row-change events decoded (c, u, d, r)
	Tombstones   int  `json:"tombstones"`    // null-value records
	TxMetadata   int  `json:"tx_metadata"`   // transaction metadata events
	Quarantined  int  `json:"quarantined"`   // records kept in the quarantine table (the decoder's and Prepare's)
	SnapshotRows int  `json:"snapshot_rows"` // changes that are source snapshot reads
	SnapshotLast bool `json:"snapshot_last,omitempty"`
	// SnapshotOpen: the batch ends in the middle of a source snapshot
	// (Debezium's initial or blocking snapshot): on some partition its
	// newest change event is a read whose source.snapshot is not "last"
	// or "last_in_data_collection". Such a table is not at any
	// consistent cut (cuts.Publish refuses it). A batch without change
	// events on that partition does not carry it on.
	SnapshotOpen bool `json:"snapshot_open,omitempty"`
	// SourceTsFromKafka counts the changes whose _source_ts is their Kafka
	// record timestamp: the source gave no commit time (source.ts_ms 0 or
	// missing, and no envelope ts_ms).
	SourceTsFromKafka int `json:"source_ts_from_kafka,omitempty"`
	// FetchedPast is, per partition the batch read change events of, the highest position its change events
	// show the partition complete up to (cdc.FetchedPast; hex): the
	// mirror keeps the highest per partition (lakecat.PropFetchedPast),
	// so that a table started again reports it to its group before its
	// first batch (so it is kept with or without a group). Nil for a
	// direct load's chunk.
	FetchedPast map[int32]string `json:"fetched_past,omitempty"`
	// NewestTx is the batch's GroupProgress.NewestTx: the mirror keeps
	// it per partition (lakecat.PropNewestTx). Nil when no change event
	// has a transaction block.
	NewestTx map[int32]TxAt `json:"newest_tx,omitempty"`
}

// Offsets maps partition → offset within one topic (Kafka offsets: the
// next offset to read, or a high watermark or log start where named).
type Offsets map[int32]int64

// SortedPartitions returns the partitions of o in ascending order.
func (o Offsets) SortedPartitions() []int32 {
	return slices.Sorted(maps.Keys(o))
}

// Range is a half-open offset range [From, To) of one partition.
type Range struct {
	Partition int32 `json:"partition"`
	From      int64 `json:"from"`
	To        int64 `json:"to"`
}

// Batch identifies one micro-batch of one table: its id and strictly
// increasing sequence number, the topic and exact offset ranges it covers,
// and the offsets to continue from after it (EndOffsets: for every
// partition the pipeline tracks, not only those in Ranges).
type Batch struct {
	ID         string  `json:"id"`
	Seq        int64   `json:"seq"`
	Topic      string  `json:"topic"`
	Ranges     []Range `json:"ranges"`
	EndOffsets Offsets `json:"end_offsets"`
	// Load, for a chunk of a direct load from the source database, is the
	// load's progress including this chunk. Such a batch leaves the Kafka
	// bookkeeping alone (no batch-seq or offsets): its exactly-once is the
	// cursor, which a retried load resumes after.
	Load *LoadCursor `json:"load,omitempty"`
	// Tally is the batch's record counts, set by the writer before its
	// commits (lake.TableWriter.Write); nil in a plan. Not part of the batch's
	// identity.
	Tally *BatchTally `json:"tally,omitempty"`
}

// LoadCursor is the progress of one direct load, recorded with each
// chunk's commit under lake.PropLoadCursor.
type LoadCursor struct {
	ID    string    `json:"id"`    // the load's id (one per initial load or re-snapshot)
	LSN   uint64    `json:"lsn"`   // source position of the first part's snapshot: `_seq` word of its rows
	Read  int64     `json:"read"`  // rows committed so far
	After []KeyPart `json:"after"` // key of the last committed row
	Done  bool      `json:"done"`
	// Snapshots are the table's direct re-snapshot reads, oldest first:
	// those of earlier re-snapshots (carried over by every later load)
	// and this load's (one per part: a resumed load reads at a new
	// snapshot). The mirror lifts the streamed changes each one did not
	// see above its rows (Snapshots, cdc.PostgresSnapshot.Lift).
	Snapshots []cdc.PostgresSnapshot `json:"snapshots,omitempty"`
}

// KeyPart is one key column value in a cursor, JSON-safe.
type KeyPart struct {
	Kind  cdc.Kind `json:"k"`
	Scale int16    `json:"sc,omitempty"`
	I     int64    `json:"i,omitempty"`
	S     []byte   `json:"s,omitempty"`
}

// KeyParts converts key values for a cursor (KeyPart per value, in
// order); LoadCursor.Values converts them back.
func KeyParts(vals []cdc.Value) []KeyPart {
	out := make([]KeyPart, len(vals))
	for i, v := range vals {
		out[i] = KeyPart{Kind: v.Kind, Scale: v.Scale, I: v.I, S: []byte(v.S)}
	}
	return out
}

// Values converts a cursor's key (After) back to key values; nil for a
// nil cursor or an empty key.
func (c *LoadCursor) Values() []cdc.Value {
	if c == nil || len(c.After) == 0 {
		return nil
	}
	out := make([]cdc.Value, len(c.After))
	for i, p := range c.After {
		out[i] = cdc.Value{Kind: p.Kind, Scale: p.Scale, I: p.I, S: string(p.S)}
	}
	return out
}
