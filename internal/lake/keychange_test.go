package lake

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/scd2"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/schemas"
)

// docValue is a Debezium PostgreSQL event of table docs(id, title, body)
// without the envelope; body may be the TOAST placeholder.
func docValue(op string, lsn int, before, after string) []byte {
	if before == "" {
		before = "null"
	}
	if after == "" {
		after = "null"
	}
	return []byte(fmt.Sprintf(`{"before":%s,"after":%s,"source":{"version":"2.7.3.Final","connector":"postgresql","name":"s","ts_ms":%d,"snapshot":"false","db":"s","sequence":"[\"%d\",\"%d\"]","schema":"public","table":"docs","txId":%d,"lsn":%d,"xmin":null},"op":%q,"ts_ms":%d}`,
		before, after, 1_700_000_000_000+lsn, lsn-1, lsn, lsn, lsn, op, 1_700_000_000_000+lsn))
}

// applyDocs runs records through the writers like the ApplyBatch
// activity, with the Kafka headers Debezium adds on key changes.
func applyDocs(t *testing.T, p *lakePipeline, recs []schemas.Record) {
	t.Helper()
	ctx := context.Background()
	var events []*cdc.Event
	for _, r := range recs {
		r.Topic, r.Offset = "t", p.offset
		p.offset++
		d, err := p.dec.Decode(r)
		if err != nil {
			t.Fatal(err)
		}
		if d.Kind != schemas.KindChange {
			continue
		}
		if d.OldKey != nil {
			if d.Event.OldKey, err = p.dec.DecodeKey(d.OldKey); err != nil {
				t.Fatal(err)
			}
		}
		events = append(events, d.Event)
	}
	p.seq++
	b := Batch{ID: fmt.Sprint("d", p.seq), Seq: p.seq, Topic: "t", EndOffsets: Offsets{0: p.offset}}
	prep, err := p.mirror.Prepare(ctx, events)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.history.Ensure(ctx, prep.Table); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.mirror.Apply(ctx, b, prep.Events); err != nil {
		t.Fatal(err)
	}
	pre, known := p.mirror.PreBatchSeqs()
	if _, err := p.history.Apply(ctx, b, prep.Events, pre, known); err != nil {
		t.Fatal(err)
	}
}

func docsMirror(t *testing.T, p *lakePipeline) string {
	tbl, err := p.cat.LoadTable(context.Background(), p.name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := ReadRows(context.Background(), tbl, []string{"id"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%v %v %v deleted=%v", r["id"], r["title"], r["body"], r[lakecat.ColDeleted]))
	}
	return strings.Join(out, "\n")
}

// A primary-key update (id 1 → 2) delivered create-first, in separate
// batches: the create carries a TOAST placeholder for the unchanged body
// and the old key in its header; the body comes from the old key's row,
// and the old key's delete applies as an independent row.
func TestKeyChangeCreateFirstWithToast(t *testing.T) {
	p := newLakePipeline(t, merge.HistoryOptions{})
	p.dec = schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: []string{"id"}})
	p.mirror = NewMirrorWriter(p.cat, p.name, []string{"id"})
	p.history = scd2.NewHistoryWriter(p.cat, p.name, []string{"id"}, merge.HistoryOptions{})
	long := strings.Repeat("x", 40)
	applyDocs(t, p, []schemas.Record{{Key: []byte(`{"id":1}`), Value: docValue("c", 100, "", `{"id":1,"title":"t","body":"`+long+`"}`)}})
	// UPDATE docs SET id = 2: Debezium emits delete(1) + tombstone + create(2); the create arrives first
	applyDocs(t, p, []schemas.Record{{Key: []byte(`{"id":2}`), Value: docValue("c", 201, "", `{"id":2,"title":"t","body":"__debezium_unavailable_value"}`),
		Headers: []schemas.Header{{Key: schemas.HeaderOldKey, Value: []byte(`{"id":1}`)}}}})
	applyDocs(t, p, []schemas.Record{
		{Key: []byte(`{"id":1}`), Value: docValue("d", 200, `{"id":1,"title":null,"body":null}`, ""),
			Headers: []schemas.Header{{Key: schemas.HeaderNewKey, Value: []byte(`{"id":2}`)}}},
		{Key: []byte(`{"id":1}`), Value: nil}})
	want := "1 t " + long + " deleted=true\n2 t " + long + " deleted=false"
	if got := docsMirror(t, p); got != want {
		t.Fatalf("mirror:\n%s\nwant\n%s", got, want)
	}
	// a TOAST placeholder, then a real NULL: the placeholder keeps the value, the NULL clears it
	applyDocs(t, p, []schemas.Record{{Key: []byte(`{"id":2}`), Value: docValue("u", 300, "", `{"id":2,"title":"t2","body":"__debezium_unavailable_value"}`)}})
	if got := docsMirror(t, p); !strings.Contains(got, "2 t2 "+long+" deleted=false") {
		t.Fatalf("after the placeholder:\n%s", got)
	}
	applyDocs(t, p, []schemas.Record{{Key: []byte(`{"id":2}`), Value: docValue("u", 400, "", `{"id":2,"title":"t2","body":null}`)}})
	if got := docsMirror(t, p); !strings.Contains(got, "2 t2 <nil> deleted=false") {
		t.Fatalf("after the real NULL:\n%s", got)
	}
	// history of key 2: the placeholder update is a change of title only; the NULL is a change
	tbl, _ := p.cat.LoadTable(context.Background(), p.name.History())
	rows, _, _ := ReadRows(context.Background(), tbl, []string{"id", lakecat.ColSeq})
	var h []string
	for _, r := range rows {
		h = append(h, fmt.Sprintf("%v %v %v %v", r["id"], r["title"], r["body"] != nil, r[lakecat.ColIsCurrent]))
	}
	if got := strings.Join(h, ","); got != "1 t true false,2 t true false,2 t2 true false,2 t2 false true" {
		t.Fatalf("history %s", got)
	}
}

