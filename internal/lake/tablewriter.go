package lake

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/scd2"
	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/merge"
)

// TableWriter is the write protocol of one source table behind one call
// (docs/design.md, "Write path" steps 3-6, "Exactly-once batch
// bookkeeping"): Write prepares a decoded batch against the mirror,
// quarantines what cannot be applied, stages bronze, mirror and history,
// writes their files concurrently and commits them in the order bronze →
// mirror → history; Rebuild re-folds late keys into mirror and history.
// Its mirror and history writers share one local State. Not safe for
// concurrent use (the caller serialises a table's batches).
type TableWriter struct {
	Mirror  *MirrorWriter
	History *scd2.HistoryWriter // nil for a table without history

	cat           catalog.Catalog
	name          TableName
	withoutBronze bool
	layout        layout.Tables
	afterCommit   func(ctx context.Context, b Batch, table string) error
}

// NewTableWriter returns the writer of one source table (see NewWriters
// for the options; o.WithoutBronze also leaves the bronze table out of
// Write).
func NewTableWriter(cat catalog.Catalog, name TableName, keyCols []string, o WriterOptions) *TableWriter {
	m, h := NewWriters(cat, name, keyCols, o)
	return &TableWriter{Mirror: m, History: h, cat: cat, name: name, withoutBronze: o.WithoutBronze, layout: o.Layout, afterCommit: o.AfterCommit}
}

// Layout is the layout the writer writes with (WriterOptions.Layout, or
// the last SetLayout).
func (w *TableWriter) Layout() layout.Tables { return w.layout }

// SetLayout gives the writer a new layout (partition fields, sort order,
// compression) for the tables' next commits, which move each table to
// it (lakecat.LoadOrCreateLaid); the local state stays. Not for
// concurrent use with a write.
func (w *TableWriter) SetLayout(t layout.Tables) {
	w.layout = t
	w.Mirror.layout = t.Mirror
	if w.History != nil {
		w.History.SetLayout(t.History)
	}
}

// BatchInput is one batch for WriteBatch.
type BatchInput struct {
	Batch Batch
	// Tables are the kinds of tables the batch commits to ("bronze",
	// "mirror", "history": payload.TableSpec.Tables), for the rerun check.
	Tables []string
	// Rerun: an earlier attempt of the batch may have committed (the
	// activity was retried, or run again after its worker was lost).
	// WriteBatch then first looks for the batch's commits (FindCommitted)
	// and, when every table in Tables holds it, returns what they recorded
	// without calling Read: the batch's records are not needed, and may
	// be gone from Kafka.
	Rerun bool
	// Read fetches and decodes the batch (with the context WriteBatch
	// gives it, which carries the batch's table cache): the table's writer
	// and the batch's input for TableWriter.Write. Its Batch is set to
	// Batch unless Read sets it to Batch cut short (a batch bounded at a
	// consistent cut, payload.ApplyRequest.Cut: the same ID and Seq, its
	// ranges and end offsets lowered to where the cut ends it; another ID
	// or Seq is an error; a batch cut short to no range and no record
	// commits nothing: its end offsets are the last commit's). Called at
	// most once; its error is returned as it is.
	Read func(ctx context.Context) (*TableWriter, WriteInput, error)
}

// BatchOutput is what WriteBatch did: lakecat.Committed, when the rerun check
// found the batch committed in every table (nothing was read or written),
// else the write's output.
type BatchOutput struct {
	WriteOutput
	Committed *lakecat.Committed
}

