package activities

import (
	"errors"
	"runtime"
	"slices"
	"sync"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/schemas"
)

// decoderPool holds one table's record decoders. A schemas.Decoder is not
// safe for concurrent use and keeps caches (schemas, layouts) worth
// keeping between batches, so each goroutine that decodes takes one from
// the pool and puts it back: a batch decodes in chunks on several cores,
// and the next batch's prefetch (prefetch.go) decodes while this one
// commits. Decoders made from the same options decode alike; their output
// depends only on the records.
type decoderPool struct {
	opts schemas.DecoderOptions
	mu   sync.Mutex
	free []*schemas.Decoder
	all  []*schemas.Decoder
	gen  uint64 // see generation
}

func newDecoderPool(opts schemas.DecoderOptions) *decoderPool {
	return &decoderPool{opts: opts}
}

func (p *decoderPool) get() *schemas.Decoder {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		d := p.free[n-1]
		p.free = p.free[:n-1]
		return d
	}
	d := schemas.NewDecoder(p.opts)
	p.all = append(p.all, d)
	return d
}

// put returns d to the pool, unless keyed dropped it meanwhile.
func (p *decoderPool) put(d *schemas.Decoder) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if slices.Contains(p.all, d) {
		p.free = append(p.free, d)
	}
}

// KeyColumns returns the key columns the decoders use: configured, or
// learned from Kafka record keys by any of them (see
// schemas.Decoder.KeyColumns); nil when none is known yet.
func (p *decoderPool) KeyColumns() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.opts.KeyColumns) > 0 {
		return slices.Clone(p.opts.KeyColumns)
	}
	for _, d := range p.all {
		if k := d.KeyColumns(); len(k) > 0 {
			return k
		}
	}
	return nil
}

// keyed reports whether every decoder the pool hands out knows the key
// columns: configured, or learned by one of them from a Kafka key (then
// the learned columns become the pool's options and decoders made before
// are dropped). Until then a batch decodes on one decoder, in record
// order, as the first keyed record teaches the columns to the records
// after it.
func (p *decoderPool) keyed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.opts.KeyColumns) > 0 {
		return true
	}
	if p.adoptLearnedKeys() {
		p.free, p.all = nil, nil
		return true
	}
	return false
}

// adoptLearnedKeys makes key columns one of the pool's decoders learned
// from a Kafka key the pool's options, reporting whether there were
// any. The caller holds p.mu.
func (p *decoderPool) adoptLearnedKeys() bool {
	for _, d := range p.all {
		if k := d.KeyColumns(); len(k) > 0 {
			p.opts.KeyColumns = k
			return true
		}
	}
	return false
}

// typed makes the pool's decoders read schemaless values by the table's
// column types (schemas.DecoderOptions.TableColumns) and Bits values in
// the table's byte order (schemas.DecoderOptions.BitsLeastSignificantFirst,
// lake.PropBitsOrder), dropping decoders made otherwise. It reports
// whether either changed.
func (p *decoderPool) typed(cols []cdc.Column, bitsLSB bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.opts.BitsLeastSignificantFirst == bitsLSB &&
		slices.EqualFunc(p.opts.TableColumns, cols, func(x, y cdc.Column) bool { return x.Name == y.Name && x.Type == y.Type }) {
		return false
	}
	if len(p.opts.KeyColumns) == 0 {
		p.adoptLearnedKeys() // learned from a Kafka key: keep them
	}
	p.opts.TableColumns, p.opts.BitsLeastSignificantFirst = cols, bitsLSB
	p.free, p.all = nil, nil
	p.gen++
	return true
}

// generation counts the pool's changes of table types (typed): records
// decoded at another generation (a prefetch) must be decoded again.
func (p *decoderPool) generation() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gen
}

