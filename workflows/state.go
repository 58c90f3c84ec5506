package workflows

import (
	"maps"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/payload"
)

// TableInput starts (or continues as new) a table workflow.
type TableInput struct {
	Spec  payload.TableSpec `json:"spec"`
	State *TableState       `json:"state,omitempty"` // nil on a fresh start: offsets are recovered from the tables
}

// TableState is everything a run hands to the next across continue-as-new.
type TableState struct {
	Spec           payload.TableSpec      `json:"spec"` // current configuration (batch bounds may change by update)
	Phase          string                 `json:"phase"`
	Recovered      bool                   `json:"recovered"`
	Offsets        payload.Offsets        `json:"offsets"`         // next offset per partition
	HighWatermarks payload.Offsets        `json:"high_watermarks"` // per partition, at the last plan
	BatchSeq       int64                  `json:"batch_seq"`       // last batch number used
	Paused         bool                   `json:"paused"`
	Stopping       bool                   `json:"stopping"`
	SnapshotDone   bool                   `json:"snapshot_done"`
	LastBatch      *payload.ApplyResult   `json:"last_batch,omitempty"`
	LastError      string                 `json:"last_error,omitempty"`
	LastRebuild    *payload.RebuildResult `json:"last_rebuild,omitempty"`
	LastBatchAt    time.Time              `json:"last_batch_at,omitempty"`
	Watermark      string                 `json:"watermark,omitempty"` // highest applied _seq (hex)
	// FetchedPast is, for a table in a source group, per partition the
	// highest position its applied batches showed the partition complete
	// up to (hex; payload.GroupProgress.FetchedPast, recovered from
	// lakecat.PropFetchedPast): a frozen report carries it, so that a
	// table with no batch since it (re)joined completes the transactions
	// it applied before.
	FetchedPast map[int32]string `json:"fetched_past,omitempty"`
	// NewestTx is, for a table in a source group, per partition the
	// newest change event's place in its transaction
	// (payload.MergeNewestTx of its batches', recovered from
	// lakecat.PropNewestTx): a frozen report of a table with one
	// partition carries it as applied events (TableState.frozenTxSeen).
	NewestTx            map[int32]payload.TxAt `json:"newest_tx,omitempty"`
	NewestSourceTs      int64                  `json:"newest_source_ts,omitempty"` // newest applied source commit time, µs since the epoch; freshness = now − this
	Backfill            []payload.Range        `json:"backfill,omitempty"`         // queued backfill ranges
	Totals              Totals                 `json:"totals"`
	Runs                int                    `json:"runs"` // continue-as-new generations so far
	LastLoad            *payload.LoadResult    `json:"last_load,omitempty"`
	ResnapshotRequested string                 `json:"resnapshot_requested,omitempty"` // mode of a pending resnapshot signal
	Resnapshots         int                    `json:"resnapshots"`
	TopicMissing        bool                   `json:"topic_missing,omitempty"` // the last plan found no such topic
	// Cut is the source group's cut the table takes part in (nil: none;
	// tablecut.go).
	Cut *CutHold `json:"cut,omitempty"`
	// Owner is the task queue of the worker holding the table's local
	// state (routeVersion runs): its activities go there. "" = none yet
	// (the next activity claims the table).
	Owner     string `json:"owner,omitempty"`
	Claims    int    `json:"claims,omitempty"`     // claims that found a worker
	HandOvers int    `json:"hand_overs,omitempty"` // times the owner took no activity in time (gone) and the table was claimed again
	Releases  int    `json:"releases,omitempty"`   // times the owner released the table to balance the workers
	// RecentBatches are the last applied batches (at most recentBatches,
	// oldest first), for the current details (details.go).
	RecentBatches []BatchLine `json:"recent_batches,omitempty"`
	// Snapshots are the Iceberg snapshots of the tables' newest commits
	// (noteBatch), for the current details.
	Snapshots TableSnapshots `json:"snapshots,omitzero"`
	// HeartbeatsLost counts the activities whose heartbeats stopped
	// (fast-recovery runs): each was rerun on its owner with probeWait,
	// and handed over when the owner did not take it.
	HeartbeatsLost int `json:"heartbeats_lost,omitempty"`
	// StopHandOvers counts the owners that stopped gracefully and handed
	// the table over at once (leaveVersion runs): a result with Leaving,
	// or an activity failing with activities.ErrTypeWorkerLeaving.
	StopHandOvers int `json:"stop_hand_overs,omitempty"`

	retryRequested  bool              // set by the retry signal while blocked or retrying; not carried over
	schemaDecision  string            // set by the schema signal while schema-blocked
	published       *searchAttributes // where the phase is published (search attribute, metric)
	settingsChanges int               // settings updates taken in this run (an idle plan is cut short by one)
	memoSpec        workflow.Version  // memoSpecVersion of this run
	route           workflow.Version  // routeVersion of this run
	prevOwner       string            // the owner before the last hand-over or release, for the claim
	activity        activityNote      // the activity the table waits for, for the current details
	prevGone        bool              // prevOwner took no activity (a hand-over, not a release): the claim says so
	fast            workflow.Version  // fastRecoveryVersion of this run
	probing         bool              // the next routed activity is the rerun after a heartbeat timeout: probeWait
	idle            bool              // the last plan found nothing: the next one waits idleWait (planWait)
	leave           workflow.Version  // leaveVersion of this run
	notedWaits      workflow.Version  // waitNoteVersion of this run
	settingsRun     workflow.Version  // settingsRunVersion of this run
	ungroupedCut    workflow.Version  // cutUngroupedVersion of this run
	prevWhy         string            // why prevOwner let the table go ("stopped", "gone", "released"), for status
	cutRefused      int64             // a cut attempt bound after the table stopped waiting for it: reported as refused
}

