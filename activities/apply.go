package activities

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.temporal.io/sdk/activity"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/cut"
	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/schemas"
)

// ApplyBatch applies one planned batch exactly once: it reads the batch's
// exact offset ranges from Kafka, decodes them, appends the records the
// bronze table does not hold yet, then merges the row changes into the
// mirror in one row-delta commit. Both commits carry the batch id and end
// offsets; an attempt that finds the batch already committed (a retry
// after a crash) writes nothing and returns the recorded result. A batch
// applied while the worker has begun to stop returns with Leaving (and
// Release when it left no late keys) after writing the table's sidecar
// (sidecars on): the workflow claims the table again (leave.go).
//
// A request bounded at a consistent cut (req.Cut, docs/design.md
// "Batches cut at W") applies, per partition, only the batch's records
// below the first whose source position is above the cut's W
// (cut.CutOffset) and ends there: the commits record those end offsets,
// the rest is the next batch's, and no next batch is prefetched. The
// records are decoded once for their positions and the prefix again for
// the write; without a bound nothing of this runs.
//
// Errors: undecodable records and values that do not fit their columns
// are non-retryable (UndecodableRecord, ValueDoesNotFit) and name the
// record; a retention gap is non-retryable (KafkaRetentionGap); Kafka,
// catalog, storage and commit-conflict errors are retried; a batch still
// waiting for the table's lock when the worker begins to stop fails with
// the benign, retryable WorkerLeaving before reading anything.
func (a *Activities) ApplyBatch(ctx context.Context, req ApplyRequest) (_ ApplyResult, err error) {
	spec := req.Spec.Defaults()
	if err := a.checkCatalog(spec); err != nil {
		return ApplyResult{}, err
	}
	b := req.Batch
	st, name, err := a.state(spec)
	if err != nil {
		return ApplyResult{}, badSpec(err)
	}
	stage := "lock" // heartbeats also while an earlier attempt on this worker holds the table
	stop := keepAlive(ctx, heartbeatEvery, func() any { return stageDetail(st, stage) })
	defer stop()
	if err := a.lockOrLeave(ctx, &st.mu, spec.Table); err != nil { // the worker stops before the batch began: the next one applies it
		return ApplyResult{BatchID: b.ID, BatchSeq: b.Seq}, err
	}
	defer st.mu.Unlock()
	defer func() { st.used = time.Now() }() // idle from the batch's end (ReleaseIdleStates)
	stage = "fetch"
	started := time.Now()
	defer func() {
		if err != nil {
			a.observeFailure(spec.Table, stage, err)
		}
	}()
	var next *Plan
	prefetched := false
	var bound func([]schemas.Record, *decoded) ([]schemas.Record, lake.Batch, error)
	if req.Cut != nil {
		bound = a.cutBound(st, b, *req.Cut)
	}
	// fetch (or take the prefetched records) and decode, unless a rerun
	// finds the batch committed in every table (then its records are not
	// needed: they may be gone)
	res, _, committed, err := a.writeBatch(ctx, st, name, spec, b, req.Rerun || retried(ctx), func(ctx context.Context) ([]schemas.Record, *decoded, error) {
		recs, pre, ok := st.prefetch.take(ctx, b)
		prefetched = ok
		if !ok {
			fetched, err := a.Kafka.Fetch(ctx, spec.Topic, kafkaRanges(b.Ranges))
			if err != nil {
				return nil, nil, classify(err)
			}
			recs = toRecords(fetched)
		}
		if bound == nil {
			next = a.startPrefetch(st, spec, b) // the next batch, while this one applies
		}
		if ok {
			return recs, &pre, nil
		}
		return recs, nil, nil
	}, bound, req.SchemaDecision, &stage)
	if committed != nil {
		res := committedResult(b, *committed)
		a.observeBatch(spec.Table, &res, time.Since(started))
		a.logBatch(ctx, spec, &res, time.Since(started))
		a.pos.set(spec.Table, spec.Topic, res.EndOffsets)
		a.leaving(ctx, &res)
		return res, nil
	}
	res.Prefetched = prefetched
	if err != nil {
		return res, err
	}
	a.observeBatch(spec.Table, &res, time.Since(started))
	a.logBatch(ctx, spec, &res, time.Since(started))
	if len(b.Ranges) > 0 && b.Load == nil {
		a.pos.set(spec.Table, spec.Topic, res.EndOffsets)
	}
	a.owner.touch(spec.Table, time.Now())
	if next != nil {
		a.observeLag(spec.Table, *next)
		res.Next = next
	}
	res.Release = a.release(ctx, spec.Table, res.History.Pending+res.Mirror.Pending)
	a.leaving(ctx, &res)
	if res.Leaving {
		a.owner.drop(spec.Table) // handed over (leaveTable): the sidecar is written here
	}
	a.writeSidecar(ctx, st, res.Release || res.Leaving)
	return res, nil
}

