package kafka

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// MaxIdleConsumers is how many consuming kgo clients a Client keeps for
// reuse between Fetch calls. Concurrent Fetches beyond it get a client of
// their own that is closed when they finish.
const MaxIdleConsumers = 8

// consumer is one pooled consuming kgo client and the fetch settings it
// was built with (a client's settings are fixed at creation).
type consumer struct {
	cl          *kgo.Client
	keepControl bool
}

// consumerPool lends Fetch a consuming kgo client: a direct (group-less)
// consumer with no partitions assigned. A Fetch owns its client until it
// returns it, so two Fetches never share a client's buffered records.
// A client comes back only after a Fetch that ended cleanly, with its
// topic purged (no partition assigned or paused, nothing buffered);
// after an error it is closed and a later Fetch builds a new one.
type consumerPool struct {
	mu      sync.Mutex
	idle    []*consumer
	maxIdle int
	closed  bool
	made    int64 // consuming clients built
	reused  int64 // Fetches served by a pooled client
	dropped int64 // clients closed after a failed Fetch or a full pool
}

// ConsumerStats counts the consuming clients of a Client's Fetch pool.
type ConsumerStats struct {
	Made    int64 // kgo clients built for Fetch since NewClient
	Reused  int64 // Fetches that borrowed a pooled client instead
	Dropped int64 // clients closed because their Fetch failed or the pool was full
	Idle    int   // clients in the pool now
}

// Consumers returns the counts of c's Fetch clients (for tests and the
// many-tables benchmark).
func (c *Client) Consumers() ConsumerStats {
	c.pool.mu.Lock()
	defer c.pool.mu.Unlock()
	return ConsumerStats{Made: c.pool.made, Reused: c.pool.reused, Dropped: c.pool.dropped, Idle: len(c.pool.idle)}
}

// takeConsumer lends a consuming client built with c's options and
// keepControl setting: a pooled one when there is one, else a new one.
func (c *Client) takeConsumer() (*consumer, error) {
	p := &c.pool
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, kgo.ErrClientClosed
	}
	for len(p.idle) > 0 {
		fc := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if fc.keepControl == c.keepControl {
			p.reused++
			p.mu.Unlock()
			return fc, nil
		}
		p.dropped++
		fc.cl.Close() // built before a test changed keepControl
	}
	p.made++
	p.mu.Unlock()
	opts := append(slices.Clone(c.opts),
		kgo.SeedBrokers(c.brokers...),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()), // OFFSET_OUT_OF_RANGE is an error, never a rewind
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(c.fetchMaxWait),
	)
	if c.keepControl {
		// Control markers carry offsets: with them, a range whose last
		// offset is a commit/abort marker completes on sight.
		opts = append(opts, kgo.KeepControlRecords())
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("new consumer: %w", err)
	}
	return &consumer{cl: cl, keepControl: c.keepControl}, nil
}

// giveBack ends a Fetch's loan of fc, which consumed topic. A clean
// Fetch's client is purged of the topic and pooled; after a failed Fetch
// (ok false), with the pool full or closed, or when anything is still
// buffered after the purge, the client is closed instead.
func (c *Client) giveBack(fc *consumer, topic string, parts []int32, ok bool) {
	if ok {
		fc.cl.RemoveConsumePartitions(map[string][]int32{topic: parts})
		fc.cl.ResumeFetchPartitions(map[string][]int32{topic: parts})
		fc.cl.PurgeTopicsFromConsuming(topic)
		drained, cancel := context.WithCancel(context.Background())
		cancel()
		if fc.cl.PollFetches(drained).NumRecords() > 0 {
			ok = false // the purge left records behind: never lend them to another Fetch
		}
	}
	p := &c.pool
	p.mu.Lock()
	if ok && !p.closed && len(p.idle) < p.maxIdle {
		p.idle = append(p.idle, fc)
		p.mu.Unlock()
		return
	}
	p.dropped++
	p.mu.Unlock()
	fc.cl.Close()
}

// close closes the pooled clients; later takeConsumer calls fail.
func (p *consumerPool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, fc := range idle {
		fc.cl.Close()
	}
}
