package activities

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/sr"
	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/lake/scd2"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/telemetry"
	"github.com/lakemirror/lakemirror/schemas"
)

// Activities is the worker's activity set: the catalog and Kafka clients
// plus per-table state kept between batches (decoders with their schema
// caches, mirror writers with their primary-key indexes). Register it with
// worker.RegisterActivity(a); methods become activities by name.
type Activities struct {
	Catalog catalog.Catalog
	Kafka   *kafka.Client
	// Metrics receives per-batch counts, lag and freshness; nil = none.
	Metrics *telemetry.Metrics
	// Registry is the schema registry of Avro records (Confluent wire
	// format); nil = JSON records only.
	Registry *sr.Client
	// Sources maps source names to PostgreSQL DSNs for direct loads
	// (TableSpec.Source). DSNs stay on the worker, out of workflow history.
	Sources map[string]string
	// StateDir is where the tables' local state logs live (tablestate.State),
	// and their key indexes once they spill; "" = the system temp
	// directory.
	StateDir string
	// IndexBudget bounds the RAM of the tables' key indexes
	// (keyindex.Budget, from the worker's config); nil = unbounded, all in
	// RAM.
	IndexBudget *keyindex.Budget
	// CatalogID is the identity of Catalog (lake.CatalogConfig.Identity):
	// activities refuse a table that records another (TableSpec.Catalog),
	// and Recover and PlanBatch report it for the workflow to record. ""
	// = no check (tests).
	CatalogID string

	// WorkerQueue is this worker's own task queue ("<TaskQueue>@<worker
	// id>", which the worker also polls), returned by ClaimTable so that a
	// table's activities run here, where its state is; "" = no routing
	// (claims leave the activities on the shared queue).
	WorkerQueue string
	// Fleet reports the workers and running tables for balancing claims
	// and releases (claim.go); nil = no balancing.
	Fleet Fleet
	// Gone tells Fleet that the worker of a task queue (WorkerQueue of
	// its id) is gone: it took no activity of a table it held
	// (ClaimRequest.Gone), so the fleet stops counting it until it polls
	// again; nil = nothing to tell.
	Gone func(queue string)
	// Owners finds the worker holding a table's state for the jobs that
	// run outside the table's workflow (TableOwner, owner.go); nil = those
	// jobs run on the shared queue.
	Owners OwnerLookup

	// Stopping, when set, is closed when the worker begins to stop
	// (runner.Runner.Stop closes it before it stops its Temporal
	// workers): the activities then hand their tables over (leave.go)
	// while the worker's own queue is still polled, so that an activity a
	// table's workflow schedules there after the stop began leaves at
	// once instead of waiting out a timeout. nil: the activities watch the
	// Temporal worker's stop (activity.GetWorkerStopChannel).
	Stopping <-chan struct{}

	// SidecarEvery is how often, in batches of a table, this worker
	// writes the table's state sidecar (tablestate.State.WriteSidecar) after a
	// batch; it also writes it when it releases a table. 0 = never (a
	// sidecar found is still loaded when it is for the current snapshots).
	SidecarEvery int

	// AfterCommit, when set, runs after each of a batch's table commits
	// ("bronze", "mirror", "history"); an error it returns fails the
	// attempt there. Tests use it to simulate a worker dying between two
	// commits, or between the last commit and the workflow recording the
	// result.
	AfterCommit func(ctx context.Context, batch lake.Batch, table string) error

	// BatchLog, when set, gets one INFO line per applied batch (table,
	// batch id, records, changes, duration, lag in records), at most one
	// per table every BatchLogEvery; the batches in between are logged at
	// DEBUG and counted in the next INFO line (batches_since_last_line).
	// nil = no batch lines (tests).
	BatchLog *slog.Logger

	mu          sync.Mutex
	batchLog    batchLogLimiter
	tables      map[string]*tableState
	pos         positions
	hwm         *hwmWatch // idle tables' shared high-watermark poller (watch)
	stateBuilds atomic.Int64
	// stateReleases counts idle tables' states released (idlestate.go)
	stateReleases atomic.Int64
	owner         owner // the tables this worker claimed (claim.go)
}

