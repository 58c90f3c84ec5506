package sample

import "time"

// Defaults applied by Generate to zero-valued Options fields.
const (
	DefaultTxMaxChanges        = 3
	DefaultStartLSN     uint64 = 0x1000000
)

// DefaultStartTime is the source commit time of the first change when
// Options.StartTime is zero.
var DefaultStartTime = time.Date(2026, 1, 15, 9, 0, 0, 0, time.UTC)

// Options shape a generated stream. Counts below zero count as zero.
type Options struct {
	Seed int64 // same Seed and Options → byte-identical Stream

	// Clean source changes. Updates and Deletes pick keys that are live
	// (inserted and not yet deleted) at that point, so Deletes is capped
	// at Inserts, and Updates are dropped when Inserts is 0.
	Inserts, Updates, Deletes int

	// Faults applied to build Stream.Delivered.
	Duplicates int // exact re-deliveries (same key and value bytes) of already-delivered records, in runs of 1–8 as after connector restarts
	Late       int // change records moved much later (into the last tenth of the stream)
	OutOfOrder int // swaps of two adjacent change records
	// LateAnywhere re-inserts each Late record at a random position after
	// its own anywhere in the rest of the stream instead (late changes all
	// along the stream, not only at its end).
	LateAnywhere bool

	// UnseenDeletes are deletes of keys never inserted in the stream (rows
	// created before the capture started); their order_id values are below
	// every inserted one.
	UnseenDeletes int

	// Tombstones emits a Kafka tombstone (same key, null value) right after
	// each delete, as Debezium does by default (tombstones.on.delete=true).
	Tombstones bool

	// Envelope writes keys and values with JsonConverter
	// schemas.enable=true: {"schema":…,"payload":…}.
	Envelope bool

	// ReplicaIdentityFull gives updates and deletes the full before image.
	// The default (false) is PostgreSQL's default replica identity:
	// updates have before=null, deletes a before image with only order_id
	// set.
	ReplicaIdentityFull bool

	// TxMaxChanges: each source transaction has 1..TxMaxChanges changes
	// (uniformly); its changes share txId, commit time and the sequence's
	// last-commit LSN. 0 means DefaultTxMaxChanges.
	TxMaxChanges int

	StartLSN  uint64    // WAL position the generator starts after; 0 means DefaultStartLSN
	StartTime time.Time // source commit time of the first change; zero means DefaultStartTime
}

func (o Options) normalized() Options {
	for _, n := range []*int{&o.Inserts, &o.Updates, &o.Deletes, &o.Duplicates, &o.Late, &o.OutOfOrder, &o.UnseenDeletes, &o.TxMaxChanges} {
		*n = max(*n, 0)
	}
	o.Deletes = min(o.Deletes, o.Inserts)
	if o.Inserts == 0 {
		o.Updates = 0
	}
	if o.TxMaxChanges == 0 {
		o.TxMaxChanges = DefaultTxMaxChanges
	}
	if o.StartLSN == 0 {
		o.StartLSN = DefaultStartLSN
	}
	if o.StartTime.IsZero() {
		o.StartTime = DefaultStartTime
	}
	return o
}
