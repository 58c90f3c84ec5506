package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/schemas"
)

// ApplyBatch applies one planned batch exactly once: it reads the batch's
// exact offset ranges from Kafka, decodes them, appends the records the
// bronze table does not hold yet, then merges the row changes into the
// mirror in one row-delta commit. Both commits carry the batch id and end
// offsets; an attempt that finds the batch already committed (a retry
// after a crash) writes nothing and returns the recorded result.
//
// Errors: undecodable records and values that do not fit their columns
// are non-retryable (UndecodableRecord, ValueDoesNotFit) and name the
// record; a retention gap is non-retryable (KafkaRetentionGap); Kafka,
// catalog, storage and commit-conflict errors are retried.
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
	st.mu.Lock()
	defer st.mu.Unlock()
	stage := "fetch"
	stop := keepAlive(ctx, 5*time.Second, func() any { return stage })
	defer stop()
	started := time.Now()
	defer func() {
		if err != nil {
			a.observeFailure(spec.Table, stage, err)
		}
	}()
	if req.Rerun || retried(ctx) { // a batch committed before its attempt was lost needs no records (they may be gone)
		if c, ok, err := lake.FindCommitted(ctx, a.Catalog, name, b, spec.Tables()); err != nil {
			return ApplyResult{BatchID: b.ID, BatchSeq: b.Seq}, classify(err)
		} else if ok {
			res := committedResult(b, c)
			a.observeBatch(spec.Table, &res, time.Since(started))
			a.pos.set(spec.Table, spec.Topic, res.EndOffsets)
			return res, nil
		}
	}
	recs, dec, prefetched := st.prefetch.take(ctx, b)
	if !prefetched {
		fetched, err := a.Kafka.Fetch(ctx, spec.Topic, kafkaRanges(b.Ranges))
		if err != nil {
			return ApplyResult{BatchID: b.ID, BatchSeq: b.Seq}, classify(err)
		}
		recs = toRecords(fetched)
	}
	next := a.startPrefetch(st, spec, b) // the next batch, while this one applies
	var pre *decoded
	if prefetched {
		pre = &dec
	}
	res, _, err := a.applyRecords(ctx, st, name, spec, b, recs, pre, req.SchemaDecision, &stage)
	res.Prefetched = prefetched
	if err != nil {
		return res, err
	}
	a.observeBatch(spec.Table, &res, time.Since(started))
	if len(b.Ranges) > 0 && b.Load == nil {
		a.pos.set(spec.Table, spec.Topic, res.EndOffsets)
	}
	a.owner.touch(spec.Table, time.Now())
	if next != nil {
		a.observeLag(spec.Table, *next)
		res.Next = next
	}
	res.Release = a.release(ctx, spec.Table, res.History.Pending+res.Mirror.Pending)
	a.writeSidecar(ctx, st, res.Release)
	return res, nil
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
// (lake.FindCommitted): the tables' recorded counts. Records is bronze's
// count, or the ranges' size without bronze; Changes is the mirror's row
// changes. Counts of records that are no row changes (tombstones,
// transaction metadata, quarantined) are not recorded and stay 0.
func committedResult(b lake.Batch, c lake.Committed) ApplyResult {
	res := ApplyResult{BatchID: b.ID, BatchSeq: b.Seq, Bronze: c.Bronze, Mirror: c.Mirror, History: c.History,
		EndOffsets: c.EndOffsets, Records: c.Bronze.Records, Changes: c.Mirror.Events}
	if res.Records == 0 {
		for _, r := range b.Ranges {
			res.Records += int(r.To - r.From)
		}
	}
	return res
}