// WriteBatch is the write protocol of one batch behind one call
// (docs/design.md, "Write path" and "Exactly-once batch bookkeeping"): in
// ctx's table cache or, without one, a cache of its own (WithTableCache,
// also given to Read), the rerun check (BatchInput.Rerun, FindCommitted),
// then Read, then TableWriter.Write. A caller that writes several batches
// in a row and makes every commit of the table meanwhile (a direct load's
// chunks) may give them one cache. Errors: FindCommitted's and Write's
// (see Write), and Read's unchanged.
func WriteBatch(ctx context.Context, cat catalog.Catalog, name TableName, in BatchInput) (BatchOutput, error) {
	if !lakecat.HasCache(ctx) {
		ctx = WithTableCache(ctx)
	}
	if in.Rerun {
		c, ok, err := lakecat.FindCommitted(ctx, cat, name, in.Batch, in.Tables)
		if err != nil {
			return BatchOutput{}, err
		}
		if ok {
			return BatchOutput{Committed: &c}, nil
		}
	}
	w, wi, err := in.Read(ctx)
	if err != nil {
		return BatchOutput{}, err
	}
	switch {
	case wi.Batch.ID == "":
		wi.Batch = in.Batch
	case wi.Batch.ID != in.Batch.ID || wi.Batch.Seq != in.Batch.Seq:
		return BatchOutput{}, fmt.Errorf("lake: batch %s (seq %d) read as batch %s (seq %d)", in.Batch.ID, in.Batch.Seq, wi.Batch.ID, wi.Batch.Seq)
	case len(wi.Batch.Ranges) == 0 && len(wi.Events) == 0 && len(wi.Bronze) == 0 && len(wi.Quarantine) == 0:
		// cut short to nothing (a table held at a consistent cut): its end
		// offsets are where the last commit left them, so it commits
		// nothing; a rerun reads it again and finds it empty again
		return BatchOutput{WriteOutput: WriteOutput{EndOffsets: wi.Batch.EndOffsets, Stages: map[string]float64{}}}, nil
	}
	out, err := w.Write(ctx, wi)
	return BatchOutput{WriteOutput: out}, err
}

// WriteInput is one decoded batch for TableWriter.Write.
type WriteInput struct {
	Batch  Batch
	Events []*cdc.Event // the batch's row changes, in record order (schemas' decoding)
	// Bronze holds every record of the batch as received, in record order
	// (also those that did not decode): bronze's rows, and the raw bytes a
	// quarantined row change is kept with.
	Bronze []BronzeRecord
	// Quarantine holds the records the decoder could not read.
	Quarantine []QuarantineRecord
	// SchemaDecision is an operator's decision on a blocked schema change
	// (DecisionEvolve, DecisionSkip) or "".
	SchemaDecision string
	// MaxQuarantine is the most records of one batch the quarantine takes;
	// more stop the batch with a *QuarantineLimitError.
	MaxQuarantine int
	// NoQuarantine leaves rejected row changes out without keeping them:
	// a re-apply of batches into a scratch table, whose own batches kept
	// them (validation). Quarantine must then be empty.
	NoQuarantine bool
	// Retype, when set, is called once Prepare has created the mirror or
	// changed it (with the mirror as it now is): when the table's types
	// read the batch's values otherwise, it returns the batch decoded
	// again with them (events, bronze and quarantine as above) and
	// redecoded true; the batch is then prepared again.
	Retype func(mirror *table.Table) (again WriteInput, redecoded bool, err error)
	// OnStage, when set, is told each stage as it starts after Prepare
	// ("mirror", "history", "write", "bronze"), for failure metrics.
	OnStage func(stage string)
	// KeyOf, when set, reads a serialized Kafka key as a row image of the
	// key columns (the table's decoder): a tombstone or an undecodable
	// record of an erased key is then stored without its raw bytes
	// (redactErased).
	KeyOf func(kafkaKey []byte) (*cdc.Row, bool)
	// Tally is the decoder's count of the batch's records (its Quarantined
	// is left to Write, which adds Prepare's rejections); Write records it
	// with every commit of the batch (Batch.Tally, PropBatchTally). nil
	// records none.
	Tally *BatchTally
	// FetchedPast is the batch's positions per partition its records show complete up to
	// (BatchTally.FetchedPast, hex); Write records it with the tally,
	// and the mirror keeps the highest per partition
	// (lakecat.PropFetchedPast). Nil: none.
	FetchedPast map[int32]string
	// NewestTx is the batch's GroupProgress.NewestTx, recorded with the
	// tally (BatchTally.NewestTx; the mirror keeps it per partition:
	// lakecat.PropNewestTx). Nil: none.
	NewestTx map[int32]TxAt
}

