package lake

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/compact"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/schemas"
)

// orderValue is a Debezium PostgreSQL event of orders(id, region, amount)
// without the envelope, committed day days after 2023-11-14 (source
// ts_ms), at WAL position lsn.
func orderValue(op string, lsn, day int, before, after string) []byte {
	if before == "" {
		before = "null"
	}
	if after == "" {
		after = "null"
	}
	ts := 1_700_000_000_000 + int64(day)*86_400_000 + int64(lsn)
	return []byte(fmt.Sprintf(`{"before":%s,"after":%s,"source":{"version":"2.7.3.Final","connector":"postgresql","name":"s","ts_ms":%d,"snapshot":"false","db":"s","sequence":"[\"%d\",\"%d\"]","schema":"public","table":"orders","txId":%d,"lsn":%d,"xmin":null},"op":%q,"ts_ms":%d}`,
		before, after, ts, lsn-1, lsn, lsn, lsn, op, ts))
}

func orderRow(id int, region string, amount int) string {
	return fmt.Sprintf(`{"id":%d,"region":%q,"amount":%d}`, id, region, amount)
}

// layoutPipeline writes batches through one TableWriter, as ApplyBatch
// does.
type layoutPipeline struct {
	t      *testing.T
	tw     *TableWriter
	cat    catalog.Catalog
	dec    *schemas.Decoder
	seq    int64
	offset int64
}

func newLayoutPipeline(t *testing.T, lay layout.Tables) (*layoutPipeline, func(ident table.Identifier) *table.Table) {
	return layoutPipelineOn(t, newCatalog(t), lay)
}

// layoutPipelineOn is newLayoutPipeline on an existing catalog (a worker
// that starts with another layout: the settings changed).
func layoutPipelineOn(t *testing.T, cat catalog.Catalog, lay layout.Tables) (*layoutPipeline, func(ident table.Identifier) *table.Table) {
	keys := []string{"id"}
	tw := NewTableWriter(cat, testTable, keys, WriterOptions{History: true, Layout: lay, StateDir: t.TempDir()})
	t.Cleanup(func() { tw.Mirror.State().Close() })
	load := func(ident table.Identifier) *table.Table {
		tbl, err := cat.LoadTable(context.Background(), ident)
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	return &layoutPipeline{t: t, tw: tw, cat: cat, dec: schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: keys})}, load
}

func (p *layoutPipeline) batch(values ...[]byte) WriteOutput {
	p.t.Helper()
	var in WriteInput
	from := p.offset
	for _, v := range values {
		r := schemas.Record{Topic: "t", Offset: p.offset, Key: nil, Value: v}
		in.Bronze = append(in.Bronze, BronzeRecord{Record: payload.Record{Offset: p.offset, Value: v}})
		p.offset++
		d, err := p.dec.Decode(r)
		if err != nil {
			p.t.Fatal(err)
		}
		if d.Kind == schemas.KindChange {
			in.Events = append(in.Events, d.Event)
			in.Bronze[len(in.Bronze)-1].Op, in.Bronze[len(in.Bronze)-1].Seq = d.RawOp, d.Event.Seq
		}
	}
	p.seq++
	in.Batch = Batch{ID: fmt.Sprint("b", p.seq), Seq: p.seq, Topic: "t", Ranges: []Range{{From: from, To: p.offset}}, EndOffsets: Offsets{0: p.offset}}
	in.MaxQuarantine = 10
	out, err := p.tw.Write(context.Background(), in)
	if err != nil {
		p.t.Fatal(err)
	}
	return out
}

// liveRows reads a table's rows (deletes applied) as sorted lines of the
// given columns.
func liveRows(t *testing.T, tbl *table.Table, cols ...string) []string {
	t.Helper()
	rows, _, err := ReadRows(context.Background(), tbl, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		var parts []string
		for _, c := range cols {
			parts = append(parts, fmt.Sprint(r[c]))
		}
		out = append(out, strings.Join(parts, " "))
	}
	slices.Sort(out)
	return out
}