// decoded is a batch's records decoded: its row-change events (record
// order), one bronze row per record, the records that could not be
// decoded (for the quarantine) and the counts that go into ApplyResult.
type decoded struct {
	events     []*cdc.Event
	bronze     []lake.BronzeRecord
	quarantine []lake.QuarantineRecord
	counts     decodeCounts
	gen        uint64 // the pool's generation the records were decoded at
	// typed marks events built from a direct load's typed source rows
	// (source.Renderer.Event), not decoded: they do not depend on the
	// decoders' types, so they are kept whatever the pool's generation,
	// and records is their count (the load renders no record when the
	// table keeps no bronze).
	typed   bool
	records int
}

// recordCount is the number of records the batch had: recs's, or a typed
// decoding's own count.
func (d *decoded) recordCount(recs []schemas.Record) int {
	if d != nil && d.typed {
		return d.records
	}
	return len(recs)
}

// decodeCounts are decodeAll's counts, added to an ApplyResult by add.
type decodeCounts struct {
	tombstones, txMetadata, changes, snapshotRows int
	snapshotLast                                  bool
	sourceTsFromKafka                             int // changes whose source time is the Kafka record timestamp
	// newest is, per partition the batch has change events on, the
	// source.snapshot mark of its newest one (record order): a
	// partition whose newest is a source snapshot read that is not the
	// last (cdc.SnapshotRow) ends the batch in the middle of a source
	// snapshot (lake.BatchTally.SnapshotOpen).
	newest []partitionMark
}

// partitionMark is a partition's newest source.snapshot mark.
type partitionMark struct {
	partition int32
	mark      cdc.SnapshotMark
}

// mark records m as partition p's newest source.snapshot mark.
func (c *decodeCounts) mark(p int32, m cdc.SnapshotMark) {
	for i := range c.newest {
		if c.newest[i].partition == p {
			c.newest[i].mark = m
			return
		}
	}
	c.newest = append(c.newest, partitionMark{p, m})
}

// snapshotOpen reports whether some partition's newest change event is a
// source snapshot read that is not the last.
func (c decodeCounts) snapshotOpen() bool {
	for _, n := range c.newest {
		if n.mark == cdc.SnapshotRow {
			return true
		}
	}
	return false
}

func (c decodeCounts) add(res *ApplyResult) {
	res.Tombstones += c.tombstones
	res.TxMetadata += c.txMetadata
	res.Changes += c.changes
	res.SnapshotRows += c.snapshotRows
	res.SnapshotLast = res.SnapshotLast || c.snapshotLast
	res.SourceTsFromKafka += c.sourceTsFromKafka
}

// tally is the counts as the batch's commits record them
// (lake.BatchTally) for a batch of records records; the writer adds the
// quarantined count.
func (c decodeCounts) tally(records int) *lake.BatchTally {
	return &lake.BatchTally{Records: records, Changes: c.changes, Tombstones: c.tombstones, TxMetadata: c.txMetadata,
		SnapshotRows: c.snapshotRows, SnapshotLast: c.snapshotLast, SnapshotOpen: c.snapshotOpen(), SourceTsFromKafka: c.sourceTsFromKafka}
}

// parallelDecodeMin is the batch size from which decodeAll splits the
// records over the cores; below it one goroutine decodes them.
const parallelDecodeMin = 8192

// decodeAll decodes the batch's records into row-change events and bronze
// rows, counting tombstones, transaction metadata and source snapshot
// reads. Records that cannot be decoded are returned for the quarantine
// (they stay in bronze as received, with a null op). Large batches are
// decoded in one chunk per core, each with its own decoder from pool; the
// result is the same as one decoder's, in record order.
//
// Errors: a schema registry that cannot be reached (*schemas.RegistryError:
// retry the batch, nothing is quarantined).
func decodeAll(pool *decoderPool, recs []schemas.Record) (decoded, error) {
	gen := pool.generation()
	out, err := decodeAllAt(pool, recs)
	out.gen = gen
	return out, err
}