// WriteOutput is what TableWriter.Write did.
type WriteOutput struct {
	Added               []string // mirror columns added by the batch
	CarriedDeleteValues int      // see Prepared.CarriedDeleteValues
	// Quarantined holds the records kept in the quarantine table (those
	// of the decoder and of Prepare); Appended how many of them this call
	// appended (the rest a crashed attempt already had).
	Quarantined []QuarantineRecord
	Appended    int
	Keys        []cdc.Key // the primary keys of the row changes applied, in record order
	Bronze      BronzeResult
	Mirror      MirrorResult
	History     HistoryResult
	EndOffsets  Offsets // the mirror's recorded end offsets after the batch
	// Retyped: the batch was decoded again by WriteInput.Retype; the
	// input it returned is the one written.
	Retyped bool
	// Stages holds seconds per stage: prepare, stage, write,
	// commit_bronze, commit_mirror, commit_history.
	Stages map[string]float64
}

// Write applies one decoded batch (with ctx's table cache, or a new one:
// WithTableCache) to bronze, mirror and history exactly
// once: prepare (create or evolve the tables, type the row images,
// reject values that do not fit), quarantine, expand truncates, then
// stage and write the three tables' files (bronze on its own goroutine
// from the start, mirror and history concurrently once decided) and
// commit bronze → mirror → history, each commit carrying the batch's
// bookkeeping; the after-commit hook (WriterOptions.AfterCommit) runs
// after each. A batch whose mirror stage saw the local state rebuilt under
// it (ErrStateMoved) is staged once more.
//
// Errors: *SchemaBlockedError, *QuarantineLimitError, *ConformError-based
// rejections never (they go to the quarantine); catalog, storage and
// commit-conflict errors as the writers return them (retry the batch:
// what committed is found by FindCommitted).
func (w *TableWriter) Write(ctx context.Context, in WriteInput) (WriteOutput, error) {
	if !lakecat.HasCache(ctx) {
		ctx = WithTableCache(ctx)
	}
	out := WriteOutput{Stages: map[string]float64{}}
	t0 := time.Now()
	lap := func(name string) {
		now := time.Now()
		out.Stages[name] += now.Sub(t0).Seconds()
		t0 = now
	}
	stage := func(s string) {
		if in.OnStage != nil {
			in.OnStage(s)
		}
	}
	// the mirror and history exist before bronze holds any row change (see
	// Recover), and events are typed and keyed the way the tables store them
	prep, err := w.Mirror.Prepare(ctx, in.Events, WithSchemaDecision(in.SchemaDecision))
	if err != nil {
		return out, err
	}
	if prep.Table != nil && in.Retype != nil {
		again, redecoded, err := in.Retype(prep.Table)
		if err != nil {
			return out, err
		}
		if redecoded {
			again.Retype, again.OnStage, out.Retyped = nil, in.OnStage, true
			again.SchemaDecision, again.MaxQuarantine, again.NoQuarantine, again.Batch = in.SchemaDecision, in.MaxQuarantine, in.NoQuarantine, in.Batch
			again.KeyOf, again.FetchedPast, again.NewestTx = in.KeyOf, in.FetchedPast, in.NewestTx
			if again.Tally == nil {
				again.Tally = in.Tally
			}
			in = again
			if prep, err = w.Mirror.Prepare(ctx, in.Events, WithSchemaDecision(in.SchemaDecision)); err != nil {
				return out, err
			}
		}
	}
	out.Added, out.CarriedDeleteValues = prep.Added, prep.CarriedDeleteValues
	if prep.Table != nil && w.History != nil {
		if _, err := w.History.Ensure(ctx, prep.Table); err != nil {
			return out, err
		}
	}
	quarantine := in.Quarantine
	if len(prep.Rejected) > 0 && !in.NoQuarantine {
		at := make(map[[2]int64]int, len(in.Bronze))
		for i := len(in.Bronze) - 1; i >= 0; i-- { // the first record at an origin wins
			at[[2]int64{int64(in.Bronze[i].Partition), in.Bronze[i].Offset}] = i
		}
		for _, rej := range prep.Rejected {
			q := QuarantineRecord{Partition: rej.Origin.Partition, Offset: rej.Origin.Offset, Stage: rej.Stage, Reason: rej.Err.Error()}
			if i, ok := at[[2]int64{int64(rej.Origin.Partition), rej.Origin.Offset}]; ok {
				r := in.Bronze[i]
				q.Key, q.Value, q.Timestamp = r.Key, r.Value, r.Timestamp
			}
			quarantine = append(quarantine, q)
		}
	}
	setBronzeKeys(in.Bronze, prep.Events)
	w.Mirror.redactErased(in.Bronze, quarantine, prep.Events, in.KeyOf)
	if len(quarantine) > in.MaxQuarantine {
		return out, &QuarantineLimitError{Records: len(quarantine), Limit: in.MaxQuarantine, First: quarantine[0]}
	}
	if len(quarantine) > 0 {
		if out.Appended, err = AppendQuarantine(ctx, w.cat, w.name, in.Batch, quarantine); err != nil {
			return out, err
		}
		out.Quarantined = quarantine
	}
	if in.Tally != nil && in.Batch.Load == nil {
		t := *in.Tally
		t.Quarantined = len(quarantine)
		if len(in.FetchedPast) > 0 {
			t.FetchedPast = in.FetchedPast
		}
		if len(in.NewestTx) > 0 {
			t.NewestTx = in.NewestTx
		}
		in.Batch.Tally = &t
	}
	out.Keys = make([]cdc.Key, 0, len(prep.Events))
	for _, e := range prep.Events {
		if e.Key != "" {
			out.Keys = append(out.Keys, e.Key)
		}
	}
	events, err := w.Mirror.ExpandTruncates(ctx, prep.Events)
	if err != nil {
		return out, err
	}
	bronze := in.Bronze
	if w.withoutBronze {
		bronze = nil
		if prep.Table == nil { // no mirror yet to record a table truncate on: the namespace keeps it
			if err := recordPendingTruncates(ctx, w.cat, w.name, prep.Events); err != nil {
				return out, err
			}
		}
	}
	lap("prepare")
	return out, w.write(ctx, in.Batch, events, bronze, &out, stage, lap)
}