// tableState is what a worker keeps per table between batches.
type tableState struct {
	mu       sync.Mutex // one batch of a table at a time in this worker
	spec     TableSpec
	decoders *decoderPool
	prefetch prefetchSlot        // the next batch, fetched and decoded ahead (prefetch.go)
	writer   *lake.TableWriter   // the table's write protocol (tableWriter)
	mirror   *lake.MirrorWriter  // writer.Mirror
	history  *scd2.HistoryWriter // writer.History; nil without history
	keyCols  []string
	// keysChecked: keyCols were settled against the mirror's recorded
	// key columns (settleKeys).
	keysChecked bool
	// sinceSidecar counts batches applied since the sidecar was written.
	sinceSidecar int
	// typesChecked: the decoders were given the mirror's column types
	// (settleTypes).
	typesChecked bool
	// local is the table's local state once the writers exist, for
	// status and metrics read on other goroutines (StateSamples).
	local atomic.Pointer[tablestate.State]
	// used is when the table's writer was last used here (a batch
	// ended, or a job took the writer), for ReleaseIdleStates.
	used time.Time
	// layout is the newest layout (partition fields, sort order,
	// compression) the table's own activities gave (Activities.state;
	// nil: spec.Layout), which the writer takes in place when it is next
	// used (tableWriter): a layout change keeps the state, and a job's
	// older spec changes neither.
	layout atomic.Pointer[layout.Tables]
}

// newestLayout is the layout the table's writer is to write with: the
// newest its own activities gave, else the spec's.
func (st *tableState) newestLayout() layout.Tables {
	if l := st.layout.Load(); l != nil {
		return *l
	}
	return st.spec.Layout
}

// typesFrom makes the table's decoders read schemaless values by the
// mirror's column types (schemas.DecoderOptions.TableColumns: decimals
// sent as base64 or text, uuid, date), unless the spec declares
// the columns itself, and Bits values in the mirror's byte order
// (lake.PropBitsOrder). Without the types, a table created by a direct
// load or from events with the schema envelope would refuse the same
// columns streamed without the envelope. It reports whether either
// changed.
func (st *tableState) typesFrom(tbl *table.Table) bool {
	return st.decoders.typed(tableTypes(st.spec, tbl), lake.BitsLeastSignificantFirst(tbl))
}

// settleKeys settles the table's key columns once per worker table
// state: the mirror's recorded lakemirror.key-columns when the mirror
// exists, else the spec's, else those of the Kafka record keys. Errors
// (non-retryable, the table blocks): the spec (or the source table's
// primary key for a direct load) names other columns than the existing
// mirror is keyed by, since merging under another key would fold
// different rows together; no key columns at all.
func (st *tableState) settleKeys(ctx context.Context, a *Activities, name lake.TableName) error {
	if st.keysChecked {
		return nil
	}
	recorded, err := lake.MirrorKeyColumns(ctx, a.Catalog, name)
	if err != nil {
		return err
	}
	switch {
	case len(recorded) > 0 && len(st.keyCols) > 0 && !slices.Equal(recorded, st.keyCols):
		return keyMismatch(name, recorded, st.keyCols)
	case len(recorded) > 0:
		st.keyCols = recorded
	case len(st.keyCols) > 0:
	default:
		if st.keyCols = st.decoders.KeyColumns(); len(st.keyCols) == 0 {
			return badSpec(fmt.Errorf("table %s: no key columns given and none could be taken from the Kafka record keys", name))
		}
	}
	st.keysChecked = true
	return nil
}

// settleTypes gives the table's decoders the mirror's column types
// (see tableState.typesFrom) once per worker state, before its first
// batch decodes. Errors: catalog failures.
func (st *tableState) settleTypes(ctx context.Context, a *Activities, name lake.TableName) error {
	if st.typesChecked {
		return nil
	}
	tbl, err := lake.LoadTable(ctx, a.Catalog, name.Mirror())
	if err != nil {
		return err
	}
	if tbl != nil {
		st.typesFrom(tbl)
	}
	st.typesChecked = true
	return nil
}

