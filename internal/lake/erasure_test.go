package lake

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/erasure"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/schemas"
)

// eraseMarker is in the erased key's id and in its values: no byte
// sequence of it may be left in any file an Iceberg snapshot reaches.
// Short enough that a 16-character column bound keeps it.
const eraseMarker = "ERASEME7f"

var erasedID = "KEY-" + eraseMarker + "3a9c-0042"

// personValue is a Debezium PostgreSQL event of people(id, name, amount)
// without the envelope, at WAL position lsn, committed in 2023.
func personValue(op string, lsn int, before, after string) []byte {
	if before == "" {
		before = "null"
	}
	if after == "" {
		after = "null"
	}
	ts := 1_700_000_000_000 + int64(lsn)
	return []byte(fmt.Sprintf(`{"before":%s,"after":%s,"source":{"version":"2.7.3.Final","connector":"postgresql","name":"s","ts_ms":%d,"snapshot":"false","db":"s","sequence":"[\"%d\",\"%d\"]","schema":"public","table":"people","txId":%d,"lsn":%d,"xmin":null},"op":%q,"ts_ms":%d}`,
		before, after, ts, lsn-1, lsn, lsn, lsn, op, ts))
}

func person(id, name string, amount any) string {
	return fmt.Sprintf(`{"id":%q,"name":%q,"amount":%v}`, id, name, amount)
}

func personKey(id string) []byte { return []byte(fmt.Sprintf(`{"id":%q}`, id)) }

// erasePipeline writes Kafka records through one TableWriter, as
// ApplyBatch does (keys, headers, tombstones, quarantine).
type erasePipeline struct {
	t      *testing.T
	tw     *TableWriter
	cat    catalog.Catalog
	dec    *schemas.Decoder
	dir    string // the local state directory
	seq    int64
	offset int64
}

// kafkaRec is one Kafka record of the test topic.
type kafkaRec struct {
	key, value []byte
	headers    []BronzeHeader
}

func newErasePipeline(t *testing.T, lay ...layout.Tables) *erasePipeline {
	cat := newCatalog(t)
	dir := t.TempDir()
	var l layout.Tables
	if len(lay) > 0 {
		l = lay[0]
	}
	tw := NewTableWriter(cat, testTable, []string{"id"}, WriterOptions{History: true, StateDir: dir, Layout: l})
	t.Cleanup(func() { tw.Mirror.State().Close() })
	return &erasePipeline{t: t, tw: tw, cat: cat, dir: dir, dec: schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: []string{"id"}})}
}

// batch writes recs as the next batch at the next offsets (at, when
// given, writes them at those offsets instead: a backfill).
func (p *erasePipeline) batch(recs []kafkaRec, at ...int64) WriteOutput {
	p.t.Helper()
	var in WriteInput
	off := p.offset
	if len(at) > 0 {
		off = at[0]
	}
	from := off
	for _, r := range recs {
		br := BronzeRecord{Record: payload.Record{Offset: off, Key: r.key, Value: r.value, Headers: r.headers, Timestamp: 1_700_000_000_000_000}}
		d, err := p.dec.Decode(schemas.Record{Topic: "t", Offset: off, Key: r.key, Value: r.value, Headers: r.headers})
		if err != nil {
			p.t.Fatal(err)
		}
		if d.Kind == schemas.KindChange {
			in.Events = append(in.Events, d.Event)
			br.Op, br.Seq, br.SourceTs = d.RawOp, d.Event.Seq, d.Event.SourceTs
			if d.OldKey != nil {
				if k, err := p.dec.DecodeKey(d.OldKey); err == nil {
					d.Event.OldKey = k
				}
			}
		}
		in.Bronze = append(in.Bronze, br)
		off++
	}
	if len(at) == 0 {
		p.offset = off
	}
	p.seq++
	in.Batch = Batch{ID: fmt.Sprint("b", p.seq), Seq: p.seq, Topic: "t", Ranges: []Range{{From: from, To: off}}, EndOffsets: Offsets{0: max(off, p.offset)}}
	in.MaxQuarantine = 10
	in.KeyOf = func(b []byte) (*cdc.Row, bool) {
		r, err := p.dec.DecodeKeyRow(b)
		return r, err == nil
	}
	out, err := p.tw.Write(context.Background(), in)
	if err != nil {
		p.t.Fatal(err)
	}
	return out
}

