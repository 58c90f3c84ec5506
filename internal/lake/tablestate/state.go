package tablestate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/localstate"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
)

// State is one table's local write-path state (docs/design.md, "Local
// state"): the compact primary-key index (KeyIndex, in memory) and the
// chain log (a file on the worker's local disk) holding, per key, its row
// changes, its mirror row's values and its history rows and open version.
// It is a cache of the Iceberg tables, never the truth: it is built from
// the tables when a worker has none or finds a table at another snapshot
// than the one it reflects, and it lets a batch be applied without reading
// the tables back (the mirror's position deletes and the values a delete
// or a TOAST placeholder keeps; the history's open version, closed without
// reading the history table; the late-key rebuild's past events, read per
// key instead of scanning bronze).
//
// A MirrorWriter and a HistoryWriter made by NewWriters share one State;
// NewMirrorWriter and NewHistoryWriter give each writer its own. Not safe
// for concurrent use.
type State struct {
	cat     catalog.Catalog
	name    lakecat.TableName
	keyCols []string
	dir     string

	ownsMirror, OwnsHistory bool
	// EventsBy is the part whose writer logs each batch's row changes:
	// localstate.RecMirror or RecRows (history).
	EventsBy uint8

	Built       bool
	MirrorSnap  int64 // mirror snapshot the state reflects (0: none)
	HistorySnap int64
	// eventsComplete: the log holds every row change of every key (the
	// state was built from empty tables, or past events were loaded with
	// LoadEvents). False after a build from tables with rows: their past
	// events are in bronze only.
	eventsComplete bool
	// KeysLogged are keys whose every past row change the log holds
	// although eventsComplete is false: their bronze records were loaded
	// a key set at a time (LoadKeyEvents) since the state was built;
	// keyReadCost is what those reads cost, in bronze rows read whole
	// (KeySetReadPays), and bronzeRows bronze's rows at the last one.
	KeysLogged  map[cdc.Key]struct{}
	keyReadCost int64
	bronzeRows  int64
	// heirs lists, by old key, the key-change creates applied with TOAST
	// placeholders before every change of their old key below them had
	// arrived (mirror_keychange.go): a later change of the old key there
	// lists the new key for a rebuild. Committed with each batch as
	// PropKeyChangeHeirs (at most maxStoredHeirs) and listed again when
	// the state is built or loaded (loadHeirs).
	Heirs map[cdc.Key][]Heir
	// BuiltAtBatch is the last batch sequence the tables held when the
	// state was built from them.
	BuiltAtBatch int64

	Ix  *keyindex.Index
	log *localstate.Log
	// budget bounds the index's memory (nil: all in RAM, unbounded);
	// meter publishes its usage and logBytes the log's size, for status
	// and metrics on other goroutines (Memory).
	Budget   *keyindex.Budget
	meter    keyindex.Meter
	logBytes atomic.Int64
	c        *localstate.Codec
	HFiles   []string
	hfid     map[string]int32

	// pending is the batch the mirror writer committed last, waiting for
	// the history writer to record it with its own changes.
	Pending *Plan

	w        localstate.RecWriter
	rbuf     []byte
	encoders [2]recEncoder // recordPlan's, one per goroutine

	// recording receives the outcome of the batch being recorded in the log
	// in the background (RecordAsync); nil when none is.
	recording chan error

	// everBuilt: the state was built (or loaded) once; a later build has
	// reason BuildInvalidated or BuildSnapshotMoved, not BuildNew.
	everBuilt bool
	// onBuild, when set, is told of every build from the tables, with its
	// reason (WriterOptions.OnBuild).
	OnBuild func(reason string)
	// sidecar: a state built for lack of one (BuildNew) is first loaded
	// from the table's sidecar when it is for the current snapshots
	// (WriterOptions.Sidecar); onLoad is told of each load.
	Sidecar bool
	OnLoad  func()
	// sidecarSnap is the mirror snapshot of the sidecar last written or
	// loaded (0: none).
	sidecarSnap int64
	// building is a build from the tables left running by a caller whose
	// context ended (buildDetached); nil when none is. Every use of the
	// state waits for it (Settle; AwaitBuild with a context).
	building *buildRun
	// onProgress, when set, is told of a build's progress
	// (SetBuildProgress).
	onProgress func(rows, keys int)
	// progress is the running build's, for other goroutines (Building).
	progress buildProgress
	// buildRuns and buildRunBytes are the sorted runs the last build
	// wrote to local disk, and their bytes (0 when it sorted in memory).
	buildRuns     int
	buildRunBytes int64
}