// applyRecords applies one batch of records (from Kafka, or rendered by a
// direct load) to bronze, mirror and history, in that order, quarantining
// what cannot be applied. pre is the records' decoding when it was done
// ahead (a prefetch), nil to decode them here. It returns the result and
// the keys of the row changes applied. stage tracks where it is (for
// failure metrics). Each table is loaded once for the batch
// (lake.WithTableCache). The caller holds st.mu.
func (a *Activities) applyRecords(ctx context.Context, st *tableState, name lake.TableName, spec TableSpec, b lake.Batch,
	recs []schemas.Record, pre *decoded, decision string, stage *string) (ApplyResult, []cdc.Key, error) {
	ctx = lake.WithTableCache(ctx)
	res := ApplyResult{BatchID: b.ID, BatchSeq: b.Seq, Records: len(recs), StageSeconds: map[string]float64{}}
	*stage = "decode"
	t0 := time.Now()
	lap := func(name string) {
		now := time.Now()
		res.StageSeconds[name] += now.Sub(t0).Seconds()
		t0 = now
	}
	if err := a.ensureTableTypes(ctx, st, name); err != nil {
		return res, nil, err
	}
	var dec decoded
	if pre != nil && pre.gen == st.decoders.generation() {
		dec = *pre
	} else {
		var err error
		if dec, err = decodeAll(st.decoders, recs); err != nil {
			return res, nil, err
		}
	}
	lap("decode")
	if err := a.ensureKeyColumns(ctx, st, name); err != nil {
		return res, nil, err
	}
	mirror, history := st.writers(a, name)
	res.KeyColumns = st.keyCols
	// the mirror and history exist before bronze holds any row change (see
	// Recover), and events are typed and keyed the way the tables store them
	prep, err := mirror.Prepare(ctx, dec.events, lake.WithSchemaDecision(decision))
	if err != nil {
		return res, nil, classify(err)
	}
	if prep.Table != nil && st.typesFrom(prep.Table) {
		// the batch created the mirror or changed its types: values the
		// table's types read otherwise (rejected, or exact decimals read
		// as JSON numbers through float64) are decoded again with them
		if dec, err = decodeAll(st.decoders, recs); err != nil {
			return res, nil, err
		}
		if prep, err = mirror.Prepare(ctx, dec.events, lake.WithSchemaDecision(decision)); err != nil {
			return res, nil, classify(err)
		}
	}
	dec.counts.add(&res)
	events, bronze, quarantine := dec.events, dec.bronze, dec.quarantine
	res.AddedColumns = prep.Added
	res.CarriedDeleteValues = prep.CarriedDeleteValues
	if prep.Table != nil && history != nil {
		if _, err := history.Ensure(ctx, prep.Table); err != nil {
			return res, nil, classify(err)
		}
	}
	for _, rej := range prep.Rejected {
		quarantine = append(quarantine, quarantineOf(recs, rej.Origin, rej.Stage, rej.Err.Error()))
	}
	setBronzeKeys(bronze, prep.Events)
	if err := a.quarantine(ctx, spec, name, b, quarantine, &res); err != nil {
		return res, nil, err
	}
	keys := make([]cdc.Key, 0, len(prep.Events))
	for _, e := range prep.Events {
		if e.Key != "" {
			keys = append(keys, e.Key)
		}
	}
	if events, err = mirror.ExpandTruncates(ctx, prep.Events); err != nil {
		return res, nil, classify(err)
	}
	lap("prepare")
	if spec.WithoutBronze {
		bronze = nil
	}
	if err := a.writeBatch(ctx, mirror, history, name, b, events, bronze, &res, stage, lap); err != nil {
		return res, nil, err
	}
	return res, keys, nil
}

// writeBatch writes one prepared batch to the three tables. The work is
// staged so that both cores are used: the bronze file is written while
// the mirror's and history's changes are decided, then the mirror and
// history files are written concurrently with it; the commits follow in
// the order bronze, mirror, history (a batch's bronze rows are committed
// before any table shows its changes, so a late-key rebuild after a crash
// finds them). bronze is nil for a table without bronze.
func (a *Activities) writeBatch(ctx context.Context, mirror *lake.MirrorWriter, history *lake.HistoryWriter, name lake.TableName,
	b lake.Batch, events []*cdc.Event, bronze []lake.BronzeRecord, res *ApplyResult, stage *string, lap func(string)) error {
	type bronzeOut struct {
		st  *lake.BronzeStage
		err error
	}
	bronzeDone := make(chan bronzeOut, 1)
	go func() {
		if bronze == nil { // a table without bronze
			bronzeDone <- bronzeOut{}
			return
		}
		st, err := lake.StageBronze(ctx, a.Catalog, name, b, bronze)
		bronzeDone <- bronzeOut{st, err}
	}()
	waitBronze := func() (*lake.BronzeStage, error) {
		o := <-bronzeDone
		bronzeDone <- o
		return o.st, o.err
	}
	*stage = "mirror"
	var ms *lake.MirrorStage
	var hs *lake.HistoryStage
	var err error
	for attempt := 0; ; attempt++ {
		if ms, err = mirror.Stage(ctx, b, events); err != nil {
			waitBronze()
			return classify(err)
		}
		if history == nil {
			break
		}
		*stage = "history"
		if hs, err = history.StageAfter(ctx, b, events, ms); err == nil {
			break
		}
		if !errors.Is(err, lake.ErrStateMoved) || attempt > 0 {
			waitBronze()
			return classify(err)
		}
	}
	lap("stage")
	*stage = "write"
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
			return classify(err)
		}
	}
	lap("write")
	if bs != nil {
		*stage = "bronze"
		if res.Bronze, err = bs.Commit(ctx); err != nil {
			return classify(err)
		}
		if err := a.afterCommit(ctx, b, "bronze"); err != nil {
			return err
		}
		lap("commit_bronze")
	}
	*stage = "mirror"
	if res.Mirror, res.EndOffsets, err = ms.Commit(ctx); err != nil {
		return classify(err)
	}
	if err := a.afterCommit(ctx, b, "mirror"); err != nil {
		return err
	}
	lap("commit_mirror")
	if hs != nil {
		*stage = "history"
		if res.History, err = hs.Commit(ctx); err != nil {
			return classify(err)
		}
		if err := a.afterCommit(ctx, b, "history"); err != nil {
			return err
		}
	}
	lap("commit_history")
	return nil
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