// needles are the byte sequences of the erased key's values: the marker
// as text and as the hex that bronze's and purged's `_key` hold.
func needles() [][]byte {
	return [][]byte{[]byte(eraseMarker), []byte(hex.EncodeToString([]byte(eraseMarker))), []byte(strings.ToUpper(hex.EncodeToString([]byte(eraseMarker))))}
}

// reachableFiles lists every file an Iceberg table's retained snapshots
// reach: manifest lists, manifests, data and delete files (live entries:
// a removed file's entry keeps only its path and statistics, which the
// manifest's own bytes show), with the current metadata file.
func reachableFiles(t *testing.T, tbl *table.Table) (data, deletes, meta []string) {
	t.Helper()
	fs, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	meta = append(meta, tbl.MetadataLocation())
	for _, s := range tbl.Metadata().Snapshots() {
		meta = append(meta, s.ManifestList)
		mans, err := s.Manifests(fs)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mans {
			if !seen[m.FilePath()] {
				seen[m.FilePath()] = true
				meta = append(meta, m.FilePath())
			}
			for e, err := range m.Entries(fs, true) {
				if err != nil {
					t.Fatal(err)
				}
				p := e.DataFile().FilePath()
				if seen[p] {
					continue
				}
				seen[p] = true
				if e.DataFile().ContentType() == iceberg.EntryContentData {
					data = append(data, p)
				} else {
					deletes = append(deletes, p)
				}
			}
		}
	}
	return data, deletes, meta
}

// findErased returns, for one table, the reachable files whose bytes hold
// a needle, the data files in which the Go Parquet reader finds a value
// (any column, nested ones too) holding one, and the manifests (of any
// retained snapshot) whose entries' column bounds hold one (manifests are
// compressed Avro: their bytes do not show it).
func findErased(t *testing.T, cat catalog.Catalog, ident table.Identifier) (inBytes, inValues []string) {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	fs, _ := tbl.FS(ctx)
	data, deletes, meta := reachableFiles(t, tbl)
	for _, p := range slices.Concat(data, deletes, meta) {
		f, err := fs.Open(p)
		if err != nil {
			t.Fatalf("a reachable file cannot be opened: %v", err)
		}
		b, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range needles() {
			if bytes.Contains(b, n) {
				inBytes = append(inBytes, p)
				break
			}
		}
	}
	seen := map[string]bool{}
	for _, s := range tbl.Metadata().Snapshots() {
		mans, err := s.Manifests(fs)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mans {
			if seen[m.FilePath()] {
				continue
			}
			seen[m.FilePath()] = true
			for e, err := range m.Entries(fs, false) {
				if err != nil {
					t.Fatal(err)
				}
				df := e.DataFile()
				for _, bounds := range []map[int][]byte{df.LowerBoundValues(), df.UpperBoundValues()} {
					for _, b := range bounds {
						if holdsNeedle(b) && !slices.Contains(inValues, m.FilePath()) {
							inValues = append(inValues, m.FilePath())
						}
					}
				}
			}
		}
	}
	for _, p := range slices.Concat(data, deletes) {
		pf, err := parquetio.Open(fs, p)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		err = pf.Scan(ctx, nil, nil, func(rec arrow.RecordBatch, _ int64) error {
			for _, c := range rec.Columns() {
				found = found || arrayHolds(c)
			}
			return nil
		})
		pf.Close()
		if err != nil {
			t.Fatal(err)
		}
		if found {
			inValues = append(inValues, p)
		}
	}
	return inBytes, inValues
}

// arrayHolds reports whether a value of a (strings and binaries, in lists
// and structs too) holds a needle.
func arrayHolds(a arrow.Array) bool {
	switch a := a.(type) {
	case *array.String:
		for i := 0; i < a.Len(); i++ {
			if !a.IsNull(i) && holdsNeedle([]byte(a.Value(i))) {
				return true
			}
		}
	case *array.Binary:
		for i := 0; i < a.Len(); i++ {
			if !a.IsNull(i) && holdsNeedle(a.Value(i)) {
				return true
			}
		}
	case *array.List:
		return arrayHolds(a.ListValues())
	case *array.Struct:
		for f := 0; f < a.NumField(); f++ {
			if arrayHolds(a.Field(f)) {
				return true
			}
		}
	}
	return false
}

func holdsNeedle(b []byte) bool {
	return slices.ContainsFunc(needles(), func(n []byte) bool { return bytes.Contains(b, n) })
}