// Reasons a State is built from the tables (WriterOptions.OnBuild, the
// lakemirror_state_rebuilds_total metric).
const (
	BuildNew           = "new"            // the worker had no state for the table (first use, restart, hand-over)
	BuildSnapshotMoved = "snapshot-moved" // the table is at another snapshot than the state reflects (another writer, compaction)
	BuildInvalidated   = "invalidated"    // a failed commit or an unreadable log dropped the state
	BuildStaleSidecar  = "stale-sidecar"  // no state in memory, and the sidecar is for another snapshot (or unreadable)
)

// buildReason is why the state is about to be built from the tables.
func (s *State) buildReason() string {
	switch {
	case !s.everBuilt:
		return BuildNew
	case !s.Built:
		return BuildInvalidated
	default:
		return BuildSnapshotMoved
	}
}

var stateSeq atomic.Int64

// testBudget, when set (tests: LAKEMIRROR_TEST_SPILL, see spill_test.go),
// is the index budget of every state not given one.
var testBudget *keyindex.Budget

// NewState returns an unbuilt state for a table, its log under dir ("" =
// the system temp directory).
func NewState(cat catalog.Catalog, name lakecat.TableName, keyCols []string, dir string, mirror, history bool) *State {
	s := &State{cat: cat, name: name, keyCols: keyCols, dir: dir, ownsMirror: mirror, OwnsHistory: history, Budget: testBudget}
	s.EventsBy = localstate.RecMirror
	if history {
		s.EventsBy = localstate.RecRows
	}
	return s
}

// Close releases the state's log file and its index (a spilled index's
// store and directory).
func (s *State) Close() error {
	if s == nil {
		return nil
	}
	if s.building != nil {
		s.building.cancel() // a build left running stops at its next check
	}
	s.Settle()
	if s.Ix != nil {
		s.Ix.Close() // emptied, no longer counted in the budget; kept for Index's callers
	}
	if s.log == nil {
		return nil
	}
	err := s.log.Close()
	s.log, s.Built = nil, false
	s.logBytes.Store(0)
	return err
}

// Memory is the state's local footprint as of its last batch: the key
// index in RAM and on disk (keyindex.Usage) and the chain log's bytes on
// disk. Safe to call from any goroutine, while batches run.
func (s *State) Memory() (index keyindex.Usage, logBytes int64) {
	return s.meter.Usage(), s.logBytes.Load()
}

// lost reports whether the state's local files are gone or failing: the
// log file was removed (the local disk wiped) or the spilled index's
// store lost its directory or failed. The state is then built again.
func (s *State) lost() bool {
	if s.log == nil || s.Ix == nil {
		return false
	}
	if _, err := os.Stat(s.log.Path()); err != nil {
		return true
	}
	return s.Ix.Lost()
}

// Invalidate drops the state; the next use rebuilds it from the tables.
// Writers call it when a commit failed (the table may or may not have
// moved) or the log could not be written.
func (s *State) Invalidate() {
	s.Settle()
	s.invalidate()
}

// invalidate is Invalidate without waiting for a background recording
// (which calls it itself when the log cannot be written).
func (s *State) invalidate() {
	s.Built = false
	s.Pending = nil
	if s.Ix != nil {
		s.Ix.SnapshotID = -1
	}
}

// Index returns the key index (nil before the state is built).
func (s *State) Index() *keyindex.Index {
	s.Settle()
	return s.Ix
}

// LogBytes is the size of the chain log on local disk.
func (s *State) LogBytes() int64 {
	s.Settle()
	if s.log == nil {
		return 0
	}
	return s.log.Size()
}