// tableTypes returns the mirror's columns that type schemaless values
// (schemas.DecoderOptions.TableColumns, schemas.TableTyped): nil when the
// spec declares the columns, when none does, or when a type has no cdc
// equivalent (Prepare reports it). Only a change of these re-decodes a
// batch (see applyRecords).
func tableTypes(spec TableSpec, tbl *table.Table) []cdc.Column {
	if spec.Columns != nil || tbl == nil {
		return nil
	}
	cols, _ := tablestate.MirrorColumns(tbl)
	return schemas.TableTyped(cols)
}

// writers returns the table's mirror and history writers, creating them
// once the key columns are settled.
func (st *tableState) writers(a *Activities, name lake.TableName) (*lake.MirrorWriter, *scd2.HistoryWriter) {
	w := st.tableWriter(a, name)
	return w.Mirror, w.History
}

// tableWriter returns the table's writer, made on first use with the
// spec's tables and the worker's local state settings; its after-commit
// hook is Activities.AfterCommit as set when a commit runs.
func (st *tableState) tableWriter(a *Activities, name lake.TableName) *lake.TableWriter {
	st.used = time.Now()
	l := st.newestLayout()
	if st.writer != nil && !reflect.DeepEqual(l, st.writer.Layout()) {
		st.writer.SetLayout(l)
	}
	if st.writer == nil {
		st.writer = lake.NewTableWriter(a.Catalog, name, st.keyCols, lake.WriterOptions{
			StateDir: a.StateDir, History: !st.spec.WithoutHistory, OnBuild: a.stateBuilt(st.spec.Table),
			Sidecar: true, OnLoad: a.stateLoaded(st.spec.Table), WithoutBronze: st.spec.WithoutBronze,
			HistoryOptions: merge.HistoryOptions{Tracked: st.spec.HistoryColumns, CollapseTx: st.spec.HistoryCollapseTx},
			AfterCommit:    a.afterCommit, Layout: l, DeleteFormat: st.spec.DeleteFormat, IndexBudget: a.IndexBudget})
		st.mirror, st.history = st.writer.Mirror, st.writer.History
		st.local.Store(st.mirror.State())
	}
	return st.writer
}

// stateBuilt returns the hook that counts the builds of a table's local
// state from the tables: in Metrics (lakemirror_state_rebuilds_total) and
// in StateBuilds.
func (a *Activities) stateBuilt(table string) func(reason string) {
	return func(reason string) {
		a.stateBuilds.Add(1)
		if a.Metrics != nil {
			a.Metrics.StateRebuilt(table, reason)
		}
	}
}

// stateLoaded returns the hook that counts loads of a table's state from
// its sidecar (lakemirror_state_loads_total).
func (a *Activities) stateLoaded(table string) func() {
	return func() {
		if a.Metrics != nil {
			a.Metrics.StateLoaded(table)
		}
	}
}

// StateBuilds is how many times worker a built a table's local state
// from the tables (any table, any reason) since it started. (A function,
// not a method: every exported method of Activities is an activity.)
func StateBuilds(a *Activities) int64 { return a.stateBuilds.Load() }

// New returns the activity set over a catalog and a Kafka client.
func New(cat catalog.Catalog, kc *kafka.Client) *Activities {
	return &Activities{Catalog: cat, Kafka: kc, tables: map[string]*tableState{}}
}

// checkCatalog refuses a table whose recorded catalog is not this
// worker's: a retryable CatalogMismatch error (another worker on the
// table's catalog may take the retry). Nil when either is unknown.
func (a *Activities) checkCatalog(spec TableSpec) error {
	if a.CatalogID == "" || spec.Catalog == "" || spec.Catalog == a.CatalogID {
		return nil
	}
	return temporal.NewApplicationError(fmt.Sprintf("table %s lives in catalog %q, but this worker uses catalog %q: it refuses the table's activities (another worker of the task queue, on the table's catalog, takes the retry); fix the worker's CATALOG_* settings or stop it",
		spec.Table, spec.Catalog, a.CatalogID), ErrTypeCatalogMismatch)
}