// leaving marks res, a batch applied by a worker that has begun to stop
// (workerStop), Leaving, and Release when it left no late keys pending
// (so that workflows before the hand-over-on-stop version, which read
// only Release, claim the table again at once too).
func (a *Activities) leaving(ctx context.Context, res *ApplyResult) {
	if !closed(a.workerStop(ctx)) {
		return
	}
	res.Leaving = true
	if res.History.Pending+res.Mirror.Pending == 0 {
		res.Release = true
	}
}

// writeSidecar writes the table's state sidecar after a batch, every
// SidecarEvery batches or when the table was released (the next worker
// loads it); a failure is logged, never the batch's.
func (a *Activities) writeSidecar(ctx context.Context, st *tableState, released bool) {
	if a.SidecarEvery <= 0 || st.mirror == nil {
		return
	}
	st.sinceSidecar++
	if !released && st.sinceSidecar < a.SidecarEvery {
		return
	}
	st.sinceSidecar = 0
	if err := st.mirror.State().WriteSidecar(ctx); err != nil && activity.IsActivity(ctx) {
		activity.GetLogger(ctx).Warn("state sidecar not written", "table", st.spec.Table, "error", err)
	}
}

// retried reports whether this is a retry of the activity (attempt 2 or
// later); calls outside an activity never are.
func retried(ctx context.Context) bool {
	return activity.IsActivity(ctx) && activity.GetInfo(ctx).Attempt > 1
}

// committedResult is the result of batch b found committed in every table
// (lakecat.FindCommitted): the tables' recorded counts, and the batch's
// record counts from the tally its commits recorded (lake.BatchTally), so
// a retried batch counts exactly what the attempt that committed it
// counted. For a batch committed without a tally (before it was recorded)
// Records is bronze's count, or the ranges' size without bronze, Changes
// the mirror's row changes, and the counts of records that are no row
// changes (tombstones, transaction metadata, quarantined) stay 0.
func committedResult(b lake.Batch, c lakecat.Committed) ApplyResult {
	res := ApplyResult{BatchID: b.ID, BatchSeq: b.Seq, Bronze: c.Bronze, Mirror: c.Mirror, History: c.History,
		EndOffsets: c.EndOffsets, Records: c.Bronze.Records, Changes: c.Mirror.Events}
	if t := c.Tally; t != nil {
		res.Records, res.Changes, res.Tombstones, res.TxMetadata = t.Records, t.Changes, t.Tombstones, t.TxMetadata
		res.Quarantined, res.SnapshotRows, res.SnapshotLast = t.Quarantined, t.SnapshotRows, t.SnapshotLast
		res.SourceTsFromKafka = t.SourceTsFromKafka
		return res
	}
	if res.Records == 0 {
		for _, r := range b.Ranges {
			res.Records += int(r.To - r.From)
		}
	}
	return res
}

