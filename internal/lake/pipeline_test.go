package lake

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/scd2"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/schemas"
)

// lakePipeline drives the writers the way the ApplyBatch and RebuildKeys
// activities do, without Temporal or Kafka.
type lakePipeline struct {
	t       testing.TB
	cat     catalog.Catalog
	name    lakecat.TableName
	dec     *schemas.Decoder
	mirror  *MirrorWriter
	history *scd2.HistoryWriter
	seq     int64
	offset  int64
	rebuilt int
	// uncached: batches load tables without a per-batch lakecat.WithTableCache
	uncached bool
}

func newLakePipeline(t testing.TB, o merge.HistoryOptions) *lakePipeline {
	cat := newCatalog(t)
	keys := []string{"order_id"}
	return &lakePipeline{t: t, cat: cat, name: testTable, dec: schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: keys}),
		mirror: NewMirrorWriter(cat, testTable, keys), history: scd2.NewHistoryWriter(cat, testTable, keys, o)}
}

func (p *lakePipeline) decode(recs []BronzeRow) []*cdc.Event {
	var events []*cdc.Event
	for _, r := range recs {
		d, err := p.dec.Decode(schemas.Record{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value})
		if err != nil {
			p.t.Fatal(err)
		}
		if d.Kind == schemas.KindChange {
			events = append(events, d.Event)
		}
	}
	return events
}

func (p *lakePipeline) batch(msgs []sample.Message) {
	if err := p.tryBatch(msgs); err != nil {
		p.t.Fatal(err)
	}
}

// tryBatch does what the ApplyBatch activity does for one batch.
func (p *lakePipeline) tryBatch(msgs []sample.Message) error {
	ctx := context.Background()
	if !p.uncached {
		ctx = lakecat.WithTableCache(ctx)
	}
	p.seq++
	b := Batch{ID: fmt.Sprint("b", p.seq), Seq: p.seq, Topic: "t", Ranges: []Range{{From: p.offset, To: p.offset + int64(len(msgs))}},
		EndOffsets: Offsets{0: p.offset + int64(len(msgs))}}
	rows := rowsOf(msgs, p.offset)
	p.offset += int64(len(msgs))
	events := p.decode(rows)
	prep, err := p.mirror.Prepare(ctx, events)
	if err != nil {
		return err
	}
	if _, err := p.history.Ensure(ctx, prep.Table); err != nil {
		return err
	}
	bronze := make([]BronzeRecord, len(rows))
	copy(bronze, rows)
	for _, e := range prep.Events {
		bronze[e.Origin.Offset-rows[0].Offset].PK = e.Key
	}
	if _, err := AppendBronze(ctx, p.cat, p.name, b, bronze); err != nil {
		return err
	}
	events, err = p.mirror.ExpandTruncates(ctx, prep.Events)
	if err != nil {
		return err
	}
	if _, _, err := p.mirror.Apply(ctx, b, events); err != nil {
		return err
	}
	pre, known := p.mirror.PreBatchSeqs()
	hres, err := p.history.Apply(ctx, b, events, pre, known)
	if err != nil {
		return err
	}
	if hres.Pending > 0 {
		p.rebuild()
	}
	return nil
}

func (p *lakePipeline) rebuild() {
	t, ctx := p.t, context.Background()
	keys, err := p.history.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := tableread.ReadBronzeKeys(ctx, p.cat, p.name, keys)
	if err != nil {
		t.Fatal(err)
	}
	prep, err := p.mirror.Prepare(ctx, p.decode(rows))
	if err != nil {
		t.Fatal(err)
	}
	events, err := p.mirror.ExpandTruncates(ctx, prep.Events)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[cdc.Key][]*cdc.Event{}
	for _, k := range keys {
		byKey[k] = nil
	}
	for _, e := range events {
		if _, ok := byKey[e.Key]; ok {
			byKey[e.Key] = append(byKey[e.Key], e)
		}
	}
	if _, err := p.mirror.Rebuild(ctx, byKey); err != nil {
		t.Fatal(err)
	}
	if _, err := p.history.Rebuild(ctx, byKey); err != nil {
		t.Fatal(err)
	}
	p.rebuilt += len(keys)
}

func (p *lakePipeline) historyLines() string {
	tbl, err := p.cat.LoadTable(context.Background(), p.name.History())
	if err != nil {
		p.t.Fatal(err)
	}
	rows, _, err := ReadRows(context.Background(), tbl, []string{"order_id", lakecat.ColSeq})
	if err != nil {
		p.t.Fatal(err)
	}
	var lines []string
	for _, r := range rows {
		lines = append(lines, fmt.Sprintf("%v %v..%v %v %v", r["order_id"], r[lakecat.ColSeq], r[lakecat.ColValidToSeq], r[lakecat.ColRowHash], r[lakecat.ColIsCurrent]))
	}
	return strings.Join(lines, "\n")
}

// expectedDump renders the generator's expected mirror like mirrorLive.
func expectedDump(rows []sample.Row) string {
	var lines []string
	for _, r := range rows {
		lines = append(lines, fmt.Sprintf("%d %s %s %s deleted=%v", r.OrderID, r.Status, r.Amount, r.Seq.Hex(), r.Deleted))
	}
	return strings.Join(lines, "\n")
}

// mirrorLive renders the mirror's key, status, amount, _seq and soft
// delete (whichever soft-delete column the table has).
func mirrorLive(t *testing.T, p *lakePipeline) string {
	tbl, err := p.cat.LoadTable(context.Background(), p.name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := ReadRows(context.Background(), tbl, []string{"order_id"})
	if err != nil {
		t.Fatal(err)
	}
	del, err := lakecat.SoftDeleteColumn(tbl.Schema())
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range rows {
		st, am := r["status"], r["amount"]
		if st == nil {
			st, am = "", ""
		}
		lines = append(lines, fmt.Sprintf("%v %v %v %v deleted=%v", r["order_id"], st, am, r[lakecat.ColSeq], r[del]))
	}
	return strings.Join(lines, "\n")
}
