package lake

import (
	"context"
	"fmt"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/schemas"
)

// benchStream is a generated Debezium PostgreSQL stream (no envelope,
// default replica identity) cut into batches of batchSize records.
func benchStream(b *testing.B, changes, batchSize int) [][]sample.Message {
	b.Helper()
	s := sample.Generate(sample.Options{Seed: 7, Inserts: changes / 3, Updates: changes - changes/3 - changes/20, Deletes: changes / 20,
		Duplicates: changes / 100, Late: changes / 200, OutOfOrder: changes / 200, Tombstones: true})
	var out [][]sample.Message
	for len(s.Delivered) > 0 {
		n := min(batchSize, len(s.Delivered))
		out = append(out, s.Delivered[:n])
		s.Delivered = s.Delivered[n:]
	}
	return out
}

func decodeBatch(b *testing.B, d *schemas.Decoder, msgs []sample.Message, base int64) ([]*cdc.Event, []BronzeRecord) {
	events := make([]*cdc.Event, 0, len(msgs))
	bronze := make([]BronzeRecord, len(msgs))
	for i, m := range msgs {
		off := base + int64(i)
		dec, err := d.Decode(schemas.Record{Topic: sample.Topic, Offset: off, Key: m.Key, Value: m.Value})
		if err != nil {
			b.Fatal(err)
		}
		bronze[i] = BronzeRecord{Record: payload.Record{Offset: off, Key: m.Key, Value: m.Value}}
		if dec.Kind == schemas.KindChange {
			events = append(events, dec.Event)
			bronze[i].Op, bronze[i].Seq, bronze[i].SourceTs = dec.RawOp, dec.Event.Seq, dec.Event.SourceTs
		}
	}
	return events, bronze
}

// BenchmarkApplyBatch measures the whole apply path per batch of 5,000
// Kafka records: decode, bronze append, merge (group, guard, fold) and the
// mirror row delta with position deletes, committed to a SQLite catalog
// on local disk. The mirror grows as the benchmark runs (200k changes).
func BenchmarkApplyBatch(b *testing.B) {
	const batchSize = 5000
	batches := benchStream(b, 200_000, batchSize)
	ctx := context.Background()
	cat, err := lakecat.OpenCatalog(ctx, lakecat.CatalogConfig{LocalDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	name := lakecat.TableName{Namespace: "bench", Name: "orders"}
	w := NewMirrorWriter(cat, name, []string{"order_id"})
	d := schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: []string{"order_id"}})
	b.ReportAllocs()
	b.ResetTimer()
	records := 0
	for i := 0; i < b.N; i++ {
		msgs := batches[i%len(batches)]
		base := int64(i * batchSize)
		seq := int64(i + 1)
		bt := Batch{ID: fmt.Sprintf("bench#%d", seq), Seq: seq, Topic: sample.Topic,
			Ranges: []Range{{From: base, To: base + int64(len(msgs))}}, EndOffsets: Offsets{0: base + int64(len(msgs))}}
		events, bronze := decodeBatch(b, d, msgs, base)
		if _, err := w.Prepare(ctx, events); err != nil {
			b.Fatal(err)
		}
		if _, err := AppendBronze(ctx, cat, name, bt, bronze); err != nil {
			b.Fatal(err)
		}
		if _, _, err := w.Apply(ctx, bt, events); err != nil {
			b.Fatal(err)
		}
		records += len(msgs)
	}
	b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkMergeRules measures the pure rules alone on one 5,000-record
// batch: group by key, sequence guard and fold.
func BenchmarkMergeRules(b *testing.B) {
	msgs := benchStream(b, 20_000, 5000)[1]
	d := schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: []string{"order_id"}})
	events, _ := decodeBatch(b, d, msgs, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, g := range merge.GroupByKey(events) {
			merge.Fold(merge.Stored{}, g, []string{"order_id"})
		}
	}
	b.ReportMetric(float64(len(events)*b.N)/b.Elapsed().Seconds(), "events/s")
}