// applyRecords applies one batch of records (rendered by a direct load,
// or a repair's) to bronze, mirror and history (writeBatch, no rerun
// check), after decoding them (pre: their decoding done ahead, or nil;
// decision: an operator's schema decision, or ""). It returns the result
// and the keys of the row changes applied. stage tracks where it is (for
// failure metrics). The caller holds st.mu.
func (a *Activities) applyRecords(ctx context.Context, st *tableState, name lake.TableName, spec TableSpec, b lake.Batch,
	recs []schemas.Record, pre *decoded, decision string, stage *string) (ApplyResult, []cdc.Key, error) {
	res, keys, _, err := a.writeBatch(ctx, st, name, spec, b, false, func(context.Context) ([]schemas.Record, *decoded, error) {
		return recs, pre, nil
	}, nil, decision, stage)
	return res, keys, err
}

// writeBatch writes batch b through the table's write protocol, the one
// call lake.WriteBatch: with rerun, the batch found committed in every
// table is returned (committed: nothing read or written); otherwise read
// gives its records (and their decoding done ahead, or nil), which bound,
// when not nil, cuts short (the records kept and b cut short, to be
// decoded again), and which are decoded and written (batchInput, then
// batchResult). It returns the
// result, the keys of the row changes applied and, for a batch found
// committed, what its tables recorded. Errors: read's as they are,
// batchResult's. The caller holds st.mu.
func (a *Activities) writeBatch(ctx context.Context, st *tableState, name lake.TableName, spec TableSpec, b lake.Batch, rerun bool,
	read func(context.Context) ([]schemas.Record, *decoded, error), bound func([]schemas.Record, *decoded) ([]schemas.Record, lake.Batch, error),
	decision string, stage *string) (ApplyResult, []cdc.Key, *lakecat.Committed, error) {
	res := ApplyResult{BatchID: b.ID, BatchSeq: b.Seq, StageSeconds: map[string]float64{}}
	var dec *decoded
	var readErr error        // final as it is
	var cutShort *lake.Batch // b cut short by bound
	var pm marks             // the records' partition marks: the mirror's and the group's
	out, err := lake.WriteBatch(ctx, a.Catalog, name, lake.BatchInput{Batch: b, Tables: spec.Tables(), Rerun: rerun,
		Read: func(ctx context.Context) (*lake.TableWriter, lake.WriteInput, error) {
			recs, pre, err := read(ctx)
			if err == nil && bound != nil {
				var cb lake.Batch
				if recs, cb, err = bound(recs, pre); err == nil {
					pre, cutShort = nil, &cb
				}
			}
			if err != nil {
				readErr = err
				return nil, lake.WriteInput{}, err
			}
			var w *lake.TableWriter
			var in lake.WriteInput
			w, in, dec, readErr = a.batchInput(ctx, st, name, spec, recs, pre, decision, stage, &res)
			if readErr == nil && b.Load == nil {
				readErr = foreignCollection(spec, b, dec.events)
			}
			if cutShort != nil {
				in.Batch = *cutShort
			}
			if readErr == nil && b.Load == nil {
				pm.fetched, pm.newest = partitionMarks(dec.events)
				in.FetchedPast, in.NewestTx = pm.fetched, pm.newest // the mirror keeps them: lakecat.PropFetchedPast, PropNewestTx
			}
			return w, in, readErr
		}})
	switch {
	case readErr != nil:
		return res, nil, nil, readErr
	case out.Committed != nil:
		return res, nil, out.Committed, nil
	}
	if cutShort != nil {
		b = *cutShort
	}
	keys, err := a.batchResult(spec, b, &res, dec, pm, out.WriteOutput, err)
	return res, keys, nil, err
}