// EnsureMirror makes the state reflect mirror (the mirror table as
// loaded, or nil when it does not exist), rebuilding it otherwise. A
// build from the tables outlives ctx (buildDetached): when ctx ends
// first it returns ctx's error and the build goes on, and the next call
// waits for it instead of starting over.
func (s *State) EnsureMirror(ctx context.Context, mirror *table.Table) error {
	return s.ensure(ctx, &s.MirrorSnap, mirror, nil)
}

// EnsureHistory is EnsureMirror for the history table.
func (s *State) EnsureHistory(ctx context.Context, history *table.Table) error {
	return s.ensure(ctx, &s.HistorySnap, nil, history)
}

// ensure is EnsureMirror and EnsureHistory: snap is the state's snapshot
// of the one table given (mirror or history), read once the pending
// batch is flushed.
func (s *State) ensure(ctx context.Context, snap *int64, mirror, history *table.Table) error {
	if err := s.AwaitBuild(ctx); err != nil {
		return err
	}
	s.Settle()
	if s.Built && s.lost() {
		s.invalidate()
	}
	if err := s.flushPending(); err != nil {
		return err
	}
	tbl := mirror
	if history != nil {
		tbl = history
	}
	if s.Built && *snap == lakecat.SnapID(tbl) {
		return nil
	}
	return s.buildDetached(ctx, mirror, history, s.buildReason())
}

// buildRun is a build from the tables running on its own goroutine
// (buildDetached).
type buildRun struct {
	done   chan struct{} // closed when the build returned
	cancel context.CancelFunc
}

// buildDetached runs build on its own goroutine, with ctx's values but
// not its end (only Close cancels it), and waits for it or for ctx. A
// build can outlast its caller's deadline (ApplyBatch's 15-minute
// start-to-close timeout, at tens of millions of rows on a loaded
// machine): the attempt then fails with ctx's error while the build goes
// on, and the retried attempt waits for it (AwaitBuild) instead of
// starting over. Errors: the build's; ctx's when it ended first.
func (s *State) buildDetached(ctx context.Context, mirror, history *table.Table, reason string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	run := &buildRun{done: make(chan struct{}), cancel: cancel}
	var err error
	go func() {
		defer close(run.done)
		defer cancel()
		err = s.build(bctx, mirror, history, reason)
	}()
	s.building = run
	select {
	case <-run.done:
		s.building = nil
		return err
	case <-ctx.Done():
		return fmt.Errorf("lake: local state of %s still building from the tables (the next use waits for it): %w", s.name, ctx.Err())
	}
}

// AwaitBuild waits for a build an earlier call left running (its caller's
// context ended first) or until ctx ends. The build's outcome is in the
// state (built, or not: the caller then builds again). Errors: ctx's.
func (s *State) AwaitBuild(ctx context.Context) error {
	run := s.building
	if run == nil {
		return nil
	}
	select {
	case <-run.done:
		s.building = nil
		return nil
	case <-ctx.Done():
		return fmt.Errorf("lake: local state of %s still building from the tables: %w", s.name, ctx.Err())
	}
}

