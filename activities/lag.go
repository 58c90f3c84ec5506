package activities

import (
	"context"
	"maps"
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
// applied offset, per partition, in records) from Kafka, within a few
// seconds; a table whose topic cannot be read is left out (its last
// observed lag stays). It is a function, not a method, so that worker
// registration does not take it for an activity.
func LagSamples(a *Activities) []telemetry.LagSample {
	a.pos.mu.Lock()
	tables := maps.Clone(a.pos.tables)
	a.pos.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var out []telemetry.LagSample
	for table, p := range tables {
		ends, err := a.Kafka.EndOffsets(ctx, p.topic)
		if err != nil {
			continue
		}
		for part, hwm := range ends {
			out = append(out, telemetry.LagSample{Table: table, Partition: part, Lag: max(hwm-p.offsets[part], 0)})
		}
	}
	return out
}