// fileLayout lists a table's live data files as "<partition dir> <rows>"
// and checks that every delete file the scan applies to a data file is
// of that file's spec and partition.
func fileLayout(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, task := range tasks {
		f := task.File
		rel := strings.TrimPrefix(f.FilePath(), tbl.Location()+"/data/")
		dir := rel[:max(strings.LastIndexByte(rel, '/'), 0)]
		out = append(out, fmt.Sprintf("%s %d", dir, f.Count()))
		for _, d := range task.DeleteFiles {
			if d.SpecID() != f.SpecID() || fmt.Sprint(d.Partition()) != fmt.Sprint(f.Partition()) {
				t.Errorf("delete file %s (spec %d, %v) applies to data file %s (spec %d, %v)", d.FilePath(), d.SpecID(), d.Partition(), f.FilePath(), f.SpecID(), f.Partition())
			}
			if drel := strings.TrimPrefix(d.FilePath(), tbl.Location()+"/data/"); dir != "" && !strings.HasPrefix(drel, dir+"/") || dir == "" && strings.Contains(drel, "/") {
				t.Errorf("delete file %s is not in its partition's directory %s", d.FilePath(), dir)
			}
		}
	}
	slices.Sort(out)
	return out
}

// A partitioned, sorted mirror and a day-partitioned history: updates
// that move a row to another partition are a position delete in the old
// partition's file plus the row in the new one, also a move and back
// within one batch; deletes, late events and the late-key rebuild give
// the same rows as the unpartitioned table, and every file holds exactly
// its partition's rows.
func TestPartitionedMirrorAndHistory(t *testing.T) {
	lay := layout.Tables{
		Mirror:  layout.Spec{PartitionBy: []string{"region", "bucket(2, id)"}, SortBy: []string{"amount desc"}},
		History: layout.Spec{PartitionBy: []string{"day(_valid_from)"}},
		Bronze:  layout.Spec{PartitionBy: []string{layout.Unpartitioned}},
	}
	batches := [][][]byte{
		{ // day 0: three inserts
			orderValue("c", 100, 0, "", orderRow(1, "eu", 10)),
			orderValue("c", 101, 0, "", orderRow(2, "us", 20)),
			orderValue("c", 102, 0, "", orderRow(3, "eu", 30)),
		},
		{ // day 1: 1 moves eu → us; 3 moves eu → us → eu in the batch; 2 is deleted
			orderValue("u", 200, 1, orderRow(1, "eu", 10), orderRow(1, "us", 11)),
			orderValue("u", 201, 1, orderRow(3, "eu", 30), orderRow(3, "us", 31)),
			orderValue("u", 202, 1, orderRow(3, "us", 31), orderRow(3, "eu", 32)),
			orderValue("d", 203, 1, orderRow(2, "us", 20), ""),
		},
		{ // day 2: a late update of 1 (between its insert and its move), a new key
			orderValue("u", 150, 0, orderRow(1, "eu", 10), orderRow(1, "eu", 15)),
			orderValue("c", 300, 2, "", orderRow(4, "ap", 40)),
		},
	}
	run := func(lay layout.Tables) (mirror, history []string, p *layoutPipeline, load func(table.Identifier) *table.Table) {
		p, load = newLayoutPipeline(t, lay)
		for _, b := range batches {
			p.batch(b...)
		}
		if keys, err := p.tw.Pending(context.Background()); err != nil {
			t.Fatal(err)
		} else if len(keys) > 0 {
			t.Fatalf("keys pending a rebuild: %q", keys)
		}
		mirror = liveRows(t, load(testTable.Mirror()), "id", "region", "amount", lakecat.ColDeleted, lakecat.ColSeq)
		history = liveRows(t, load(testTable.History()), "id", "region", "amount", lakecat.ColSeq, lakecat.ColValidToSeq, lakecat.ColIsCurrent)
		return mirror, history, p, load
	}
	flatMirror, flatHistory, _, _ := run(layout.Tables{Bronze: lay.Bronze})
	mirror, history, _, load := run(lay)
	wantMirror := []string{
		"1 us 11 false 00000000000000c800000000000000c8",
		"2 us 20 true 00000000000000cb00000000000000cb",
		"3 eu 32 false 00000000000000ca00000000000000ca",
		"4 ap 40 false 000000000000012c000000000000012c",
	}
	if !slices.Equal(mirror, wantMirror) || !slices.Equal(flatMirror, wantMirror) {
		t.Errorf("mirror:\npartitioned %q\nflat        %q\nwant        %q", mirror, flatMirror, wantMirror)
	}
	if !slices.Equal(history, flatHistory) || len(history) != 8 {
		t.Errorf("history:\npartitioned %q\nflat        %q", history, flatHistory)
	}
	wantHistory := []string{
		"1 eu 10 00000000000000640000000000000064 00000000000000960000000000000096 false",
		"1 eu 15 00000000000000960000000000000096 00000000000000c800000000000000c8 false", // the late change, woven in
		"1 us 11 00000000000000c800000000000000c8 <nil> true",
		"2 us 20 00000000000000650000000000000065 00000000000000cb00000000000000cb false",
		"3 eu 30 00000000000000660000000000000066 00000000000000c900000000000000c9 false",
		"3 eu 32 00000000000000ca00000000000000ca <nil> true",
		"3 us 31 00000000000000c900000000000000c9 00000000000000ca00000000000000ca false",
		"4 ap 40 000000000000012c000000000000012c <nil> true",
	}
	if !slices.Equal(history, wantHistory) {
		t.Errorf("history %q, want %q", history, wantHistory)
	}
	mtbl := load(testTable.Mirror())
	if got, want := fileLayout(t, mtbl), []string{
		// the first batch's files (bucket(2, id) is 0 for ids 1, 2 and 4, 1
		// for 3); 1, 2 and 3 were replaced, so their rows are position
		// deletes in these partitions
		"region=eu/id_bucket=0 1", "region=eu/id_bucket=1 1", "region=us/id_bucket=0 1",
		// the second batch's: 1 moved to us (with 2's soft delete), 3 back in eu
		"region=us/id_bucket=0 2", "region=eu/id_bucket=1 1",
		// the third's
		"region=ap/id_bucket=0 1",
	}; !slices.Equal(got, sorted(want)) {
		t.Errorf("mirror files %q, want %q", got, sorted(want))
	}
	htbl := load(testTable.History())
	if got, want := fileLayout(t, htbl), []string{
		"_valid_from_day=2023-11-14 3", // batch 1: the versions opened
		"_valid_from_day=2023-11-14 3", // batch 2: the versions of day 0 it closed
		"_valid_from_day=2023-11-15 3", // batch 2: the versions it opened
		"_valid_from_day=2023-11-14 2", // batch 3: key 1's versions of day 0, rebuilt with the late change
		"_valid_from_day=2023-11-15 1", // batch 3: key 1's current version, rebuilt
		"_valid_from_day=2023-11-16 1", // batch 3: key 4
	}; !slices.Equal(got, sorted(want)) {
		t.Errorf("history files %q, want %q", got, sorted(want))
	}
	checkFileRows(t, mtbl, "region", func(dir string, v cdc.Value) bool { return strings.HasPrefix(dir, "region="+v.S+"/") })
	checkFileRows(t, htbl, lakecat.ColValidFrom, func(dir string, v cdc.Value) bool {
		return dir == "_valid_from_day="+time.UnixMicro(v.I).UTC().Format("2006-01-02")
	})
	spec := mtbl.Spec()
	if spec.NumFields() != 2 || spec.Field(0).Name != "region" || spec.Field(1).Name != "id_bucket" || mtbl.SortOrder().Len() != 1 {
		t.Errorf("mirror spec %v, sort order %v", spec, mtbl.SortOrder())
	}
}