// build rebuilds the state from the tables the state owns (either may be
// passed already loaded), and tells onBuild of it with reason. Cost: one
// read of every live row of those tables; bronze is not read (see
// LoadEvents).
func (s *State) build(ctx context.Context, mirror, history *table.Table, reason string) error {
	s.progress.begin()
	defer s.progress.end()
	var err error
	if s.ownsMirror && mirror == nil {
		if mirror, err = lakecat.LoadTable(ctx, s.cat, s.name.Mirror()); err != nil {
			return err
		}
	}
	if s.OwnsHistory && history == nil {
		if history, err = lakecat.LoadTable(ctx, s.cat, s.name.History()); err != nil {
			return err
		}
	}
	if !s.ownsMirror {
		mirror = nil
	}
	if !s.OwnsHistory {
		history = nil
	}
	if reason == BuildNew && s.Sidecar {
		err := s.loadSidecar(ctx, mirror, history)
		if err == nil {
			if err := s.loadHeirs(mirror); err != nil {
				return err
			}
			s.Built, s.everBuilt = true, true
			if s.OnLoad != nil {
				s.OnLoad()
			}
			return nil
		}
		if !errors.Is(err, errNoSidecar) {
			reason = BuildStaleSidecar // stale, torn, or unreadable here: built from the tables
		}
	}
	if err := s.reset(); err != nil {
		return err
	}
	rows := 0
	bs := &localstate.BuildSorter{Dir: s.stateDir(), Limit: buildChunkBytes(s.Budget)}
	defer bs.Close()
	if mirror != nil && mirror.CurrentSnapshot() != nil {
		n, err := s.loadMirror(ctx, mirror, bs)
		if err != nil {
			s.invalidate()
			return err
		}
		rows += n
		s.Ix.SnapshotID = mirror.CurrentSnapshot().SnapshotID
		if cp, err := lakecat.ReadCheckpoint(mirror); err == nil {
			s.BuiltAtBatch = max(s.BuiltAtBatch, cp.BatchSeq)
		}
	}
	if history != nil && history.CurrentSnapshot() != nil {
		n, err := s.loadHistory(ctx, history, bs, rows)
		if err != nil {
			s.invalidate()
			return err
		}
		rows += n
		if cp, err := lakecat.ReadCheckpoint(history); err == nil {
			s.BuiltAtBatch = max(s.BuiltAtBatch, cp.BatchSeq)
		}
	}
	if err := s.writeBuilt(ctx, bs, rows); err != nil {
		s.invalidate()
		return err
	}
	s.buildRuns, s.buildRunBytes = bs.Runs, bs.RunBytes
	if err := s.flush(); err != nil {
		return err
	}
	s.MirrorSnap, s.HistorySnap = lakecat.SnapID(mirror), lakecat.SnapID(history)
	// empty tables that never committed a batch: the log starts with every
	// change; tables emptied by purges still have their past in bronze
	s.eventsComplete = rows == 0 && s.BuiltAtBatch == 0
	if err := s.loadHeirs(mirror); err != nil {
		return err
	}
	s.Built, s.everBuilt = true, true
	if s.OnBuild != nil {
		s.OnBuild(reason)
	}
	return nil
}

// reset empties the state: a new index, a new log file.
func (s *State) reset() error {
	if s.log != nil {
		s.log.Close()
		s.log = nil
	}
	if s.Ix != nil {
		s.Ix.Close()
		s.Ix = nil
	}
	dir := s.stateDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("lake: local state directory: %w", err)
	}
	base := strings.NewReplacer("/", "_", "\\", "_", " ", "_").Replace(s.name.String())
	l, err := localstate.OpenLog(filepath.Join(dir, fmt.Sprintf("%s.%d.%d.state", base, os.Getpid(), stateSeq.Add(1))))
	if err != nil {
		return err
	}
	s.log = l
	s.Ix = s.newIndex(keyindex.New(0, 0))
	s.c = localstate.NewCodec()
	s.w.C = s.c
	for i := range s.encoders {
		s.encoders[i].w.C = s.c
	}
	s.HFiles, s.hfid = nil, map[string]int32{}
	s.BuiltAtBatch = 0
	s.KeysLogged, s.keyReadCost, s.bronzeRows = nil, 0, 0
	s.Heirs = nil
	s.Pending = nil
	return nil
}

// HFileID returns the id of a history data file path.
func (s *State) HFileID(path string) int32 {
	if id, ok := s.hfid[path]; ok {
		return id
	}
	id := int32(len(s.HFiles))
	s.HFiles = append(s.HFiles, path)
	s.hfid[path] = id
	return id
}

// begin starts key k's next chain record for batch with the given
// sections; write the sections in flag order, then call commitRec.
func (s *State) begin(k cdc.Key, batch int64, flags uint8) *localstate.RecWriter {
	s.w.Begin(s.Ix.Head(k), batch, flags)
	return &s.w
}

