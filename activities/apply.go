package activities

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

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

	res := ApplyResult{BatchID: b.ID, BatchSeq: b.Seq}
	recs, err := a.Kafka.Fetch(ctx, spec.Topic, kafkaRanges(b.Ranges))
	if err != nil {
		return res, classify(err)
	}
	res.Records = len(recs)
	stage = "decode"
	events, bronze, eventAt, err := decodeAll(st.decoder, recs, &res)
	if err != nil {
		return res, classify(err)
	}
	if err := a.ensureKeyColumns(ctx, st, name); err != nil {
		return res, err
	}
	mirror, history := st.writers(a, name)
	res.KeyColumns = st.keyCols
	// the mirror and history exist before bronze holds any row change (see
	// Recover), and events are typed and keyed the way the tables store them
	mtbl, added, err := mirror.Prepare(ctx, events)
	if err != nil {
		return res, classify(err)
	}
	res.AddedColumns = added
	if mtbl != nil {
		if _, err := history.Ensure(ctx, mtbl); err != nil {
			return res, classify(err)
		}
	}
	setBronzeKeys(bronze, events, eventAt)
	stage = "bronze"
	if res.Bronze, err = lake.AppendBronze(ctx, a.Catalog, name, b, bronze); err != nil {
		return res, classify(err)
	}
	if err := a.afterCommit(ctx, b, "bronze"); err != nil {
		return res, err
	}
	stage = "mirror"
	var end lake.Offsets
	if res.Mirror, end, err = mirror.Apply(ctx, b, events); err != nil {
		return res, classify(err)
	}
	res.EndOffsets = end
	if err := a.afterCommit(ctx, b, "mirror"); err != nil {
		return res, err
	}
	stage = "history"
	pre, known := mirror.PreBatchSeqs()
	if res.History, err = history.Apply(ctx, b, events, pre, known); err != nil {
		return res, classify(err)
	}
	if err := a.afterCommit(ctx, b, "history"); err != nil {
		return res, err
	}
	a.observeBatch(spec.Table, &res, time.Since(started))
	return res, nil
}

func (a *Activities) afterCommit(ctx context.Context, b lake.Batch, table string) error {
	if a.AfterCommit == nil {
		return nil
	}
	return a.AfterCommit(ctx, b, table)
}

// ensureKeyColumns settles the table's key columns: the spec's, else the
// ones recorded on an existing mirror, else those the decoder took from
// the Kafka record keys.
func (a *Activities) ensureKeyColumns(ctx context.Context, st *tableState, name lake.TableName) error {
	if len(st.keyCols) > 0 {
		return nil
	}
	if cols, err := lake.MirrorKeyColumns(ctx, a.Catalog, name); err != nil {
		return err
	} else if len(cols) > 0 {
		st.keyCols = cols
		return nil
	}
	if cols := st.decoder.KeyColumns(); len(cols) > 0 {
		st.keyCols = cols
		return nil
	}
	return badSpec(fmt.Errorf("table %s: no key columns given and none could be taken from the Kafka record keys", name))
}

// decodeAll decodes the batch's records into row-change events and bronze
// rows (eventAt[i] is the bronze row of events[i]), counting tombstones,
// transaction metadata and source snapshot reads into res. The first
// undecodable record stops the batch with a *schemas.DecodeError.
func decodeAll(d *schemas.Decoder, recs []*kgo.Record, res *ApplyResult) (events []*cdc.Event, bronze []lake.BronzeRecord, eventAt []int, err error) {
	events = make([]*cdc.Event, 0, len(recs))
	eventAt = make([]int, 0, len(recs))
	bronze = make([]lake.BronzeRecord, len(recs))
	for i, r := range recs {
		sr := schemas.Record{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value,
			Timestamp: r.Timestamp.UnixMicro()}
		br := lake.BronzeRecord{Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value, Timestamp: sr.Timestamp}
		for _, h := range r.Headers {
			sr.Headers = append(sr.Headers, schemas.Header{Key: h.Key, Value: h.Value})
			br.Headers = append(br.Headers, lake.BronzeHeader{Key: h.Key, Value: h.Value})
		}
		dec, err := d.Decode(sr)
		if err != nil {
			return nil, nil, nil, err
		}
		switch dec.Kind {
		case schemas.KindTombstone:
			res.Tombstones++
		case schemas.KindTxMetadata:
			res.TxMetadata++
		case schemas.KindChange, schemas.KindTruncate:
			e := dec.Event
			br.Op, br.Seq, br.SourceTs = dec.RawOp, e.Seq, e.SourceTs
			events = append(events, e)
			eventAt = append(eventAt, i)
			res.Changes++
			if e.Snapshot != cdc.SnapshotNone {
				res.SnapshotRows++
			}
			if e.Snapshot == cdc.SnapshotLast {
				res.SnapshotLast = true
			}
		}
		bronze[i] = br
	}
	return events, bronze, eventAt, nil
}

// setBronzeKeys copies each row change's primary key, as Prepare typed
// it, to its bronze row (eventAt[i] is the bronze row of events[i]).
func setBronzeKeys(bronze []lake.BronzeRecord, events []*cdc.Event, eventAt []int) {
	for i, e := range events {
		if e.Op != cdc.OpTruncate {
			bronze[eventAt[i]].PK = e.Key
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