// Totals accumulate batch counts over the pipeline's life (events unless
// named rows).
type Totals struct {
	Batches     int64 `json:"batches"`
	Records     int64 `json:"records"`
	Changes     int64 `json:"changes"`
	Applied     int64 `json:"applied"`
	Stale       int64 `json:"stale"`
	Duplicates  int64 `json:"duplicates"`
	Tombstones  int64 `json:"tombstones"`
	Quarantined int64 `json:"quarantined"` // records kept in the quarantine table instead of applied
	TxMetadata  int64 `json:"tx_metadata"`
	RowsWritten int64 `json:"rows_written"`
	BronzeRows  int64 `json:"bronze_rows"`
	HistoryRows int64 `json:"history_rows"`
	RebuiltKeys int64 `json:"rebuilt_keys"`           // late keys rebuilt from all their changes (late path: inline in a batch, or RebuildKeys)
	UnwovenKeys int64 `json:"unwoven_keys,omitempty"` // late keys of a table without bronze whose late change is not in the history (in a batch or left out of a rebuild)
	// UnknownValues: TOAST/LOB placeholders written as NULL because no
	// value was known (payload.MirrorResult.UnknownPlaceholders)
	UnknownValues int64 `json:"unknown_values,omitempty"`
	// KeysMovedOntoLive: primary-key changes onto a key that held a live
	// row (payload.MirrorResult.KeysMovedOntoLive: a key swap in one
	// statement)
	KeysMovedOntoLive int64 `json:"keys_moved_onto_live,omitempty"`
	BackfillRequested int64 `json:"backfill_requested"` // offsets queued by backfill updates
	BackfillDone      int64 `json:"backfill_done"`      // offsets re-applied
	LoadedRows        int64 `json:"loaded_rows"`        // rows read by direct loads
	Ghosts            int64 `json:"ghosts"`             // ghost rows soft-deleted by direct re-snapshots
	// SourceTsFromKafka: row changes whose _source_ts is their Kafka
	// record timestamp, the source having given no commit time
	// (docs/design.md, "Source commit time").
	SourceTsFromKafka int64 `json:"source_ts_from_kafka,omitempty"`
}

func (t *Totals) add(r *payload.ApplyResult) {
	t.Batches++
	t.Records += int64(r.Records)
	t.Changes += int64(r.Changes)
	t.Applied += int64(r.Mirror.Applied)
	t.Stale += int64(r.Mirror.Stale)
	t.Duplicates += int64(r.Mirror.Duplicates)
	t.Tombstones += int64(r.Tombstones)
	t.Quarantined += int64(r.Quarantined)
	t.TxMetadata += int64(r.TxMetadata)
	t.RowsWritten += int64(r.Mirror.RowsWritten)
	t.BronzeRows += int64(r.Bronze.Appended)
	t.HistoryRows += int64(r.History.RowsWritten)
	t.RebuiltKeys += int64(r.WovenKeys())
	t.UnwovenKeys += int64(r.History.Unwoven) // late changes a batch could not weave (no bronze, a rebuilt state)
	t.UnknownValues += int64(r.Mirror.UnknownPlaceholders)
	t.KeysMovedOntoLive += int64(r.Mirror.KeysMovedOntoLive)
	t.SourceTsFromKafka += int64(r.SourceTsFromKafka)
}