// commitRec appends the record begun for k and makes it k's head.
func (s *State) commitRec(k cdc.Key) error {
	ref, err := s.log.Append(s.w.Buf)
	if err != nil {
		s.invalidate()
		return err
	}
	s.Ix.SetHead(k, ref)
	return nil
}

// stateDir is the directory of the state's log (and spilled index, and
// a build's run files).
func (s *State) stateDir() string {
	if s.dir == "" {
		return os.TempDir()
	}
	return s.dir
}

// buildProgress is a build's progress as other goroutines read it: when
// it began (unix nanoseconds; 0: no build runs), rows read and keys
// written so far.
type buildProgress struct {
	since, rows, keys atomic.Int64
}

func (p *buildProgress) begin() {
	p.rows.Store(0)
	p.keys.Store(0)
	p.since.Store(time.Now().UnixNano())
}

func (p *buildProgress) end() { p.since.Store(0) }

// BuildProgress is a running build of the local state from the tables:
// when it began, the tables' rows read so far and the keys written so far
// (keys grow from 0 once every row was read), as of its last tick (about
// every 65,536 rows or keys).
type BuildProgress struct {
	Since      time.Time
	Rows, Keys int64
}

// Building reports the build of the state from the tables that runs now
// (ok false when none does). Safe for concurrent use, also while the
// build runs.
func (s *State) Building() (p BuildProgress, ok bool) {
	since := s.progress.since.Load()
	if since == 0 {
		return p, false
	}
	return BuildProgress{Since: time.Unix(0, since), Rows: s.progress.rows.Load(), Keys: s.progress.keys.Load()}, true
}

// SetBuildProgress sets fn to be told of a build's progress from the
// tables: about every 65,536 rows read and keys written, rows read so
// far and keys written so far (rows and keys grow, keys from 0 once every
// row was read). fn runs on the building goroutine and must not block;
// nil stops it. A build checks its context as often.
func (s *State) SetBuildProgress(fn func(rows, keys int)) {
	s.Settle()
	s.onProgress = fn
}

// newIndex puts ix under the state's budget, spilling to the state's
// directory, and returns it.
func (s *State) newIndex(ix *keyindex.Index) *keyindex.Index {
	dir := s.dir
	if dir == "" {
		dir = os.TempDir()
	}
	ix.SetBudget(s.Budget, dir, &s.meter)
	return ix
}

// flush writes appended records through, and the index's changed
// entries when it is spilled, in one pebble batch (end of a batch).
func (s *State) flush() error {
	if err := s.log.Flush(); err != nil {
		s.invalidate()
		return err
	}
	s.logBytes.Store(s.log.Size())
	if err := s.Ix.Flush(); err != nil {
		s.invalidate()
		return err
	}
	return nil
}

// walk calls fn for each of k's chain records, newest first, decoding the
// sections in want, until fn returns false.
func (s *State) Walk(k cdc.Key, want uint8, fn func(*localstate.ChainRec) bool) error {
	return s.walkFrom(s.Ix.Head(k), k, want, fn)
}

// walkFrom is walk from the record at ref. A log that cannot be read, or
// a record that does not decode, invalidates the state (the caller's
// retry rebuilds it from the tables).
func (s *State) walkFrom(ref uint64, k cdc.Key, want uint8, fn func(*localstate.ChainRec) bool) error {
	for ref != 0 {
		b, next, err := s.log.Read(ref, s.rbuf)
		s.rbuf = next
		if err != nil {
			s.invalidate()
			return err
		}
		rec, err := s.c.DecodeRec(b, k, want)
		if err != nil {
			s.invalidate()
			return fmt.Errorf("%w (key %x, record %d)", err, string(k), ref)
		}
		if !fn(&rec) {
			return nil
		}
		ref = rec.Prev
	}
	return nil
}

