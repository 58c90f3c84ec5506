package lakecat

// Keys of the exactly-once bookkeeping (docs/design.md, "Exactly-once batch
// bookkeeping"). Each is written both into the snapshot summary of the
// batch's commit and into the table properties; properties survive
// compaction snapshots and snapshot expiry, summaries show per-commit
// history in any Iceberg tool.
const (
	PropBatchID     = "lakemirror.batch-id"     // "<table>#<seq>"
	PropBatchSeq    = "lakemirror.batch-seq"    // decimal batch sequence number, strictly increasing per table
	PropEndOffsets  = "lakemirror.end-offsets"  // JSON Offsets: next offset per partition after the batch
	PropBatchResult = "lakemirror.batch-result" // JSON of the batch's counts (MirrorResult or BronzeResult)
	PropCovered     = "lakemirror.covered"      // bronze only: JSON {topic: Coverage} of the offsets it holds
	PropKeyColumns  = "lakemirror.key-columns"  // mirror: JSON array of key column names
	PropTopic       = "lakemirror.topic"        // the source Kafka topic
	PropBatchTally  = "lakemirror.batch-tally"  // JSON BatchTally: the batch's records as counted before its commits
)

// PropAppliedPosition is the mirror's applied position: the highest `_seq`
// any batch or load chunk has applied to it (hex), carried by each such
// commit's snapshot summary and the table properties. A table whose
// commits predate it starts at the highest `_seq` its mirror rows hold. Unlike a batch's
// own watermark (MirrorResult.Watermark, which is lower for a batch of
// late events) it never moves back; validation checks that it does not.
const PropAppliedPosition = "lakemirror.applied-position"

// PropReadPosition is, on the mirror, the highest commit position any
// PostgreSQL source snapshot read it applied shows (hex): a read at
// (0, L) (cdc.PostgresReadLSN: Debezium's initial and blocking snapshot
// reads) holds the row as of every transaction committed at or below L,
// so it counts as (L, 0), although its `_seq` sorts below every streamed
// change and leaves PropAppliedPosition alone. A consistent cut at a W
// below it is not in the mirror (cuts.Publish). It never moves back;
// absent until such a read is applied.
const PropReadPosition = "lakemirror.read-position"

// PropFetchedPast is, on the mirror, per Kafka partition the highest position its applied batches showed the
// partition complete up to (JSON {partition: hex}; cdc.FetchedPast):
// no change at or below it can still come on that partition. Each
// batch's BatchTally.FetchedPast is merged in (the highest per
// partition); it never moves back. A table started again reports it
// to its group before its first batch (a quiet table would otherwise
// hold the group's cut at transactions it applied before it joined), so
// every Kafka batch records it, with or without a group. Absent before
// the first such batch (and on mirrors written before 2026-12-07).
const PropFetchedPast = "lakemirror.fetched-past"

// PropNewestTx is, on the mirror, per Kafka partition the newest streamed change event it applied there that has
// a transaction id and a data_collection_order: JSON {partition:
// payload.TxAt} (payload.MergeNewestTx of its batches'). A table whose
// topic has one partition has applied every event of that transaction's
// data collection up to it (Debezium numbers them in the order it writes
// them), which a table started again reports to its group: its events
// were not reported when it applied them. Every Kafka batch records it,
// with or without a group; absent while no event had a transaction
// block (Debezium provide.transaction.metadata=false).
const PropNewestTx = "lakemirror.newest-tx"

// PropPendingRebuild is, on the mirror and the history table, the keys
// whose history awaits a rebuild from bronze: a JSON array of hex keys
// (ReadPending, PendingJSON).
const PropPendingRebuild = "lakemirror.pending-rebuild"

// PropBatchLateKeys is, on the mirror of a table with a history, what the
// history needs of the mirror's view of the batch its last batch commit
// applied (PropBatchSeq) to extend each key exactly as the first attempt
// would have: the keys with a change at or below their mirror `_seq`
// before the batch (late or redelivered) with that `_seq`, and the keys
// the history sends to the late-key rebuild (MySQL keys going back in
// position, key-change creates to fill again). JSON BatchLateKeys. A
// history commit retried after that mirror commit (a worker killed
// between the two) reads it: every key it does not name follows the
// history's versions.
const PropBatchLateKeys = "lakemirror.batch-late-keys"

// PropLoadCursor records how far a direct initial load (or re-snapshot)
// from the source database got: JSON LoadCursor, written with each
// chunk's commit. A retried load resumes after it.
const PropLoadCursor = "lakemirror.load-cursor"

// PropPurgeHorizon is the highest `_seq` among the soft-deleted rows the
// tombstone purges removed (hex): only a change at or below it for a key
// absent from the mirror can resurrect a purged row, and whether it does
// is decided per key by the purged-keys table (internal/lake's purged.go).
const PropPurgeHorizon = "lakemirror.purge-horizon"

// PropPurgeLegacy is the purge horizon (hex `_seq`) reached by purges made
// before purged keys were recorded per key (mirror table property).
const PropPurgeLegacy = "lakemirror.purge-horizon-legacy"
