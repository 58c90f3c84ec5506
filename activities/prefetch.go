package activities

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/schemas"
)

// Prefetch: while a batch writes and commits its files, the worker fetches
// and decodes the table's next batch, so that work is off the next
// ApplyBatch's path (docs/design.md, "Write path"). It is speculation
// that never decides anything: the workflow still plans every batch
// (PlanBatch) and records its exact ranges before it is applied, and an
// ApplyBatch uses prefetched records only when they were fetched for
// exactly its ranges; anything else is dropped and the batch fetches
// its own. The records of a range are the same whoever fetches them
// (kafka.Client.Fetch returns exactly the committed records of the
// range), so a prefetched batch applies exactly as a fetched one.

// prefetchTTL is how long prefetched records wait for their ApplyBatch
// (a paused or blocked table does not hold them longer).
const prefetchTTL = time.Minute

// prefetched is one speculative fetch and decode of a table's next batch.
type prefetched struct {
	topic  string
	ranges []lake.Range
	cancel context.CancelFunc // cancels the fetch and stops the expiry timer
	done   chan struct{}      // closed when recs, dec and err are final
	recs   []schemas.Record
	dec    decoded
	err    error
}

// prefetchSlot holds a table's prefetched batch, if any.
type prefetchSlot struct {
	mu   sync.Mutex
	next *prefetched
}

// swap replaces the slot's prefetch with p (nil: empties it) and returns
// the one it held.
func (s *prefetchSlot) swap(p *prefetched) *prefetched {
	s.mu.Lock()
	old := s.next
	s.next = p
	s.mu.Unlock()
	return old
}

// take returns the prefetched records and their decoding for exactly
// batch b's topic and ranges, waiting for the fetch to finish (or ctx);
// ok is false when there is none, or it failed. The slot is emptied
// either way.
func (s *prefetchSlot) take(ctx context.Context, b lake.Batch) (recs []schemas.Record, dec decoded, ok bool) {
	p := s.swap(nil)
	if p == nil {
		return nil, decoded{}, false
	}
	if p.topic != b.Topic || !slices.Equal(p.ranges, b.Ranges) {
		p.cancel()
		return nil, decoded{}, false
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		p.cancel()
		return nil, decoded{}, false
	}
	p.cancel()
	if p.err != nil {
		return nil, decoded{}, false
	}
	return p.recs, p.dec, true
}

// drop empties the slot when it still holds p (its time is up).
func (s *prefetchSlot) drop(p *prefetched) {
	s.mu.Lock()
	if s.next == p {
		s.next = nil
	}
	s.mu.Unlock()
	p.cancel()
}

// startPrefetch begins fetching and decoding the batch after b in the
// background when b is a stream batch (each range ends at b's end offset
// for its partition) and at least spec.MaxEvents records are waiting
// after it, and returns that batch's plan (planOnce from b's end offsets,
// with this worker's catalog): ApplyBatch hands it to the workflow as
// ApplyResult.Next, which applies it next without a PlanBatch. A workflow
// that plans with PlanBatch (histories from before plan-in-apply) gets
// the same ranges unless more records arrive meanwhile and change how
// much the batch takes or how it is shared between partitions (then the
// prefetch is dropped). A table that is caught up waits in PlanBatch
// instead: nothing is prefetched and the result is nil.
func (a *Activities) startPrefetch(st *tableState, spec TableSpec, b lake.Batch) *Plan {
	if a.Kafka == nil || b.Load != nil || len(b.Ranges) == 0 {
		return nil
	}
	for _, r := range b.Ranges {
		if b.EndOffsets[r.Partition] != r.To {
			return nil // a backfill batch: the stream goes on elsewhere
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), prefetchTTL)
	plan, _, err := a.planOnce(ctx, spec, b.EndOffsets, false)
	if err != nil || plan.Records < int64(spec.MaxEvents) {
		cancel()
		if old := st.prefetch.swap(nil); old != nil {
			old.cancel()
		}
		return nil
	}
	plan.Catalog = a.CatalogID
	p := &prefetched{topic: spec.Topic, ranges: plan.Ranges, done: make(chan struct{})}
	// the timer must not keep p's records alive once p is taken or replaced
	expiry := time.AfterFunc(prefetchTTL, func() { st.prefetch.drop(p) })
	p.cancel = func() { expiry.Stop(); cancel() }
	if old := st.prefetch.swap(p); old != nil {
		old.cancel()
	}
	go func() {
		defer close(p.done)
		recs, err := a.Kafka.Fetch(ctx, spec.Topic, kafkaRanges(plan.Ranges))
		if err != nil {
			p.err = err
			return
		}
		p.recs = toRecords(recs)
		p.dec, p.err = decodeAll(st.decoders, p.recs)
	}()
	return &plan
}