// write stages, writes and commits one prepared batch (the second half
// of Write). The work is staged so that both cores are used: the bronze
// file is written while the mirror's and history's changes are decided,
// then the mirror and history files are written concurrently with it;
// the commits follow in the order bronze, mirror, history (a batch's
// bronze rows are committed before any table shows its changes, so a
// late-key rebuild after a crash finds them). bronze is nil for a table
// without bronze.
func (w *TableWriter) write(ctx context.Context, b Batch, events []*cdc.Event, bronze []BronzeRecord, out *WriteOutput,
	stage func(string), lap func(string)) error {
	type bronzeOut struct {
		st  *BronzeStage
		err error
	}
	bronzeDone := make(chan bronzeOut, 1)
	go func() {
		if bronze == nil { // a table without bronze
			bronzeDone <- bronzeOut{}
			return
		}
		st, err := StageBronze(ctx, w.cat, w.name, b, bronze, w.layout.BronzeSpec())
		bronzeDone <- bronzeOut{st, err}
	}()
	waitBronze := func() (*BronzeStage, error) {
		o := <-bronzeDone
		bronzeDone <- o
		return o.st, o.err
	}
	stage("mirror")
	var ms *MirrorStage
	var hs *scd2.HistoryStage
	var err error
	for attempt := 0; ; attempt++ {
		if ms, err = w.Mirror.Stage(ctx, b, events); err != nil {
			waitBronze()
			return err
		}
		if w.History == nil {
			break
		}
		stage("history")
		if hs, err = w.History.StageAfter(ctx, b, events, ms.PlanFor(w.History.State(), b)); err == nil {
			break
		}
		if !errors.Is(err, ErrStateMoved) || attempt > 0 {
			waitBronze()
			return err
		}
	}
	lap("stage")
	stage("write")
	mirrorWritten := make(chan error, 1)
	go func() { mirrorWritten <- ms.Write(ctx) }()
	var herr error
	if hs != nil {
		herr = hs.Write(ctx)
	}
	merr := <-mirrorWritten
	bs, berr := waitBronze()
	for _, err := range []error{berr, merr, herr} {
		if err != nil {
			return err
		}
	}
	lap("write")
	if bs != nil {
		stage("bronze")
		if out.Bronze, err = bs.Commit(ctx); err != nil {
			return err
		}
		if err := w.committed(ctx, b, "bronze"); err != nil {
			return err
		}
		lap("commit_bronze")
	}
	stage("mirror")
	if out.Mirror, out.EndOffsets, err = ms.Commit(ctx); err != nil {
		return err
	}
	if err := w.committed(ctx, b, "mirror"); err != nil {
		return err
	}
	lap("commit_mirror")
	if hs != nil {
		stage("history")
		if out.History, err = hs.Commit(ctx); err != nil {
			return err
		}
		if err := w.committed(ctx, b, "history"); err != nil {
			return err
		}
	}
	lap("commit_history")
	return nil
}