// sameSpec reports whether two specs configure the worker's state for the
// table alike. The recorded catalog does not change it, nor do the batch
// bounds (MaxEvents, MaxWait, MaxBatchEvents, MaxQuarantine, LoadChunk),
// which every activity takes from its own request: a maintenance schedule
// created before `starter settings` changed them carries the old ones, and
// its job must use the state the table's batches use, not replace it.
// Nor does the layout (partition fields, sort order, compression): the
// writer takes a new one in place (tableState.layout), and the local
// state does not depend on it.
func sameSpec(x, y TableSpec) bool {
	for _, s := range []*TableSpec{&x, &y} {
		s.Catalog, s.MaxEvents, s.MaxWait, s.MaxBatchEvents, s.MaxQuarantine, s.LoadChunk = "", 0, 0, 0, 0, 0
		s.Layout = layout.Tables{}
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}

// decoderOptions are the options of a table's record decoders.
func (a *Activities) decoderOptions(spec TableSpec) schemas.DecoderOptions {
	return schemas.DecoderOptions{KeyColumns: spec.KeyColumns, Columns: spec.Columns, Registry: a.Registry,
		DropUpsertBefore: true} // the merge rules read before images of deletes only
}

// tableStates is a snapshot of the tables this worker holds state for,
// sorted by table name (for the worker-wide jobs: sidecars, releases).
func (a *Activities) tableStates() []*tableState {
	a.mu.Lock()
	states := make([]*tableState, 0, len(a.tables))
	for _, st := range a.tables {
		states = append(states, st)
	}
	a.mu.Unlock()
	slices.SortFunc(states, func(x, y *tableState) int { return strings.Compare(x.spec.Table, y.spec.Table) })
	return states
}

// state returns the worker's state for a table, creating it on first use
// (or when the table's spec changed: the old state is retired once its
// batch in flight, if any, is done). It is for the table's own
// activities (batches, loads, rebuilds), whose spec is the workflow's
// current one: their layout is the one the writer takes.
func (a *Activities) state(spec TableSpec) (*tableState, lake.TableName, error) {
	st, name, err := a.stateOf(spec)
	if err == nil {
		if l := spec.Layout; !reflect.DeepEqual(l, st.newestLayout()) {
			st.layout.Store(&l)
		}
	}
	return st, name, err
}

// stateOf is state without taking spec's layout: a job's spec may be a
// maintenance schedule's, as it was when the schedule was made.
func (a *Activities) stateOf(spec TableSpec) (*tableState, lake.TableName, error) {
	name, err := lake.ParseTableName(spec.Table)
	if err != nil {
		return nil, name, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tables == nil {
		a.tables = map[string]*tableState{}
	}
	st := a.tables[spec.Table]
	if st == nil || !sameSpec(st.spec, spec) {
		if st != nil {
			retire(st)
		}
		st = &tableState{spec: spec, keyCols: spec.KeyColumns, decoders: newDecoderPool(a.decoderOptions(spec))}
		a.tables[spec.Table] = st
	}
	return st, name, nil
}

// jobState is state for a job outside the table's workflow (a repair, a
// maintenance job): the worker's state for the table, and done, which the
// caller runs when the job is over (after releasing st.mu). A worker that
// neither held that state before nor owns the table (the job fell back to
// the shared queue) builds it for the job only: done drops it instead of
// keeping a second copy of the table's index (the owner rebuilds its own
// once, the job's commits having moved the tables).
func (a *Activities) jobState(spec TableSpec) (st *tableState, name lake.TableName, done func(), err error) {
	a.mu.Lock()
	_, existed := a.tables[spec.Table]
	a.mu.Unlock()
	done = func() {
		if !existed && !a.owner.holds(spec.Table) {
			a.dropState(spec.Table)
		}
	}
	st, name, err = a.stateOf(spec)
	return st, name, done, err
}
