package lake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/compact"
	"github.com/lakemirror/lakemirror/internal/lake/erasure"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/validation"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// mirrorSchemaV1 is the mirror schema lakemirror created before
// lakecat.ColDeleted: lakecat.MirrorSchema with the soft-delete column named lakecat.ColDeletedV1
// (same field id, type and place).
func mirrorSchemaV1(cols []cdc.Column, keyCols []string) (*iceberg.Schema, error) {
	sc, err := lakecat.MirrorSchema(cols, keyCols)
	if err != nil {
		return nil, err
	}
	fields := sc.Fields()
	for i := range fields {
		if fields[i].Name == lakecat.ColDeleted {
			fields[i].Name = lakecat.ColDeletedV1
		}
	}
	return iceberg.NewSchemaWithIdentifiers(0, sc.IdentifierFieldIDs, fields...), nil
}

// renameColumn renames a column of the table ident as an engine's
// ALTER TABLE ... RENAME COLUMN does: a metadata-only schema update.
func renameColumn(t *testing.T, cat catalog.Catalog, ident table.Identifier, from, to string) {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.UpdateSchema(true, false).RenameColumn([]string{from}, to).Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// schemaText renders the mirror's system columns as "name:id:type:required".
func schemaText(t *testing.T, cat catalog.Catalog, ident table.Identifier) string {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range tbl.Schema().Fields() {
		out = append(out, fmt.Sprintf("%s:%d:%s:%v", f.Name, f.ID, f.Type, f.Required))
	}
	return strings.Join(out, " ")
}

// softDeleteSample is TestPurge's stream: 20 keys ever seen, 10 of them
// soft-deleted (8 deletes, 2 deletes of keys never inserted).
func softDeleteSample() sample.Stream {
	return sample.Generate(sample.Options{Seed: 3, Inserts: 20, Updates: 20, Deletes: 8, UnseenDeletes: 2, Tombstones: true, Envelope: true})
}

func countDeleted(rows []sample.Row) int {
	n := 0
	for _, r := range rows {
		if r.Deleted {
			n++
		}
	}
	return n
}

// A new mirror has the soft-delete column _is_deleted (boolean, required,
// right after _seq) and no _deleted; its rows carry it.
func TestNewMirrorHasIsDeleted(t *testing.T) {
	p := newLakePipeline(t, merge.HistoryOptions{})
	s := softDeleteSample()
	p.batch(s.Clean)
	want := "order_id:1:long:true customer:2:string:false status:3:string:false amount:4:decimal(10, 2):false note:5:string:false updated_at:6:timestamptz:false " +
		"_seq:7:string:true _is_deleted:8:boolean:true _source_ts:9:timestamptz:false _ingested_at:10:timestamptz:true"
	if got := schemaText(t, p.cat, p.name.Mirror()); got != want {
		t.Fatalf("mirror schema:\n%s\nwant\n%s", got, want)
	}
	exp := s.Expected()
	if got, want := mirrorLive(t, p), expectedDump(exp); got != want {
		t.Fatalf("mirror:\n%s\nwant\n%s", got, want)
	}
	dump := mirrorDump(t, p)
	if n := strings.Count(dump, "_is_deleted=true"); n != 10 || countDeleted(exp) != 10 || strings.Count(dump, "_is_deleted=false") != len(exp)-10 || strings.Contains(dump, " _deleted=") {
		t.Fatalf("%d soft-deleted rows of %d, want 10:\n%s", n, len(exp), dump)
	}
}

// A mirror created with the old soft-delete column _deleted keeps
// applying (also from a fresh writer that rebuilds its state from the
// table), compacting, purging, erasing and reading for validation with
// it.
func TestMirrorWithDeletedV1(t *testing.T) {
	ctx := context.Background()
	p := newLakePipeline(t, merge.HistoryOptions{})
	p.mirror.schemaOf = mirrorSchemaV1
	s := softDeleteSample()
	for i := 0; i < len(s.Delivered); i += 9 {
		p.batch(s.Delivered[i:min(i+9, len(s.Delivered))])
	}
	want := "order_id:1:long:true customer:2:string:false status:3:string:false amount:4:decimal(10, 2):false note:5:string:false updated_at:6:timestamptz:false " +
		"_seq:7:string:true _deleted:8:boolean:true _source_ts:9:timestamptz:false _ingested_at:10:timestamptz:true"
	if got := schemaText(t, p.cat, p.name.Mirror()); got != want {
		t.Fatalf("mirror schema:\n%s\nwant\n%s", got, want)
	}
	exp := s.Expected()
	if got, want := mirrorLive(t, p), expectedDump(exp); got != want {
		t.Fatalf("mirror:\n%s\nwant\n%s", got, want)
	}
	before := mirrorDump(t, p)
	if n := strings.Count(before, " _deleted=true"); n != 10 || strings.Contains(before, "_is_deleted") {
		t.Fatalf("%d rows with _deleted=true, want 10:\n%s", n, before)
	}
	// a restarted worker: the key index from the table; a replay is a no-op
	p.mirror = NewMirrorWriter(p.cat, p.name, []string{"order_id"})
	p.batch(s.Delivered)
	if got := mirrorDump(t, p); got != before {
		t.Fatalf("a replay from a fresh writer changed the mirror:\n%s\nwant\n%s", got, before)
	}
	// validation's read of the mirror: every row, the soft deletes exact
	rs, err := validation.ReadMirrorReplayState(ctx, p.cat, p.name)
	if err != nil {
		t.Fatal(err)
	}
	deleted := 0
	for _, r := range rs.Rows {
		if r.Deleted {
			deleted++
		}
	}
	if len(rs.Rows) != len(exp) || deleted != 10 {
		t.Fatalf("replay state: %d rows, %d soft-deleted; want %d and 10", len(rs.Rows), deleted, len(exp))
	}
	res, err := compact.Compact(ctx, p.cat, p.name.Mirror(), compact.Options{})
	if err != nil || res.Added != 1 {
		t.Fatalf("compaction %+v %v", res, err)
	}
	if got := mirrorDump(t, p); got != before {
		t.Fatalf("rows changed by compaction:\n%s\nwant\n%s", got, before)
	}
	p.mirror.now = func() time.Time { return time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) }
	pres, err := p.mirror.Purge(ctx, 30*24*time.Hour, 0)
	if err != nil || pres.Purged != 10 || pres.Deleted != 10 {
		t.Fatalf("purge: %+v %v", pres, err)
	}
	var kept []string
	for _, line := range strings.Split(strings.TrimSpace(before), "\n") {
		if !strings.Contains(line, " _deleted=true") {
			kept = append(kept, line)
		}
	}
	if got := strings.TrimSpace(mirrorDump(t, p)); got != strings.Join(kept, "\n") || len(kept) != len(exp)-10 {
		t.Fatalf("after purge:\n%s\nwant the %d live rows only:\n%s", got, len(exp)-10, strings.Join(kept, "\n"))
	}
	// an erasure rewrites the files that hold the key; the rest stays
	keys, err := erasure.HashEraseKeys(ctx, p.cat, p.name, []string{"order_id=1002"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := erasure.Erase(ctx, p.cat, p.name, erasure.EraseRequest{ID: "e", Keys: keys, RequestedBy: "dpo", RequestedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	var rest []string
	for _, line := range kept {
		if !strings.HasPrefix(line, "order_id=1002 ") {
			rest = append(rest, line)
		}
	}
	if got := strings.TrimSpace(mirrorDump(t, p)); got != strings.Join(rest, "\n") || len(rest) != len(kept)-1 {
		t.Fatalf("after erasing 1002:\n%s\nwant:\n%s", got, strings.Join(rest, "\n"))
	}
	// and the writer keeps applying: a replay is a no-op
	p.mirror = NewMirrorWriter(p.cat, p.name, []string{"order_id"})
	p.batch(s.Delivered)
	if got := strings.TrimSpace(mirrorDump(t, p)); got != strings.Join(rest, "\n") {
		t.Fatalf("a replay after the erasure changed the mirror:\n%s\nwant:\n%s", got, strings.Join(rest, "\n"))
	}
}

// A mirror created with _deleted and renamed to _is_deleted between two
// batches (metadata only, by field id) keeps applying: the rows of both
// batches are exact and the column keeps its field id.
func TestMirrorRenamedToIsDeleted(t *testing.T) {
	p := newLakePipeline(t, merge.HistoryOptions{})
	p.mirror.schemaOf = mirrorSchemaV1
	s := softDeleteSample()
	half := len(s.Delivered) / 2
	p.batch(s.Delivered[:half])
	if got := schemaText(t, p.cat, p.name.Mirror()); !strings.Contains(got, " _deleted:8:boolean:true ") {
		t.Fatalf("mirror schema before the rename: %s", got)
	}
	renameColumn(t, p.cat, p.name.Mirror(), lakecat.ColDeletedV1, lakecat.ColDeleted)
	p.batch(s.Delivered[half:])
	want := "order_id:1:long:true customer:2:string:false status:3:string:false amount:4:decimal(10, 2):false note:5:string:false updated_at:6:timestamptz:false " +
		"_seq:7:string:true _is_deleted:8:boolean:true _source_ts:9:timestamptz:false _ingested_at:10:timestamptz:true"
	if got := schemaText(t, p.cat, p.name.Mirror()); got != want {
		t.Fatalf("mirror schema:\n%s\nwant\n%s", got, want)
	}
	exp := s.Expected()
	if got, want := mirrorLive(t, p), expectedDump(exp); got != want {
		t.Fatalf("mirror:\n%s\nwant\n%s", got, want)
	}
	if dump := mirrorDump(t, p); strings.Count(dump, "_is_deleted=true") != 10 {
		t.Fatalf("want 10 soft-deleted rows:\n%s", dump)
	}
	// a fresh writer reads the renamed column back: a replay is a no-op
	before := mirrorDump(t, p)
	p.mirror = NewMirrorWriter(p.cat, p.name, []string{"order_id"})
	p.batch(s.Delivered)
	if got := mirrorDump(t, p); got != before {
		t.Fatalf("a replay from a fresh writer changed the mirror:\n%s\nwant\n%s", got, before)
	}
}

// withIsDeleted is ev with a source column named _is_deleted.
func withIsDeleted(op cdc.Op, lsn uint64, id int64, status string, v bool) *cdc.Event {
	e := ev(op, lsn, id, status, 100)
	cols := cdc.NewColumns([]string{"order_id", "status", "amount", lakecat.ColDeleted})
	e.After = &cdc.Row{Cols: cols, Vals: append(e.After.Vals, cdc.Bool(v))}
	e.Schema = append(append([]cdc.Column(nil), orderSchema...), cdc.Column{Name: lakecat.ColDeleted, Type: cdc.TypeBool, Optional: true})
	return e
}

// asDelete turns an update into a delete of the same row image.
func asDelete(e *cdc.Event) *cdc.Event {
	e.Op, e.Before, e.After = cdc.OpDelete, e.After, nil
	return e
}

// The reserved names follow the table: a new table refuses a source
// column _is_deleted (any case) and _deleted; a table created with
// _deleted refuses a new _is_deleted, but one that already holds a
// source column _is_deleted (added before the name was reserved) keeps
// applying it, apart from its soft-delete column _deleted.
func TestIsDeletedSourceColumn(t *testing.T) {
	for _, name := range []string{"_is_deleted", "_IS_Deleted", "_deleted", "_Deleted"} {
		_, err := lakecat.MirrorSchema([]cdc.Column{{Name: "id", Type: cdc.TypeLong}, {Name: name, Type: cdc.TypeBool}}, []string{"id"})
		var rc *lakecat.ReservedColumnError
		if !errors.As(err, &rc) || rc.Column != name || rc.Reserved != strings.ToLower(name) {
			t.Errorf("%s: %v, want a ReservedColumnError", name, err)
		}
	}
	// a new table: the first batch with _is_deleted blocks
	cat := newCatalog(t)
	w := NewMirrorWriter(cat, testTable, orderKey)
	_, _, err := apply(w, batch(1), []*cdc.Event{withIsDeleted(cdc.OpCreate, 1, 1, "placed", true)})
	var blocked *SchemaBlockedError
	if !errors.As(err, &blocked) || len(blocked.Changes) != 1 || blocked.Changes[0].Column != lakecat.ColDeleted || blocked.Changes[0].Kind != "reserved" {
		t.Fatalf("new table: %v, want a reserved-column block", err)
	}
	// a table created with _deleted, no source _is_deleted: blocks too
	cat = newCatalog(t)
	w = NewMirrorWriter(cat, testTable, orderKey)
	w.schemaOf = mirrorSchemaV1
	if _, _, err := apply(w, batch(1), []*cdc.Event{ev(cdc.OpCreate, 1, 1, "placed", 100), ev(cdc.OpCreate, 2, 2, "placed", 100)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err = apply(w, batch(2), []*cdc.Event{withIsDeleted(cdc.OpUpdate, 3, 1, "paid", true)}); !errors.As(err, &blocked) || blocked.Changes[0].Column != lakecat.ColDeleted {
		t.Fatalf("old table without the column: %v, want a reserved-column block", err)
	}
	// the column added as lakemirror added new source columns before the
	// name was reserved (an optional column after the system columns)
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, testTable.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.UpdateSchema(true, false).AddColumn([]string{lakecat.ColDeleted}, iceberg.PrimitiveTypes.Bool, "", false, nil).Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	w = NewMirrorWriter(cat, testTable, orderKey) // a restarted worker
	res, _, err := apply(w, batch(3), []*cdc.Event{withIsDeleted(cdc.OpUpdate, 3, 1, "paid", true), withIsDeleted(cdc.OpUpdate, 4, 2, "paid", false),
		asDelete(withIsDeleted(cdc.OpUpdate, 5, 2, "paid", false))})
	if err != nil || res.Updated != 1 || res.Deleted != 1 {
		t.Fatalf("old table with a source _is_deleted: %+v %v", res, err)
	}
	want := "order_id:1:long:true status:2:string:false amount:3:decimal(10, 2):false _seq:4:string:true _deleted:5:boolean:true " +
		"_source_ts:6:timestamptz:false _ingested_at:7:timestamptz:true _is_deleted:8:boolean:false"
	if got := schemaText(t, cat, testTable.Mirror()); got != want {
		t.Fatalf("mirror schema:\n%s\nwant\n%s", got, want)
	}
	tbl, _ = cat.LoadTable(ctx, testTable.Mirror())
	rows, _, err := ReadRows(ctx, tbl, orderKey)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprint(r["order_id"], " ", r["status"], " ", r[lakecat.ColDeleted], " ", r[lakecat.ColDeletedV1]))
	}
	if g, w := strings.Join(got, "\n"), "1 paid true false\n2 paid false true"; g != w {
		t.Fatalf("rows:\n%s\nwant\n%s", g, w)
	}
	if n, err := lakecat.SoftDeleteColumn(tbl.Schema()); err != nil || n != lakecat.ColDeletedV1 {
		t.Fatalf("soft-delete column %q %v", n, err)
	}
}

// lakecat.SoftDeleteColumn: either name alone; both told apart by the field that
// follows _seq; otherwise a clear error.
func TestSoftDeleteColumn(t *testing.T) {
	f := func(id int, name string, typ iceberg.Type) iceberg.NestedField {
		return iceberg.NestedField{ID: id, Name: name, Type: typ, Required: true}
	}
	b, s := iceberg.PrimitiveTypes.Bool, iceberg.PrimitiveTypes.String
	for _, c := range []struct {
		fields []iceberg.NestedField
		want   string
	}{
		{[]iceberg.NestedField{f(1, "id", s), f(2, lakecat.ColSeq, s), f(3, lakecat.ColDeleted, b)}, lakecat.ColDeleted},
		{[]iceberg.NestedField{f(1, "id", s), f(2, lakecat.ColSeq, s), f(3, lakecat.ColDeletedV1, b)}, lakecat.ColDeletedV1},
		{[]iceberg.NestedField{f(1, "id", s), f(2, lakecat.ColSeq, s), f(3, lakecat.ColDeletedV1, b), f(4, lakecat.ColDeleted, b)}, lakecat.ColDeletedV1},
		{[]iceberg.NestedField{f(1, lakecat.ColDeleted, b), f(2, lakecat.ColSeq, s), f(3, lakecat.ColDeletedV1, b)}, lakecat.ColDeletedV1},
		{[]iceberg.NestedField{f(1, "id", s), f(2, lakecat.ColSeq, s), f(3, lakecat.ColDeleted, b), f(4, lakecat.ColDeletedV1, b)},
			"lake: the table has both _is_deleted (field id 3) and _deleted (field id 4) and neither is the soft-delete column that follows _seq; " +
				"rename the one that is not the soft-delete column (ALTER TABLE ... RENAME COLUMN) and restart the table"},
		{[]iceberg.NestedField{f(1, "id", s), f(2, lakecat.ColSeq, s)},
			"lake: the table has no soft-delete column (_is_deleted, or _deleted in tables created before it); is it a lakemirror mirror table?"},
		{[]iceberg.NestedField{f(1, "id", s), f(2, lakecat.ColSeq, s), f(3, lakecat.ColDeleted, s)},
			"lake: the mirror's soft-delete column _is_deleted is string, not boolean"},
	} {
		got, err := lakecat.SoftDeleteColumn(iceberg.NewSchema(0, c.fields...))
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%v: %q, want %q", c.fields, got, c.want)
		}
	}
}
