package activities

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/lakemirror/lakemirror/internal/kafka"
)

// hwmWatch is the worker's one high-watermark poller for its idle tables:
// instead of every idle table's PlanBatch listing its topic's start and
// end offsets each idlePollInterval (two ListOffsets requests per table
// per second), the waiting PlanBatches register here and one goroutine
// lists the end offsets of all their topics in a single ListOffsets round
// per idlePollInterval, waking a waiter when its topic's high watermarks
// differ from the ones it planned with, or cannot be listed (the waiter's
// own plan then reports the error). The goroutine runs only while some
// PlanBatch waits.
type hwmWatch struct {
	kc    *kafka.Client
	every time.Duration

	mu      sync.Mutex
	waiters map[*hwmWaiter]struct{}
	running bool
	rounds  int64 // ListOffsets rounds sent (tests, benchmarks)
}

type hwmWaiter struct {
	topic string
	known map[int32]int64
	woken chan struct{} // closed when the topic's high watermarks moved
}

// watch returns a's high-watermark watch, made on first use.
func (a *Activities) watch() *hwmWatch {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.hwm == nil {
		a.hwm = &hwmWatch{kc: a.Kafka, every: idlePollInterval, waiters: map[*hwmWaiter]struct{}{}}
	}
	return a.hwm
}

// wait blocks until topic's high watermarks differ from known (a
// partition added, removed or moved), the topic cannot be listed, d
// elapses or ctx ends. It reports whether it was woken by a change (true)
// rather than by d or ctx (false).
func (w *hwmWatch) wait(ctx context.Context, topic string, known map[int32]int64, d time.Duration) bool {
	wt := &hwmWaiter{topic: topic, known: maps.Clone(known), woken: make(chan struct{})}
	w.mu.Lock()
	w.waiters[wt] = struct{}{}
	if !w.running {
		w.running = true
		go w.run()
	}
	w.mu.Unlock()
	timer := time.NewTimer(d)
	defer timer.Stop()
	defer func() {
		w.mu.Lock()
		delete(w.waiters, wt)
		w.mu.Unlock()
	}()
	select {
	case <-wt.woken:
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	return false
}

// run polls until no waiter is left.
func (w *hwmWatch) run() {
	ticker := time.NewTicker(w.every)
	defer ticker.Stop()
	for range ticker.C {
		w.mu.Lock()
		if len(w.waiters) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		topics := map[string]bool{}
		for wt := range w.waiters {
			topics[wt.topic] = true
		}
		w.rounds++
		w.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 2*w.every+5*time.Second)
		ends, errs, err := w.kc.EndOffsetsOf(ctx, slices.Sorted(maps.Keys(topics)))
		cancel()
		if err != nil {
			continue // the whole round failed (broker unreachable): the waiters' own plans retry at their deadline
		}
		w.mu.Lock()
		for wt := range w.waiters {
			if _, failed := errs[wt.topic]; failed || !maps.Equal(ends[wt.topic], wt.known) {
				close(wt.woken)
				delete(w.waiters, wt)
			}
		}
		w.mu.Unlock()
	}
}