// cutBound is the bound of batch b at consistent cut c
// (payload.ApplyRequest.Cut): given the batch's records in fetch order
// (each partition's in offset order) and their decoding done ahead (or
// nil, or of an older decoder generation: they are decoded here), it
// returns the records below each partition's cut offset
// (cut.CutOffset over the change events' positions) and b with its
// ranges and end offsets lowered to those offsets (a range left empty is
// dropped). Errors: a W that is not hex or of another width than the
// table's positions (non-retryable, InvalidTableSpec), decodeAll's.
func (a *Activities) cutBound(st *tableState, b lake.Batch, c payload.CutBound) func([]schemas.Record, *decoded) ([]schemas.Record, lake.Batch, error) {
	return func(recs []schemas.Record, pre *decoded) ([]schemas.Record, lake.Batch, error) {
		w, err := cdc.ParseSeqHex(c.W)
		if err == nil && w == "" {
			err = errors.New("empty")
		}
		if err != nil {
			return nil, b, badSpec(fmt.Errorf("batch %s bounded at cut %d: W %q is not a position: %w", b.ID, c.Number, c.W, err))
		}
		if pre == nil || pre.gen != st.decoders.generation() {
			d, err := decodeAll(st.decoders, recs)
			if err != nil {
				return nil, b, err
			}
			pre = &d
		}
		at := map[int32][]cut.At{}
		for _, ev := range pre.events {
			at[ev.Origin.Partition] = append(at[ev.Origin.Partition], cut.At{Offset: ev.Origin.Offset, Seq: ev.Seq})
		}
		out := b
		out.Ranges, out.EndOffsets = nil, maps.Clone(b.EndOffsets)
		ends := map[int32]int64{}
		for _, r := range b.Ranges {
			o, err := cut.CutOffset(at[r.Partition], w, r.To)
			if err != nil {
				return nil, b, badSpec(fmt.Errorf("batch %s bounded at cut %d, partition %d: %w", b.ID, c.Number, r.Partition, err))
			}
			o = max(o, r.From)
			ends[r.Partition] = o
			if o > r.From {
				out.Ranges = append(out.Ranges, lake.Range{Partition: r.Partition, From: r.From, To: o})
			}
			if o < r.To {
				out.EndOffsets[r.Partition] = o
			}
		}
		kept := recs[:0:0]
		for _, r := range recs {
			if e, ok := ends[r.Partition]; !ok || r.Offset < e {
				kept = append(kept, r)
			}
		}
		return kept, out, nil
	}
}

// batchInput is the input of one batch of records for the table's writer:
// it settles the table's types (st.settleTypes), decodes recs (or takes
// pre, their decoding done ahead by a prefetch, when the decoders have
// not changed since), settles the key columns (st.settleKeys) and returns
// the writer and its input, and the decoding (which the input's Retype
// replaces when the batch changes the mirror's types). It sets res's
// Records, decode seconds and key columns, and tracks the stage. ctx is
// the batch's (lake.WriteBatch's, with its table cache).
func (a *Activities) batchInput(ctx context.Context, st *tableState, name lake.TableName, spec TableSpec, recs []schemas.Record, pre *decoded,
	decision string, stage *string, res *ApplyResult) (*lake.TableWriter, lake.WriteInput, *decoded, error) {
	nrecs := pre.recordCount(recs)
	res.Records = nrecs
	*stage = "decode"
	t0 := time.Now()
	if err := st.settleTypes(ctx, a, name); err != nil {
		return nil, lake.WriteInput{}, nil, err
	}
	dec := new(decoded)
	if pre != nil && (pre.typed || pre.gen == st.decoders.generation()) {
		*dec = *pre
	} else {
		var err error
		if *dec, err = decodeAll(st.decoders, recs); err != nil {
			return nil, lake.WriteInput{}, nil, err
		}
	}
	res.StageSeconds["decode"] = time.Since(t0).Seconds()
	if err := st.settleKeys(ctx, a, name); err != nil {
		return nil, lake.WriteInput{}, nil, err
	}
	w := st.tableWriter(a, name)
	res.KeyColumns = st.keyCols
	return w, lake.WriteInput{
		Events: dec.events, Bronze: dec.bronze, Quarantine: dec.quarantine,
		SchemaDecision: decision, MaxQuarantine: spec.MaxQuarantine,
		Retype: func(mirror *table.Table) (lake.WriteInput, bool, error) {
			if !st.typesFrom(mirror) || dec.typed { // typed events read no type from the table
				return lake.WriteInput{}, false, nil
			}
			// the batch created the mirror or changed its types: values the
			// table's types read otherwise (rejected, or exact decimals read
			// as JSON numbers through float64) are decoded again with them
			again, err := decodeAll(st.decoders, recs)
			if err != nil {
				return lake.WriteInput{}, false, err
			}
			*dec = again
			return lake.WriteInput{Events: dec.events, Bronze: dec.bronze, Quarantine: dec.quarantine, Tally: dec.counts.tally(len(recs))}, true, nil
		},
		OnStage: func(s string) { *stage = s },
		KeyOf:   st.decoders.keyOf,
		Tally:   dec.counts.tally(nrecs),
	}, dec, nil
}