// A key-change create's TOAST placeholder takes the old key's value at
// the create: the newest change of the old key below it that knows the
// value, passing over a key-only delete (one batch, in source order), and
// not a stale copy of an older change redelivered in the create's batch
// (the stored row, newer, supersedes it).
func TestKeyChangeToastValueAtTheCreate(t *testing.T) {
	mk := func() *lakePipeline {
		p := newLakePipeline(t, merge.HistoryOptions{})
		p.dec = schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: []string{"id"}})
		p.mirror = NewMirrorWriter(p.cat, p.name, []string{"id"})
		p.history = scd2.NewHistoryWriter(p.cat, p.name, []string{"id"}, merge.HistoryOptions{})
		return p
	}
	create1 := schemas.Record{Key: []byte(`{"id":1}`), Value: docValue("c", 100, "", `{"id":1,"title":"t","body":"b1"}`)}
	update1 := schemas.Record{Key: []byte(`{"id":1}`), Value: docValue("u", 150, "", `{"id":1,"title":"t","body":"b2"}`)}
	delete1 := schemas.Record{Key: []byte(`{"id":1}`), Value: docValue("d", 200, `{"id":1,"title":null,"body":null}`, ""),
		Headers: []schemas.Header{{Key: schemas.HeaderNewKey, Value: []byte(`{"id":2}`)}}}
	create2 := schemas.Record{Key: []byte(`{"id":2}`), Value: docValue("c", 201, "", `{"id":2,"title":"t","body":"__debezium_unavailable_value"}`),
		Headers: []schemas.Header{{Key: schemas.HeaderOldKey, Value: []byte(`{"id":1}`)}}}
	want := "1 t b2 deleted=true\n2 t b2 deleted=false"

	p := mk()
	applyDocs(t, p, []schemas.Record{create1, update1, delete1, create2})
	if got := docsMirror(t, p); got != want {
		t.Errorf("one batch: mirror\n%s\nwant\n%s", got, want)
	}

	p = mk()
	applyDocs(t, p, []schemas.Record{create1})
	applyDocs(t, p, []schemas.Record{update1})
	applyDocs(t, p, []schemas.Record{delete1})
	applyDocs(t, p, []schemas.Record{create1, create2}) // create1 redelivered
	if got := docsMirror(t, p); got != want {
		t.Errorf("a stale copy in the create's batch: mirror\n%s\nwant\n%s", got, want)
	}
}

// The real stack's primary-key update (scripts/realstack, items 101 →
// 100101): the old key's delete at the create's position carries
// PostgreSQL's key-only before image, in which Debezium gives a required
// text column "" and the TOASTed column NULL. Schema-less JSON does not
// say the column is required, so the image looks full; its NULL must not
// fill the placeholder (a TOASTed value is never NULL): the value is the
// old key's, from the batch or its stored row.
func TestKeyChangeToastKeyOnlyDeleteSamePosition(t *testing.T) {
	mk := func() *lakePipeline {
		p := newLakePipeline(t, merge.HistoryOptions{})
		p.dec = schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: []string{"id"}})
		p.mirror = NewMirrorWriter(p.cat, p.name, []string{"id"})
		p.history = scd2.NewHistoryWriter(p.cat, p.name, []string{"id"}, merge.HistoryOptions{})
		return p
	}
	create1 := schemas.Record{Key: []byte(`{"id":1}`), Value: docValue("c", 100, "", `{"id":1,"title":"t","body":"b1"}`)}
	delete1 := schemas.Record{Key: []byte(`{"id":1}`), Value: docValue("d", 200, `{"id":1,"title":"","body":null}`, ""),
		Headers: []schemas.Header{{Key: schemas.HeaderNewKey, Value: []byte(`{"id":2}`)}}}
	create2 := schemas.Record{Key: []byte(`{"id":2}`), Value: docValue("c", 200, "", `{"id":2,"title":"t","body":"__debezium_unavailable_value"}`),
		Headers: []schemas.Header{{Key: schemas.HeaderOldKey, Value: []byte(`{"id":1}`)}}}
	want := "1  <nil> deleted=true\n2 t b1 deleted=false" // the soft delete keeps the image's "" (schema-less)
	for _, split := range []bool{false, true} {
		p := mk()
		if split {
			applyDocs(t, p, []schemas.Record{create1})
			applyDocs(t, p, []schemas.Record{delete1, create2})
		} else {
			applyDocs(t, p, []schemas.Record{create1, delete1, create2})
		}
		if got := docsMirror(t, p); got != want {
			t.Errorf("split %v: mirror\n%s\nwant\n%s", split, got, want)
		}
	}
}