// decodeAllAt is decodeAll without recording the pool's generation.
func decodeAllAt(pool *decoderPool, recs []schemas.Record) (decoded, error) {
	chunks := 1
	if len(recs) >= parallelDecodeMin && pool.keyed() {
		chunks = min(runtime.GOMAXPROCS(0), len(recs)/(parallelDecodeMin/2))
	}
	if chunks <= 1 {
		d := pool.get()
		defer pool.put(d)
		return decodeChunk(d, recs)
	}
	parts := make([]decoded, chunks)
	errs := make([]error, chunks)
	var wg sync.WaitGroup
	for i := range chunks {
		lo, hi := len(recs)*i/chunks, len(recs)*(i+1)/chunks
		wg.Go(func() {
			d := pool.get()
			defer pool.put(d)
			parts[i], errs[i] = decodeChunk(d, recs[lo:hi])
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return decoded{}, err
	}
	out := decoded{events: make([]*cdc.Event, 0, len(recs)), bronze: make([]lake.BronzeRecord, 0, len(recs))}
	for _, p := range parts {
		out.events = append(out.events, p.events...)
		out.bronze = append(out.bronze, p.bronze...)
		out.quarantine = append(out.quarantine, p.quarantine...)
		c := &out.counts
		c.tombstones += p.counts.tombstones
		c.txMetadata += p.counts.txMetadata
		c.changes += p.counts.changes
		c.snapshotRows += p.counts.snapshotRows
		c.snapshotLast = c.snapshotLast || p.counts.snapshotLast
		c.sourceTsFromKafka += p.counts.sourceTsFromKafka
		for _, n := range p.counts.newest {
			c.mark(n.partition, n.mark)
		}
	}
	return out, nil
}

// decodeChunk is decodeAll for one decoder.
func decodeChunk(d *schemas.Decoder, recs []schemas.Record) (decoded, error) {
	out := decoded{events: make([]*cdc.Event, 0, len(recs)), bronze: make([]lake.BronzeRecord, len(recs))}
	c := &out.counts
	for i, sr := range recs {
		br := lake.BronzeRecord{Record: sr} // the headers shared, not copied: nothing changes them in place
		dec, err := d.Decode(sr)
		var regErr *schemas.RegistryError
		if errors.As(err, &regErr) {
			return decoded{}, err
		}
		if err != nil {
			out.quarantine = append(out.quarantine, lake.QuarantineRecord{Partition: sr.Partition, Offset: sr.Offset, Key: sr.Key, Value: sr.Value,
				Timestamp: sr.Timestamp, Stage: lake.StageDecode, Reason: err.Error()})
			out.bronze[i] = br
			continue
		}
		switch dec.Kind {
		case schemas.KindTombstone:
			c.tombstones++
		case schemas.KindTxMetadata:
			c.txMetadata++
		case schemas.KindChange, schemas.KindTruncate:
			e := dec.Event
			br.Op, br.Seq, br.SourceTs = dec.RawOp, e.Seq, e.SourceTs
			completeEvent(d, sr.Topic, dec)
			out.events = append(out.events, e)
			c.changes++
			if dec.SourceTsFromKafka {
				c.sourceTsFromKafka++
			}
			if e.Snapshot != cdc.SnapshotNone {
				c.snapshotRows++
			}
			if e.Snapshot == cdc.SnapshotLast {
				c.snapshotLast = true
			}
			c.mark(sr.Partition, e.Snapshot)
		}
		out.bronze[i] = br
	}
	return out, nil
}

// completeEvent finishes a decoded row change the same way wherever
// records are decoded (a batch's, or bronze's read back for a rebuild or a
// re-apply): a ghost delete becomes the per-key truncate it stands for
// (asGhostDelete), the create of a primary-key change gets its old key
// from Debezium's __debezium.oldkey header and its delete its new key
// from __debezium.newkey (each left empty when it does not decode).
func completeEvent(d *schemas.Decoder, topic string, dec schemas.Decoded) {
	e := dec.Event
	asGhostDelete(topic, e)
	if dec.OldKey != nil && e.Op.IsUpsert() {
		if k, err := d.DecodeKey(dec.OldKey); err == nil {
			e.OldKey = k
		}
	}
	if dec.NewKey != nil && e.Op == cdc.OpDelete {
		if k, err := d.DecodeKey(dec.NewKey); err == nil {
			e.NewKey = k
		}
	}
}