// batchResult fills res from what the writer did with batch b (out, err),
// adding dec's counts and, for a table with a group, its report (with
// pm, the records' partition marks), and returns the keys of the row
// changes applied.
// Errors: a quarantine limit as quarantineLimit's non-retryable error,
// others classified.
func (a *Activities) batchResult(spec TableSpec, b lake.Batch, res *ApplyResult, dec *decoded, pm marks, out lake.WriteOutput, err error) ([]cdc.Key, error) {
	for k, v := range out.Stages {
		res.StageSeconds[k] += v
	}
	if dec != nil {
		dec.counts.add(res)
	}
	res.AddedColumns = out.Added
	res.CarriedDeleteValues = out.CarriedDeleteValues
	res.Quarantined = len(out.Quarantined)
	res.Bronze, res.Mirror, res.History, res.EndOffsets = out.Bronze, out.Mirror, out.History, out.EndOffsets
	if a.Metrics != nil && out.Appended > 0 {
		for _, r := range out.Quarantined[len(out.Quarantined)-out.Appended:] {
			a.Metrics.Quarantined(spec.Table, r.Stage, 1)
		}
	}
	var ql *lake.QuarantineLimitError
	if errors.As(err, &ql) {
		return nil, quarantineLimit(spec, b, ql)
	}
	if err != nil {
		return nil, classify(err)
	}
	if spec.Group != "" && dec != nil && b.Load == nil && len(b.Ranges) > 0 { // Kafka's records: a direct load's fetch no partition
		res.Group = groupProgress(dec.events, spec.DataCollection(), pm)
	}
	return out.Keys, nil
}

// toRecords converts fetched Kafka records.
func toRecords(recs []*kgo.Record) []schemas.Record {
	out := make([]schemas.Record, len(recs))
	for i, r := range recs {
		out[i] = schemas.Record{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp.UnixMicro()}
		for _, h := range r.Headers {
			out[i].Headers = append(out[i].Headers, schemas.Header{Key: h.Key, Value: h.Value})
		}
	}
	return out
}

// keyMismatch is the non-retryable error for a table whose spec names
// other key columns than its existing mirror records.
func keyMismatch(name lake.TableName, recorded, spec []string) error {
	return badSpec(fmt.Errorf("table %s: the mirror is keyed by %s, the table spec by %s; a mirror cannot change its key (rows would merge under the wrong key): start the table with --key %s, or mirror into a new table name",
		name, strings.Join(recorded, ","), strings.Join(spec, ","), strings.Join(recorded, ",")))
}

func kafkaRanges(rs []lake.Range) []kafka.Range {
	out := make([]kafka.Range, len(rs))
	for i, r := range rs {
		out[i] = kafka.Range{Partition: r.Partition, From: r.From, To: r.To}
	}
	return out
}

func (a *Activities) afterCommit(ctx context.Context, b lake.Batch, table string) error {
	if a.AfterCommit == nil {
		return nil
	}
	return a.AfterCommit(ctx, b, table)
}