// Status is the answer of the status query.
type Status struct {
	Table          string                 `json:"table"`
	Topic          string                 `json:"topic"`
	Phase          string                 `json:"phase"`
	Paused         bool                   `json:"paused"`
	Offsets        payload.Offsets        `json:"offsets"`
	HighWatermarks payload.Offsets        `json:"high_watermarks"`
	Lag            payload.Offsets        `json:"lag"`                    // per partition, in offsets, at the last plan
	TotalLag       int64                  `json:"total_lag"`              // sum of Lag
	LagSource      string                 `json:"lag_source,omitempty"`   // empty: the last plan; set by readers that recompute lag from Kafka
	PhaseReason    string                 `json:"phase_reason,omitempty"` // why the table waits in its phase, e.g. "waiting for hand-over from worker 3f2a9c0d1e7b (17 s left)"; set by readers (starter status), empty in the query's answer
	BatchSeq       int64                  `json:"batch_seq"`
	LastBatch      *payload.ApplyResult   `json:"last_batch,omitempty"`
	LastError      string                 `json:"last_error,omitempty"`
	TopicMissing   bool                   `json:"topic_missing,omitempty"` // the topic does not exist (yet): the table waits for it
	LastRebuild    *payload.RebuildResult `json:"last_rebuild,omitempty"`
	LastBatchAt    time.Time              `json:"last_batch_at,omitempty"`
	Watermark      string                 `json:"watermark,omitempty"`        // highest applied _seq (hex)
	NewestSourceTs int64                  `json:"newest_source_ts,omitempty"` // newest applied source commit time, µs since the epoch; freshness = now − this
	Backfill       []payload.Range        `json:"backfill,omitempty"`         // queued backfill ranges
	LastLoad       *payload.LoadResult    `json:"last_load,omitempty"`        // the last direct load or re-snapshot
	Owner          string                 `json:"owner,omitempty"`            // task queue of the worker holding the table's state ("<queue>@<worker id>"); "" before the first claim or without routing
	Claims         int                    `json:"claims,omitempty"`           // claims that found a worker (this run and earlier ones)
	HandOvers      int                    `json:"hand_overs,omitempty"`       // owners that took no activity in time (gone): the table moved
	Releases       int                    `json:"releases,omitempty"`         // owners that released the table to balance the workers
	HeartbeatsLost int                    `json:"heartbeats_lost,omitempty"`  // activities whose heartbeats stopped (a dead or stalled worker), each rerun on its owner or handed over
	StopHandOvers  int                    `json:"stop_hand_overs,omitempty"`  // owners that stopped gracefully and handed the table over at once
	Unowned        string                 `json:"unowned,omitempty"`          // while the table has no worker after having one (a claim pending): which worker let it go and why, e.g. "worker 3f2a9c0d1e7b stopped and handed the table over"; "" otherwise
	Totals         Totals                 `json:"totals"`
	Snapshots      TableSnapshots         `json:"snapshots,omitzero"` // the Iceberg snapshots of the tables' newest commits by this pipeline, with their batches
	Spec           payload.TableSpec      `json:"spec"`
	Runs           int                    `json:"runs"` // the workflow's runs before this one (it continues as new for its history's size and after a settings update)
	// Cut is the source group's cut the table takes part in: frozen
	// (W "") or bound at W until the group releases it; nil: none.
	Cut *CutHold `json:"cut,omitempty"`
}

func (s *TableState) status() Status {
	spec := s.Spec
	st := Status{Table: spec.Table, Topic: spec.Topic, Phase: s.Phase, Paused: s.Paused,
		Offsets: maps.Clone(s.Offsets), HighWatermarks: maps.Clone(s.HighWatermarks), Lag: payload.Offsets{},
		BatchSeq: s.BatchSeq, LastBatch: s.LastBatch, LastError: s.LastError, TopicMissing: s.TopicMissing, LastRebuild: s.LastRebuild,
		LastBatchAt: s.LastBatchAt, Watermark: s.Watermark, NewestSourceTs: s.NewestSourceTs,
		Backfill: append([]payload.Range(nil), s.Backfill...), LastLoad: s.LastLoad, Totals: s.Totals, Spec: spec,
		Owner: s.Owner, Claims: s.Claims, HandOvers: s.HandOvers, Releases: s.Releases,
		HeartbeatsLost: s.HeartbeatsLost, StopHandOvers: s.StopHandOvers, Unowned: s.unowned(), Snapshots: s.Snapshots, Runs: s.Runs, Cut: s.Cut}
	// the order of the partitions does not change the result (sums and
	// per-partition values), and this runs only in the status query
	//workflowcheck:ignore
	for _, p := range s.HighWatermarks.SortedPartitions() {
		lag := max(s.HighWatermarks[p]-s.Offsets[p], 0)
		st.Lag[p] = lag
		st.TotalLag += lag
	}
	return st
}
