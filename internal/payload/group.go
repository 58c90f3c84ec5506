package payload

import "time"

// GroupReadRequest asks for the next range of a source group's
// transaction metadata topic (ActivityReadGroupTransactions;
// docs/design.md, "Consistent cuts across a source group").
type GroupReadRequest struct {
	Group string `json:"group"` // the group's name (TableSpec.Group)
	Topic string `json:"topic"` // its transaction topic (TableSpec.TransactionTopic)
	// From is where the read starts: the group's next offset per
	// partition (the offset after the last record it took, or a held
	// record's). A partition absent is read from its log start.
	From Offsets `json:"from,omitempty"`
	// MaxRecords bounds the records one read takes (0: GroupReadMax);
	// the rest is the next read's (GroupReadResult.More).
	MaxRecords int `json:"max_records,omitempty"`
}

// GroupReadMax is the most records one read of a transaction topic takes
// unless the request says otherwise.
const GroupReadMax = 10_000

// GroupEnd is one END record of a transaction topic, decoded: the
// transaction's id, its commit position in the tables' `_seq` layout
// (cut.CommitPosition) and its change events per data collection.
type GroupEnd struct {
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	ID        string `json:"id"`     // the END's `id`, as the connector writes it (PostgreSQL "txId:LSN")
	Commit    string `json:"commit"` // commit position, hex (cdc.Seq.Hex)
	// Counts is `data_collections`: data collection ("schema.table", as
	// the connector names it) → event count.
	Counts map[string]int64 `json:"counts,omitempty"`
	TsMs   int64            `json:"ts_ms"` // the END's `ts_ms`, milliseconds since the epoch
}

// GroupKept is a record of the transaction topic that was not taken: its
// value does not decode (schemas.DecodeTransaction's error, a tombstone
// included), or an END whose id gives no commit position
// (cut.CommitPosition's error). It holds the group's cut where it is: an
// END skipped would let the cut pass a transaction not yet applied.
type GroupKept struct {
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Reason    string `json:"reason"`
	// Value is the record's value as text, cut to its first 512 bytes
	// (transaction metadata: ids and counts, no row content); "" for a
	// tombstone.
	Value string `json:"value,omitempty"`
}

// GroupReadResult is what one read of the transaction topic found.
type GroupReadResult struct {
	// Ends are the END records read before the first kept record, in
	// offset order (the topic's one partition: commit order).
	Ends []GroupEnd `json:"ends,omitempty"`
	// Begins counts the BEGIN records taken (they play no part in the
	// cut).
	Begins int `json:"begins,omitempty"`
	// Kept are the records of the range that do not decode, and the END
	// at which the read stopped (no commit position), in offset order;
	// the first holds the read: the records after it are not taken, Next
	// stays at it, and every later read starts there until it is taken.
	Kept []GroupKept `json:"kept,omitempty"`
	// Next is where the next read starts: the offset after the last
	// record taken, or the first kept record's.
	Next Offsets `json:"next"`
	// EndOffsets are the topic's end offsets as the read found them.
	EndOffsets Offsets `json:"end_offsets"`
	// More: records between Next and EndOffsets are left for the next
	// read (MaxRecords reached; never when a kept record holds it).
	More bool `json:"more,omitempty"`
	// Connector is the source connector the ENDs' ids show
	// (cut.IDConnector: "postgresql", "sqlserver"); "" when no END was
	// read.
	Connector string `json:"connector,omitempty"`
}

// CutRetention is how long the tags `cut-<n>` of a published cut are
// kept (their max-ref-age-ms): snapshot expiry keeps a tagged Iceberg
// snapshot until its tag is older than this, then drops the tag.
const CutRetention = 7 * 24 * time.Hour

// PublishCutRequest asks to publish a source group's consistent cut in
// its tables (ActivityPublishCut; docs/design.md, "How readers get W:
// tags"): every table of Tables is held at W by its workflow while it
// runs.
type PublishCutRequest struct {
	Group      string   `json:"group"`
	Number     int64    `json:"number"`          // the cut's number: its tag is cut-<n>
	W          string   `json:"w"`               // the source commit position (hex, the tables' _seq)
	TxID       string   `json:"tx_id,omitempty"` // the END at W's transaction id
	SourceTsMs int64    `json:"source_ts_ms,omitempty"`
	Tables     []string `json:"tables"` // the lakemirror tables (namespace.table)
	// PerPosition: a cut per position (a group without a transaction
	// topic): every change at or below W and none above; a transaction
	// may straddle W. Written to `_cuts` (per_position).
	PerPosition bool `json:"per_position,omitempty"`
}

// CutTagged is one table's Iceberg snapshots a published cut tagged.
type CutTagged struct {
	Table   string `json:"table"`
	Mirror  int64  `json:"mirror_snapshot_id"`
	History int64  `json:"history_snapshot_id,omitempty"` // 0: no history table
}

// PublishCutResult is what a published cut tagged, per table (sorted).
type PublishCutResult struct {
	Tagged []CutTagged `json:"tagged"`
	// Recorded is set when the cut's number was already recorded in the
	// group table at another W (an attempt given up after its `_cuts`
	// rows were appended: cuts.Publish, asRecorded): the cut as recorded,
	// whose W the tags hold; the group records that one. nil otherwise.
	Recorded *RecordedCut `json:"recorded,omitempty"`
}

// RecordedCut is a cut as the group table `<ns>._cuts` records it.
type RecordedCut struct {
	W           string `json:"w"`
	TxID        string `json:"tx_id,omitempty"`
	SourceTsMs  int64  `json:"source_ts_ms,omitempty"`
	PerPosition bool   `json:"per_position,omitempty"`
}

// LeaveGroupRequest takes a table out of its source group's cuts
// (ActivityLeaveGroup): the tag `consistent` is removed from its mirror
// and history (the group's later cuts do not include it); its `cut-<n>`
// tags stay.
type LeaveGroupRequest struct {
	Group string `json:"group"`
	Table string `json:"table"` // namespace.table
}

// LeaveGroupResult names the Iceberg tables whose `consistent` tag was
// removed ("namespace.table", "namespace.table_history"; none when
// neither had one).
type LeaveGroupResult struct {
	Untagged []string `json:"untagged,omitempty"`
}