// MirrorValues returns key k's mirror row values as recorded, aligned to
// sh (columns the record predates are NULL); nil when none is recorded.
func (s *State) MirrorValues(k cdc.Key, sh *Shape) (*cdc.Row, error) {
	var out *cdc.Row
	err := s.Walk(k, localstate.WantMirror, func(r *localstate.ChainRec) bool {
		if r.Flags&localstate.RecMirror == 0 {
			return true
		}
		out = r.Mirror
		return false
	})
	if err != nil || out == nil {
		return nil, err
	}
	return AlignRow(out, sh.Names), nil
}

// OpenVersion returns the open history version of the key of index
// entry e and its values (nil when the key has none).
func (s *State) OpenVersion(e uint32, k cdc.Key) (*localstate.HistRow, *cdc.Row, error) {
	var h *localstate.HistRow
	var vals *cdc.Row
	err := s.walkFrom(s.Ix.HeadAt(e), k, localstate.WantOpen, func(r *localstate.ChainRec) bool {
		if r.Flags&localstate.RecOpen == 0 {
			return true
		}
		h, vals = r.Open, r.OpenVal
		return false
	})
	return h, vals, err
}

// VersionsSpanning sets spans[i] when key k has a live history version
// open at table truncate at[i]: opened below it (and not by a
// PostgreSQL source snapshot read taken after it, see cdc.TruncateCovers) and
// closed above it, or still open. spans has at's length.
func (s *State) VersionsSpanning(k cdc.Key, at []cdc.Seq, spans []bool) error {
	clear(spans)
	rows, err := s.LiveRows(k)
	if err != nil {
		return err
	}
	for _, h := range rows {
		for i, p := range at {
			if cdc.TruncateCovers(p, h.Seq) && (h.ToSeq == "" || h.ToSeq > p || cdc.PostgresReadAfterTruncate(h.ToSeq, p)) {
				spans[i] = true
			}
		}
	}
	return nil
}

// LiveRows returns key k's live history rows, ascending by version id.
func (s *State) LiveRows(k cdc.Key) ([]localstate.HistRow, error) {
	var rows []localstate.HistRow
	dead := map[parquetio.RowLoc]bool{}
	err := s.walkFrom(s.Ix.Head(k), k, localstate.WantRows, func(r *localstate.ChainRec) bool {
		if r.Flags&localstate.RecRows == 0 {
			return true
		}
		for i := len(r.Rows) - 1; i >= 0; i-- {
			h := r.Rows[i]
			if l := (parquetio.RowLoc{File: h.File, Pos: h.Pos}); !dead[l] {
				rows = append(rows, h)
				dead[l] = true // an older record never holds the same row
			}
		}
		for _, l := range r.Removed {
			dead[l] = true
		}
		return r.Flags&localstate.RecReset == 0
	})
	if err != nil {
		return nil, err
	}
	sortHistRows(rows)
	return rows, nil
}

// KeyEvents returns the row changes the log records for key k (all
// batches, in no order, with duplicates as delivered). Errors: local
// state log failures.
func (s *State) KeyEvents(k cdc.Key) ([]*cdc.Event, error) {
	var events []*cdc.Event
	err := s.Walk(k, localstate.WantEvents, func(r *localstate.ChainRec) bool {
		events = append(events, r.Events...)
		return true
	})
	return events, err
}

// Events returns the row changes recorded for each key (in no order, with
// duplicates as delivered). ok is false when the log may lack past
// changes of one of keys (the state was built from tables with rows, and
// neither LoadEvents nor LoadKeyEvents loaded them): the caller then
// reads bronze.
func (s *State) Events(keys []cdc.Key) (out map[cdc.Key][]*cdc.Event, ok bool, err error) {
	s.Settle()
	if err := s.flushPending(); err != nil {
		return nil, false, err
	}
	if !s.Built || len(s.eventsMissing(keys)) > 0 {
		return nil, false, nil
	}
	out = make(map[cdc.Key][]*cdc.Event, len(keys))
	for _, k := range keys {
		var es []*cdc.Event
		if err := s.Walk(k, localstate.WantEvents, func(r *localstate.ChainRec) bool {
			es = append(es, r.Events...)
			return true
		}); err != nil {
			return nil, false, err
		}
		out[k] = es
	}
	return out, true, nil
}