// tableLines reads a table's live rows as sorted lines of every column
// but those given, leaving out rows that hold a needle.
func tableLines(t *testing.T, cat catalog.Catalog, ident table.Identifier, skip ...string) []string {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	rows, cols, err := ReadRows(context.Background(), tbl, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		var parts []string
		for _, c := range cols {
			if !slices.Contains(skip, c) {
				parts = append(parts, fmt.Sprintf("%s=%v", c, r[c]))
			}
		}
		line := strings.Join(parts, " ") + " "
		if slices.Contains(skip, "*all") || !holdsNeedle([]byte(line)) {
			out = append(out, line)
		}
	}
	slices.Sort(out)
	return out
}

var fiveTables = map[string]func(lakecat.TableName) table.Identifier{
	"bronze": lakecat.TableName.Bronze, "mirror": lakecat.TableName.Mirror, "history": lakecat.TableName.History,
	"quarantine": lakecat.TableName.Quarantine, "purged": lakecat.TableName.Purged,
}

// tag points a tag of the table at its current snapshot.
func tag(t *testing.T, cat catalog.Catalog, ident table.Identifier, name string) int64 {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	id := tbl.CurrentSnapshot().SnapshotID
	if _, _, err := cat.CommitTable(ctx, ident, nil, []table.Update{table.NewSetSnapshotRefUpdate(name, id, table.TagRef, 0, 0, 0)}); err != nil {
		t.Fatal(err)
	}
	return id
}

// A tag that keeps a snapshot reaching the key's files refuses the
// erasure, which then changes nothing; with Force the erasure goes on
// everywhere else, keeps the tag's snapshot and files, and says so.
func TestEraseRefusesWhereATagKeepsTheKey(t *testing.T) {
	ctx := context.Background()
	p := newErasePipeline(t)
	rec := func(id string, value []byte) kafkaRec { return kafkaRec{key: personKey(id), value: value} }
	p.batch([]kafkaRec{
		rec("k-1", personValue("c", 10, "", person("k-1", "Bob", 1))),
		rec(erasedID, personValue("c", 11, "", person(erasedID, eraseMarker+" Alice", 2))),
	})
	kept := tag(t, p.cat, testTable.Mirror(), "audit-2026")
	p.batch([]kafkaRec{rec(erasedID, personValue("u", 20, "", person(erasedID, eraseMarker+" Alice", 3)))})
	keys, err := erasure.HashEraseKeys(ctx, p.cat, testTable, []string{"id=" + erasedID})
	if err != nil {
		t.Fatal(err)
	}
	req := erasure.EraseRequest{ID: "erase-tag", Keys: keys, RequestedBy: "dpo", RequestedAt: time.Now()}
	_, err = erasure.Erase(ctx, p.cat, testTable, req)
	var refused *erasure.ErasureRefusedError
	if !errors.As(err, &refused) || len(refused.Reasons) != 1 ||
		refused.Reasons[0] != fmt.Sprintf(`tag "audit-2026" of shop.orders (snapshot %d) keeps a data file holding a key (drop it, or give --force to keep it and erase everywhere else)`, kept) {
		t.Fatalf("erasure with a tag: %v", err)
	}
	etbl, _ := p.cat.LoadTable(ctx, testTable.Erasures())
	mirror, _ := p.cat.LoadTable(ctx, testTable.Mirror())
	if etbl.CurrentSnapshot() != nil || mirror.Properties()[erasure.PropErasureHorizon] != "" {
		t.Fatalf("a refused erasure changed the tables: erasures at %v, horizon %q", etbl.CurrentSnapshot(), mirror.Properties()[erasure.PropErasureHorizon])
	}
	if inBytes, _ := findErased(t, p.cat, testTable.Mirror()); len(inBytes) == 0 {
		t.Fatal("a refused erasure removed the key")
	}

	req.Force = true
	res, err := erasure.Erase(ctx, p.cat, testTable, req)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`[tag "audit-2026"] of shop.orders keeps snapshot %d, which reaches files holding a key: they were kept (--force)`, kept)
	if !slices.Equal(res.Warnings, []string{want}) {
		t.Fatalf("warnings %q, want %q", res.Warnings, want)
	}
	// the tag's snapshot and its file stay; main's snapshot holds nothing of the key
	mirror, _ = p.cat.LoadTable(ctx, testTable.Mirror())
	fs, _ := mirror.FS(ctx)
	snap := mirror.Metadata().SnapshotByID(kept)
	if snap == nil {
		t.Fatal("the tagged snapshot was expired")
	}
	tagged, err := lakecat.LiveDataFiles(fs, *snap)
	if err != nil || len(tagged) != 1 {
		t.Fatalf("the tagged snapshot reaches %v %v", slices.Sorted(maps.Keys(tagged)), err)
	}
	for path := range tagged {
		if b := readAll(t, fs, path); !holdsNeedle(b) {
			t.Fatal("the tagged snapshot's file lost the key")
		}
	}
	current, err := lakecat.LiveDataFiles(fs, *mirror.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	for path := range current {
		if holdsNeedle(readAll(t, fs, path)) {
			t.Fatalf("the current snapshot's %s holds the key", path)
		}
	}
	rows, _, err := ReadRows(ctx, mirror, nil)
	if err != nil || len(rows) != 1 || rows[0]["id"] != "k-1" {
		t.Fatalf("mirror after the erasure: %v %v", rows, err)
	}
	if res.Tables["mirror"].Rows != 1 || len(res.Tables["mirror"].FilesDeleted) != 1 || len(res.Tables["mirror"].FilesRewritten) != 2 {
		t.Fatalf("mirror result %+v", res.Tables["mirror"])
	}
}