// checkFileRows checks that every row of every live data file of tbl
// (deleted or not) belongs to the file's partition directory: in(dir, v)
// for its value v of col.
func checkFileRows(t *testing.T, tbl *table.Table, col string, in func(dir string, v cdc.Value) bool) {
	t.Helper()
	ctx := context.Background()
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		rel := strings.TrimPrefix(task.File.FilePath(), tbl.Location()+"/data/")
		dir := rel[:strings.LastIndexByte(rel, '/')]
		f, err := parquetio.Open(fs, task.File.FilePath())
		if err != nil {
			t.Fatal(err)
		}
		c := f.ColumnIndex(col)
		rows := 0
		err = f.Scan(ctx, []int{c}, nil, func(rec arrow.RecordBatch, _ int64) error {
			for i := range int(rec.NumRows()) {
				v, err := parquetio.ValueAt(rec.Column(0), i)
				if err != nil {
					return err
				}
				if !in(dir, v) {
					t.Errorf("%s: row %d has %s %v", rel, rows, col, v)
				}
				rows++
			}
			return nil
		})
		f.Close()
		if err != nil || rows != int(task.File.Count()) {
			t.Fatalf("%s: %d rows read of %d: %v", rel, rows, task.File.Count(), err)
		}
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// Partition evolution on a live table: the mirror starts unpartitioned,
// the layout setting changes, the next batches write partitioned files
// (rows they replace in the old files are deleted by unpartitioned delete
// files of the old spec), compaction rewrites the old files into the new
// spec, and batches after the compaction delete rows of the files it
// wrote. The rows stay exactly those of the unpartitioned table.
func TestPartitionEvolutionAndCompaction(t *testing.T) {
	ctx := context.Background()
	bronze := layout.Spec{PartitionBy: []string{layout.Unpartitioned}}
	p, load := newLayoutPipeline(t, layout.Tables{Bronze: bronze})
	p.batch(
		orderValue("c", 100, 0, "", orderRow(1, "eu", 10)),
		orderValue("c", 101, 0, "", orderRow(2, "us", 20)),
		orderValue("c", 102, 0, "", orderRow(3, "eu", 30)),
		orderValue("c", 103, 0, "", orderRow(4, "ap", 40)),
	)
	// the settings change: a worker with the new layout takes over
	p.tw.Mirror.State().Close()
	q, _ := layoutPipelineOn(t, p.cat, layout.Tables{Mirror: layout.Spec{PartitionBy: []string{"region"}}, Bronze: bronze})
	q.seq, q.offset = p.seq, p.offset
	q.batch(
		orderValue("u", 200, 1, orderRow(1, "eu", 10), orderRow(1, "us", 11)),
		orderValue("c", 201, 1, "", orderRow(5, "eu", 50)),
	)
	mtbl := load(testTable.Mirror())
	if got, want := fileLayout(t, mtbl), []string{" 4", "region=eu 1", "region=us 1"}; !slices.Equal(got, want) {
		t.Errorf("files after the layout change %q, want %q", got, want)
	}
	if spec := mtbl.Spec(); spec.ID() != 1 || spec.NumFields() != 1 {
		t.Errorf("current spec %v", spec)
	}
	res, err := compact.Compact(ctx, p.cat, testTable.Mirror(), compact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mtbl = load(testTable.Mirror())
	// every file was small, so all are rewritten: one per partition
	if got, want := fileLayout(t, mtbl), []string{"region=ap 1", "region=eu 2", "region=us 2"}; !slices.Equal(got, want) || res.Rewritten != 3 || res.RemovedDeleteFiles != 1 {
		t.Errorf("files after compaction %q, want %q (result %+v)", got, sorted(want), res)
	}
	checkFileRows(t, mtbl, "region", func(dir string, v cdc.Value) bool { return dir == "region="+v.S })
	// after the compaction: deletes against the files it wrote
	q.batch(
		orderValue("u", 300, 2, orderRow(3, "eu", 30), orderRow(3, "us", 33)),
		orderValue("d", 301, 2, orderRow(4, "ap", 40), ""),
	)
	mtbl = load(testTable.Mirror())
	want := []string{"1 us 11 false", "2 us 20 false", "3 us 33 false", "4 ap 40 true", "5 eu 50 false"}
	if got := liveRows(t, mtbl, "id", "region", "amount", lakecat.ColDeleted); !slices.Equal(got, want) {
		t.Errorf("mirror %q, want %q", got, want)
	}
	fileLayout(t, mtbl) // delete files in their data files' partitions
	checkFileRows(t, mtbl, "region", func(dir string, v cdc.Value) bool { return dir == "region="+v.S })
}