// EventsComplete reports whether the log holds every past row change.
func (s *State) EventsComplete() bool {
	s.Settle()
	return s.Built && s.eventsComplete
}

// LoadEvents records past row changes (bronze records of the table,
// decoded and prepared like a batch) in the log. Records the log already
// holds (same key, position and Kafka coordinates) are not added again;
// a redelivery, the same change at another offset, is. Once every bronze
// record was loaded, SetEventsComplete lets Events serve the late-key
// rebuild without bronze from then on.
func (s *State) LoadEvents(byKey map[cdc.Key][]*cdc.Event) error {
	s.Settle()
	if !s.Built {
		return fmt.Errorf("lake: local state not built")
	}
	if err := s.flushPending(); err != nil {
		return err
	}
	for k, es := range byKey {
		if err := s.addEvents(k, es); err != nil {
			return err
		}
	}
	return s.flush()
}

// addEvents appends a chain record of key k with the events of es the
// log does not hold yet. A record is one change at one Kafka coordinate:
// a redelivery (the same position at another offset) is kept beside the
// first copy, whichever bronze gives first, so that the binlog restart
// check (merge.FindBinlogRestart) sees the first copy in delivery order.
func (s *State) addEvents(k cdc.Key, es []*cdc.Event) error {
	if len(es) == 0 {
		return nil
	}
	type record struct {
		seq   cdc.Seq
		topic string
		part  int32
		off   int64
	}
	at := func(e *cdc.Event) record {
		return record{e.Seq, e.Origin.Topic, e.Origin.Partition, e.Origin.Offset}
	}
	have := map[record]bool{}
	if err := s.Walk(k, localstate.WantEvents, func(r *localstate.ChainRec) bool {
		for _, e := range r.Events {
			have[at(e)] = true
		}
		return true
	}); err != nil {
		return err
	}
	var add []*cdc.Event
	for _, e := range es {
		if !have[at(e)] {
			have[at(e)] = true
			add = append(add, e)
		}
	}
	if len(add) == 0 {
		return nil
	}
	w := s.begin(k, s.BuiltAtBatch, localstate.RecEvents)
	w.Events(add, nil)
	return s.commitRec(k)
}

// SetEventsComplete records that the log now holds every past row change
// (LoadEvents was given every bronze record).
func (s *State) SetEventsComplete() {
	s.Settle()
	if s.Built {
		s.eventsComplete = true
		s.KeysLogged = nil
	}
}

// EventsMissing returns the keys among keys whose past row changes the
// log may lack (in keys' order): none when it holds every past change,
// else those LoadKeyEvents did not load since the state was built (all
// of keys when the state is not built).
func (s *State) EventsMissing(keys []cdc.Key) []cdc.Key {
	s.Settle()
	if !s.Built {
		return keys
	}
	return s.eventsMissing(keys)
}