func readAll(t *testing.T, fs interface {
	Open(string) (iceio.File, error)
}, path string) []byte {
	t.Helper()
	f, err := fs.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Erasure keys are typed as the mirror's key columns; what does not fit
// is refused with a message that names columns, never values.
func TestParseEraseKeys(t *testing.T) {
	ctx := context.Background()
	cat := newCatalog(t)
	w := NewMirrorWriter(cat, testTable, []string{"tenant", "id", "code"})
	t.Cleanup(func() { w.State().Close() })
	cols := cdc.NewColumns([]string{"tenant", "id", "code"})
	schema := []cdc.Column{{Name: "tenant", Type: cdc.TypeLong}, {Name: "id", Type: cdc.TypeString}, {Name: "code", Type: cdc.DecimalType(6, 2)}}
	row := &cdc.Row{Cols: cols, Vals: []cdc.Value{cdc.Int(7), cdc.String("a,b=c"), cdc.Decimal(1250, 2)}}
	e := &cdc.Event{Op: cdc.OpCreate, Seq: cdc.PostgresSeq(0, 1), After: row, Schema: schema, Origin: cdc.Origin{Topic: "t"}}
	e.Key, _ = cdc.KeyOf(row, []string{"tenant", "id", "code"})
	if _, _, err := apply(w, batch(1), []*cdc.Event{e}); err != nil {
		t.Fatal(err)
	}
	mirror, err := cat.LoadTable(ctx, testTable.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	keyCols := []string{"tenant", "id", "code"}
	keys, err := erasure.ParseEraseKeys(mirror, keyCols, []string{"tenant=7,id=a,b=c,code=12.5"})
	if err != nil || len(keys) != 1 || keys[0] != e.Key {
		t.Fatalf("a comma in a value, a decimal given at another scale: %q %v, want %q", keys, err, e.Key)
	}
	for _, c := range []struct{ arg, want string }{
		{"tenant=7,id=x", `lake: erase: --key lacks key column "code" (the key columns are [tenant id code])`},
		{"tenant=x,id=x,code=1", `lake: erase: key column "tenant": not a number`},
		{"tenant=7.5,id=x,code=1", `lake: erase: key column "tenant": the value does not fit the column's type long`},
		{"code=1,tenant=1,id=x,code=2", `lake: erase: key column "code" given twice in one --key`},
		{"name=secret,tenant=1", `lake: erase: --key names "name", which is not a key column (the key columns are [tenant id code]); write col=value[,col=value]`},
		{"tenant=1,id=x,code=1234567", `lake: erase: key column "code": the value does not fit the column's type decimal(6,2)`},
	} {
		_, err := erasure.ParseEraseKeys(mirror, keyCols, []string{c.arg})
		var ke *erasure.EraseKeyError
		if !errors.As(err, &ke) || err.Error() != c.want {
			t.Errorf("%s: %v, want %s", c.arg, err, c.want)
		}
	}
	if _, err := erasure.ParseEraseKeys(mirror, keyCols, nil); err == nil || err.Error() != "lake: erase: no key given" {
		t.Errorf("no key: %v", err)
	}
}

// A batch prepared before an erasure's guard and staged after it is
// prepared again (ErrHorizonMoved), and then refuses the erased key's
// replayed change instead of writing it back.
func TestEraseFencesPreparedBatch(t *testing.T) {
	ctx := context.Background()
	p := newErasePipeline(t)
	v1 := personValue("c", 11, "", person(erasedID, eraseMarker+" Alice", 2))
	p.batch([]kafkaRec{
		{key: personKey("k-1"), value: personValue("c", 10, "", person("k-1", "Bob", 1))},
		{key: personKey(erasedID), value: v1},
	})
	d, err := p.dec.Decode(schemas.Record{Topic: "t", Offset: 7, Value: v1})
	if err != nil {
		t.Fatal(err)
	}
	prep, err := p.tw.Mirror.Prepare(ctx, []*cdc.Event{d.Event})
	if err != nil || len(prep.Events) != 1 {
		t.Fatalf("prepared before the erasure: %+v %v", prep, err)
	}
	keys, err := erasure.HashEraseKeys(ctx, p.cat, testTable, []string{"id=" + erasedID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := erasure.Erase(ctx, p.cat, testTable, erasure.EraseRequest{ID: "e", Keys: keys, RequestedBy: "dpo", RequestedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	b := Batch{ID: "b9", Seq: 9, Topic: "t", Ranges: []Range{{From: 7, To: 8}}, EndOffsets: Offsets{0: 8}}
	if _, err := p.tw.Mirror.Stage(ctx, b, prep.Events); !errors.Is(err, ErrHorizonMoved) {
		t.Fatalf("staged after the erasure: %v, want ErrHorizonMoved", err)
	}
	d, _ = p.dec.Decode(schemas.Record{Topic: "t", Offset: 7, Value: v1})
	prep, err = p.tw.Mirror.Prepare(ctx, []*cdc.Event{d.Event})
	if err != nil || len(prep.Events) != 0 || len(prep.Rejected) != 1 || prep.Rejected[0].Stage != StageErased {
		t.Fatalf("prepared again: %+v %v", prep, err)
	}
	if _, err := p.tw.Mirror.Stage(ctx, b, prep.Events); err != nil {
		t.Fatal(err)
	}
}

// The five tables dropped and built again from the topic (starter drop
// --drop-tables keeps the erasures table): the erased key's old records
// are refused from the first batch on.
func TestErasureOutlivesDroppedTables(t *testing.T) {
	ctx := context.Background()
	p := newErasePipeline(t)
	recs := []kafkaRec{
		{key: personKey(erasedID), value: personValue("c", 11, "", person(erasedID, eraseMarker+" Alice", 2))},
		{key: personKey("k-1"), value: personValue("c", 12, "", person("k-1", "Bob", 1))},
	}
	p.batch(recs)
	keys, err := erasure.HashEraseKeys(ctx, p.cat, testTable, []string{"id=" + erasedID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := erasure.Erase(ctx, p.cat, testTable, erasure.EraseRequest{ID: "e", Keys: keys, RequestedBy: "dpo", RequestedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for _, ident := range fiveTables {
		if err := p.cat.DropTable(ctx, ident(testTable)); err != nil && !errors.Is(err, catalog.ErrNoSuchTable) {
			t.Fatal(err)
		}
	}
	q := newErasePipeline(t)
	q.cat = p.cat
	q.tw = NewTableWriter(p.cat, testTable, []string{"id"}, WriterOptions{History: true, StateDir: t.TempDir()})
	t.Cleanup(func() { q.tw.Mirror.State().Close() })
	out := q.batch(recs)
	if len(out.Quarantined) != 1 || out.Quarantined[0].Stage != StageErased || out.Quarantined[0].Value != nil {
		t.Fatalf("first batch of the new tables quarantined %+v", out.Quarantined)
	}
	for kind, ident := range fiveTables {
		if inBytes, inValues := findErased(t, p.cat, ident(testTable)); len(inBytes)+len(inValues) > 0 {
			t.Errorf("the new %s holds the key: %v %v", kind, inBytes, inValues)
		}
	}
	if got := tableLines(t, p.cat, testTable.Mirror(), lakecat.ColIngestedAt); len(got) != 1 || !strings.Contains(got[0], "id=k-1 ") {
		t.Errorf("new mirror: %v", got)
	}
}