// committed runs the after-commit hook for table ("bronze", "mirror",
// "history") of batch b.
func (w *TableWriter) committed(ctx context.Context, b Batch, table string) error {
	if w.afterCommit == nil {
		return nil
	}
	return w.afterCommit(ctx, b, table)
}

// Rebuild re-folds the given keys from all their changes (byKey: every
// row change ever applied per key, prepared like past changes) into the
// mirror and, when the table has one, the history, each in one commit
// (docs/design.md rule 6, "late events"). When bronze retention has
// dropped records and a key's stored rows name a change byKey lacks
// (TrimmedPast), nothing is written and the error is a
// *PastTrimmedError. When a key's changes show its MySQL or MariaDB binlog
// started over (merge.FindBinlogRestart: byKey holds every copy of every
// change with its Kafka partition and offset, so delivery order is known
// also for changes read back from bronze), nothing is written and the
// error is a *BinlogRestartedError for the first such key in key order.
// Errors: also the writers'.
func (w *TableWriter) Rebuild(ctx context.Context, byKey map[cdc.Key][]*cdc.Event) (mirror, history RebuildResult, err error) {
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		if r, ok := merge.FindBinlogRestart(byKey[k]); ok {
			return mirror, history, w.Mirror.binlogRestarted(r, false)
		}
	}
	trimmed, before, err := w.TrimmedPast(ctx, byKey)
	if err != nil {
		return mirror, history, err
	}
	if len(trimmed) > 0 {
		return mirror, history, pastTrimmed(w.name, before, trimmed)
	}
	if err := w.Mirror.fillLoggedByKey(ctx, byKey); err != nil {
		return mirror, history, err
	}
	if mirror, err = w.Mirror.Rebuild(ctx, byKey); err != nil || w.History == nil {
		return mirror, history, err
	}
	history, err = w.History.Rebuild(ctx, byKey)
	return mirror, history, err
}

// Pending returns the keys waiting for a rebuild: the history's pending
// set, or the mirror's for a table without history.
func (w *TableWriter) Pending(ctx context.Context) ([]cdc.Key, error) {
	if w.History != nil {
		return w.History.Pending(ctx)
	}
	return w.Mirror.Pending(ctx)
}

// setBronzeKeys copies each row change's primary key, as Prepare typed
// it, to its bronze row (the one at the same partition and offset; of
// several events of one record, the last one's). Events come in record
// order, so one walk over both finds every row; events out of that order
// (none that decode and Prepare make) are found through a map.
func setBronzeKeys(bronze []BronzeRecord, events []*cdc.Event) {
	j := 0
	for n, e := range events {
		for j < len(bronze) && (bronze[j].Partition != e.Origin.Partition || bronze[j].Offset != e.Origin.Offset) {
			j++
		}
		if j == len(bronze) {
			setBronzeKeysByMap(bronze, events[n:])
			return
		}
		if e.Key != "" {
			bronze[j].PK = e.Key
		}
	}
}

// setBronzeKeysByMap is setBronzeKeys for events in any order.
func setBronzeKeysByMap(bronze []BronzeRecord, events []*cdc.Event) {
	at := make(map[[2]int64]int, len(bronze))
	for i, b := range bronze {
		at[[2]int64{int64(b.Partition), b.Offset}] = i
	}
	for _, e := range events {
		if e.Key == "" {
			continue
		}
		if i, ok := at[[2]int64{int64(e.Origin.Partition), e.Origin.Offset}]; ok {
			bronze[i].PK = e.Key
		}
	}
}