// ensureKeyColumns settles the table's key columns once per worker table
// state: the mirror's recorded lakemirror.key-columns when the mirror
// exists, else the spec's, else those of the Kafka record keys. Errors
// (non-retryable, the table blocks): the spec (or the source table's
// primary key for a direct load) names other columns than the existing
// mirror is keyed by, since merging under another key would fold
// different rows together; no key columns at all.
func (a *Activities) ensureKeyColumns(ctx context.Context, st *tableState, name lake.TableName) error {
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

// ensureTableTypes gives the table's decoders the mirror's column types
// (see tableState.typesFrom) once per worker state, before its first
// batch decodes. Errors: catalog failures.
func (a *Activities) ensureTableTypes(ctx context.Context, st *tableState, name lake.TableName) error {
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

// keyMismatch is the non-retryable error for a table whose spec names
// other key columns than its existing mirror records.
func keyMismatch(name lake.TableName, recorded, spec []string) error {
	return badSpec(fmt.Errorf("table %s: the mirror is keyed by %s, the table spec by %s; a mirror cannot change its key (rows would merge under the wrong key): start the table with --key %s, or mirror into a new table name",
		name, strings.Join(recorded, ","), strings.Join(spec, ","), strings.Join(recorded, ",")))
}

// quarantineOf builds the quarantine record of the batch record at origin.
func quarantineOf(recs []schemas.Record, o cdc.Origin, stage, reason string) lake.QuarantineRecord {
	q := lake.QuarantineRecord{Partition: o.Partition, Offset: o.Offset, Stage: stage, Reason: reason}
	for _, r := range recs {
		if r.Partition == o.Partition && r.Offset == o.Offset {
			q.Key, q.Value, q.Timestamp = r.Key, r.Value, r.Timestamp
			break
		}
	}
	return q
}

// quarantine keeps the batch's rejected records in the quarantine table,
// or, above the table's per-batch limit, stops the batch (non-retryable:
// the table blocks until an operator raises the limit or fixes the
// source, then retries).
func (a *Activities) quarantine(ctx context.Context, spec TableSpec, name lake.TableName, b lake.Batch, q []lake.QuarantineRecord, res *ApplyResult) error {
	if len(q) == 0 {
		return nil
	}
	if len(q) > spec.MaxQuarantine {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%d records of batch %s cannot be applied (limit %d per batch); first: %s/%d@%d: %s",
			len(q), b.ID, spec.MaxQuarantine, b.Topic, q[0].Partition, q[0].Offset, q[0].Reason), ErrTypeQuarantineLimit, nil)
	}
	n, err := lake.AppendQuarantine(ctx, a.Catalog, name, b, q)
	if err != nil {
		return classify(err)
	}
	res.Quarantined = len(q)
	if a.Metrics != nil {
		for _, r := range q[len(q)-n:] {
			a.Metrics.Quarantined(spec.Table, r.Stage, 1)
		}
	}
	return nil
}

// setBronzeKeys copies each row change's primary key, as Prepare typed
// it, to its bronze row (the one at the same partition and offset; of
// several events of one record, the last one's). Events come in record
// order, so one walk over both finds every row; events out of that order
// (none that decode and Prepare make) are found through a map.
func setBronzeKeys(bronze []lake.BronzeRecord, events []*cdc.Event) {
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
func setBronzeKeysByMap(bronze []lake.BronzeRecord, events []*cdc.Event) {
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
