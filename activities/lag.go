package activities

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/telemetry"
)

// positions remembers, per table this worker applies, its topic and the
// offsets it has applied up to, so that lag can be computed at scrape
// time even while the table is paused or idle.
type positions struct {
	mu     sync.Mutex
	tables map[string]position
}

type position struct {
	topic   string
	offsets lake.Offsets
}

func (p *positions) set(table, topic string, offsets lake.Offsets) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tables == nil {
		p.tables = map[string]position{}
	}
	p.tables[table] = position{topic: topic, offsets: maps.Clone(offsets)}
}

// LagSamples computes the lag of every table a applies (high watermark −
// applied offset, per partition, in records) from Kafka, with one
// ListOffsets round for all the tables' topics (kafka.EndOffsetsOf),
// within a few seconds; a table whose topic cannot be read is left out
// (its last observed lag stays). It is a function, not a method, so that
// worker registration does not take it for an activity.
func LagSamples(a *Activities) []telemetry.LagSample {
	a.pos.mu.Lock()
	tables := maps.Clone(a.pos.tables)
	a.pos.mu.Unlock()
	if len(tables) == 0 {
		return nil
	}
	topics := map[string]bool{}
	for _, p := range tables {
		topics[p.topic] = true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	ends, _, err := a.Kafka.EndOffsetsOf(ctx, slices.Sorted(maps.Keys(topics)))
	if err != nil {
		return nil
	}
	var out []telemetry.LagSample
	for _, table := range slices.Sorted(maps.Keys(tables)) {
		p := tables[table]
		for _, part := range slices.Sorted(maps.Keys(ends[p.topic])) {
			out = append(out, telemetry.LagSample{Table: table, Partition: part, Lag: max(ends[p.topic][part]-p.offsets[part], 0)})
		}
	}
	return out
}