func (s *State) eventsMissing(keys []cdc.Key) []cdc.Key {
	if s.eventsComplete {
		return nil
	}
	var out []cdc.Key
	for _, k := range keys {
		if _, ok := s.KeysLogged[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// LoadKeyEvents is LoadEvents for the keys in keys alone: byKey holds
// every bronze record of each of them (decoded and prepared like a batch;
// a key without any has none; other keys' are left out), and Events
// serves them from the log from then on, until the state is built again.
// scan is the bronze read that found them (tableread.ReadBronzeKeysCounted), its
// cost summed for KeySetReadPays. Errors: LoadEvents'.
func (s *State) LoadKeyEvents(keys []cdc.Key, byKey map[cdc.Key][]*cdc.Event, scan tableread.BronzeKeyScan) error {
	s.Settle()
	if !s.Built {
		return fmt.Errorf("lake: local state not built")
	}
	if s.eventsComplete {
		return nil
	}
	mine := make(map[cdc.Key][]*cdc.Event, len(keys))
	for _, k := range keys {
		mine[k] = byKey[k]
	}
	if err := s.LoadEvents(mine); err != nil {
		return err
	}
	if s.KeysLogged == nil {
		s.KeysLogged = make(map[cdc.Key]struct{}, len(keys))
	}
	for _, k := range keys {
		s.KeysLogged[k] = struct{}{}
	}
	s.keyReadCost += scan.RowsRead + scan.KeysScanned/keyScanPerRow
	s.bronzeRows = scan.TotalRows
	return nil
}

// Limits of key-set reads of past changes (KeySetReadPays).
const (
	// keyScanPerRow: reading a bronze row's `_key` alone costs about this
	// fraction of reading the row whole.
	keyScanPerRow = 8
	// keyReadsPerLoad: loading every bronze record (decoding and logging
	// each) costs about this many plain reads of bronze
	// (BenchmarkPastRead: 5.2 s against 0.76 s at 400,000 rows, 7x).
	keyReadsPerLoad = 4
	// maxKeySetRead is the most keys one key-set read looks for (the IN
	// filter of its file pruning holds each).
	maxKeySetRead = 20_000
	// maxKeysLogged is the most keys loaded a key set at a time that the
	// state tracks (about 40 bytes each in RAM).
	maxKeysLogged = 200_000
)

// KeySetReadPays reports whether the past changes of n more keys missing
// from the log (EventsMissing) should be read from bronze for those keys
// alone (tableread.ReadBronzeKeysCounted, then LoadKeyEvents) rather than every
// bronze record loaded once (LoadEvents, then SetEventsComplete). A load
// of everything reads and decodes every bronze row once and makes every
// later rebuild bronze-free; a key-set read reads every candidate file's
// `_key` column and the row groups holding a wanted key, so it is much
// cheaper for a few keys and, with keys spread over every file, about a
// plain read of bronze, a seventh of a load. So key-set reads go on, as
// in renting against buying, until what they cost together (in bronze
// rows read whole, a `_key` value an eighth of one) reaches four times
// bronze's row count, or the keys exceed maxKeySetRead at once or
// maxKeysLogged in all: then everything is loaded, for at most about
// 1.6 times what loading it at first would have cost.
func (s *State) KeySetReadPays(n int) bool {
	s.Settle()
	if s.eventsComplete || n > maxKeySetRead || len(s.KeysLogged)+n > maxKeysLogged {
		return false
	}
	return s.bronzeRows == 0 || s.keyReadCost < keyReadsPerLoad*s.bronzeRows
}

// KeyLoads returns how many keys LoadKeyEvents loaded since the state was
// built, and what their reads cost in bronze rows read whole.
func (s *State) KeyLoads() (keys int, cost int64) {
	s.Settle()
	return len(s.KeysLogged), s.keyReadCost
}

// AlignRow returns r with its values in the column order of to: the same
// row when the layouts match, else a copy where columns r lacks are NULL.
func AlignRow(r *cdc.Row, to *cdc.Columns) *cdc.Row {
	if r == nil || r.Cols == to {
		return r
	}
	if localstate.SameNames(r.Cols, to) {
		return &cdc.Row{Cols: to, Vals: r.Vals}
	}
	out := &cdc.Row{Cols: to, Vals: make([]cdc.Value, len(to.Names))}
	for i, n := range to.Names {
		if j := r.Cols.Index(n); j >= 0 {
			out.Vals[i] = r.Vals[j]
		}
	}
	return out
}

// AlignedVals is AlignRow's values, without a new row when r already has
// to's column names: then r.Vals itself (nil for a nil r).
func AlignedVals(r *cdc.Row, to *cdc.Columns) []cdc.Value {
	if r == nil {
		return nil
	}
	if localstate.SameNames(r.Cols, to) {
		return r.Vals
	}
	return AlignRow(r, to).Vals
}

// BuildRuns is the number of sorted runs the last build from the tables
// wrote to local disk and their size in bytes (0, 0 when it sorted in
// memory): for benchmarks and tests of the build.
func (s *State) BuildRuns() (runs int, bytes int64) { return s.buildRuns, s.buildRunBytes }

// ChainLog is the state's chain log (nil before the first build), for
// tests that break it under the writers.
func (s *State) ChainLog() *localstate.Log { return s.log }
