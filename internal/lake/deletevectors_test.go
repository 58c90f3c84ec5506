package lake

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/compact"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/schemas"
)

// dvPipeline is a layoutPipeline whose writers have delete format f.
func dvPipeline(t *testing.T, cat catalog.Catalog, lay layout.Tables, f layout.DeleteFormat) (*layoutPipeline, func(ident table.Identifier) *table.Table) {
	keys := []string{"id"}
	tw := NewTableWriter(cat, testTable, keys, WriterOptions{History: true, Layout: lay, DeleteFormat: f, StateDir: t.TempDir()})
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

// dvBlob is one live deletion vector as read back from its Puffin file.
type dvBlob struct {
	data      string  // the data file it references, relative to the table's data directory
	positions []int64 // the positions the blob's bitmap holds
	card      int64   // the manifest entry's record count
}

// readBlobs reads every live deletion vector of tbl's current Iceberg
// snapshot straight from the bytes of its Puffin file, checking the
// blob's envelope (Iceberg spec, "Deletion Vectors"): a 4-byte
// big-endian length of magic + bitmap, the magic D1 D3 39 64, the
// portable Roaring bitmap, and a big-endian CRC-32 of magic + bitmap.
// It also counts the position-delete Parquet files.
func readBlobs(t *testing.T, tbl *table.Table) (blobs []dvBlob, parquetDeletes int) {
	t.Helper()
	ctx := context.Background()
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mans, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mans {
		if m.ManifestContent() != iceberg.ManifestContentDeletes {
			continue
		}
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				t.Fatal(err)
			}
			df := e.DataFile()
			if df.FileFormat() != iceberg.PuffinFile {
				parquetDeletes++
				continue
			}
			if !strings.HasSuffix(df.FilePath(), ".puffin") || df.ReferencedDataFile() == nil || df.ContentOffset() == nil || df.ContentSizeInBytes() == nil {
				t.Fatalf("deletion vector entry %s lacks its Puffin path, referenced file, offset or size", df.FilePath())
			}
			f, err := fs.Open(df.FilePath())
			if err != nil {
				t.Fatal(err)
			}
			raw, err := io.ReadAll(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			if string(raw[:4]) != "PFA1" || string(raw[len(raw)-4:]) != "PFA1" {
				t.Fatalf("%s is not a Puffin file", df.FilePath())
			}
			off, size := *df.ContentOffset(), *df.ContentSizeInBytes()
			blob := raw[off : off+size]
			if n := binary.BigEndian.Uint32(blob[:4]); int64(n) != size-8 {
				t.Errorf("blob length field %d, want %d", n, size-8)
			}
			if !slices.Equal(blob[4:8], []byte{0xD1, 0xD3, 0x39, 0x64}) {
				t.Errorf("blob magic % x", blob[4:8])
			}
			if crc := binary.BigEndian.Uint32(blob[size-4:]); crc != crc32.ChecksumIEEE(blob[4:size-4]) {
				t.Errorf("blob CRC %08x, want %08x", crc, crc32.ChecksumIEEE(blob[4:size-4]))
			}
			bm, err := dv.DeserializeDV(blob, df.Count())
			if err != nil {
				t.Fatal(err)
			}
			b := dvBlob{data: strings.TrimPrefix(*df.ReferencedDataFile(), tbl.Location()+"/data/"), card: df.Count()}
			for p := range bm.Positions() {
				b.positions = append(b.positions, int64(p))
			}
			blobs = append(blobs, b)
		}
	}
	slices.SortFunc(blobs, func(a, b dvBlob) int { return strings.Compare(a.data, b.data) })
	return blobs, parquetDeletes
}

// fileIDsAll maps each live data file of tbl (relative to its data
// directory) to its rows' ids in file order, deletes not applied.
func fileIDsAll(t *testing.T, tbl *table.Table) map[string][]int64 {
	t.Helper()
	ctx := context.Background()
	fs, files, _, err := tablestate.LiveFiles(ctx, tbl, "test")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]int64{}
	for _, f := range files {
		p, err := parquetio.Open(fs, f.FilePath())
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		err = p.Scan(ctx, []int{p.ColumnIndex("id")}, nil, func(rec arrow.RecordBatch, _ int64) error {
			col, ok := rec.Column(0).(*array.Int64)
			if !ok {
				return fmt.Errorf("id column is %s", rec.Column(0).DataType())
			}
			for r := 0; r < col.Len(); r++ {
				ids = append(ids, col.Value(r))
			}
			return nil
		})
		p.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(f.FilePath(), tbl.Location()+"/data/")] = ids
	}
	return out
}

// Deletion vectors, end to end: a v3 mirror and history whose replaced
// rows are removed by one deletion vector per data file (a later batch's
// deletes of the same file replace its vector with one holding the old
// positions too), giving the same rows as position deletes; the blobs
// read back hold exactly the replaced rows' positions. The tombstone
// purge adds to them; compaction drops them all; the writer goes on
// after the compaction.
func TestDeletionVectors(t *testing.T) {
	batches := [][][]byte{
		{ // four inserts: one data file
			orderValue("c", 100, 0, "", orderRow(1, "eu", 10)),
			orderValue("c", 101, 0, "", orderRow(2, "us", 20)),
			orderValue("c", 102, 0, "", orderRow(3, "eu", 30)),
			orderValue("c", 103, 0, "", orderRow(4, "us", 40)),
		},
		{ // 1 updated: a deletion vector of the first file
			orderValue("u", 200, 1, orderRow(1, "eu", 10), orderRow(1, "eu", 11)),
		},
		{ // 2 updated, 3 deleted: the first file's vector is replaced by one with three positions; 1 again: the second file's
			orderValue("u", 300, 2, orderRow(2, "us", 20), orderRow(2, "us", 21)),
			orderValue("d", 301, 2, orderRow(3, "eu", 30), ""),
			orderValue("u", 302, 2, orderRow(1, "eu", 11), orderRow(1, "eu", 12)),
		},
	}
	wantMirror := []string{
		"1 eu 12 false", "2 us 21 false", "3 eu 30 true", "4 us 40 false",
	}
	for _, lay := range []layout.Tables{{}, {Mirror: layout.Spec{PartitionBy: []string{"region"}}, History: layout.Spec{PartitionBy: []string{"region"}}}} {
		t.Run(fmt.Sprintf("partitioned=%v", !lay.Mirror.IsZero()), func(t *testing.T) {
			ctx := context.Background()
			pos, loadPos := dvPipeline(t, newCatalog(t), lay, layout.DeletePosition)
			dvp, load := dvPipeline(t, newCatalog(t), lay, layout.DeleteVector)
			for _, b := range batches {
				pos.batch(b...)
				dvp.batch(b...)
			}
			mirror, history := load(testTable.Mirror()), load(testTable.History())
			if v := mirror.Metadata().Version(); v != 3 {
				t.Fatalf("mirror format version %d, want 3", v)
			}
			if v := history.Metadata().Version(); v != 3 {
				t.Fatalf("history format version %d, want 3", v)
			}
			if v := loadPos(testTable.Mirror()).Metadata().Version(); v != 2 {
				t.Fatalf("position-delete mirror format version %d, want 2", v)
			}
			if v := load(testTable.Bronze()).Metadata().Version(); v != 2 {
				t.Fatalf("bronze format version %d, want 2", v)
			}
			got := liveRows(t, mirror, "id", "region", "amount", lakecat.ColDeleted)
			if !slices.Equal(got, wantMirror) {
				t.Errorf("mirror %q, want %q", got, wantMirror)
			}
			hcols := []string{"id", "region", "amount", lakecat.ColSeq, lakecat.ColValidToSeq, lakecat.ColIsCurrent}
			if h, hp := liveRows(t, history, hcols...), liveRows(t, loadPos(testTable.History()), hcols...); !slices.Equal(h, hp) || len(h) != 7 {
				t.Errorf("history with deletion vectors %q\nwith position deletes %q (want 7 rows, equal)", h, hp)
			}
			blobs, parquet := readBlobs(t, mirror)
			if parquet != 0 {
				t.Errorf("%d position-delete files in a v3 mirror", parquet)
			}
			gotBlobs := blobSummary(t, mirror, blobs)
			var wantBlobs []string
			if lay.Mirror.IsZero() {
				wantBlobs = []string{"ids [1 2 3] card=3", "ids [1] card=1"}
			} else { // the first file is two partitions, eu (1, 3) and us (2, 4); the second holds 1 (eu)
				wantBlobs = []string{"ids [1 3] card=2", "ids [1] card=1", "ids [2] card=1"}
			}
			if !slices.Equal(gotBlobs, wantBlobs) {
				t.Errorf("mirror deletion vectors %q, want %q", gotBlobs, wantBlobs)
			}
			hblobs, hparquet := readBlobs(t, history)
			if hparquet != 0 || len(hblobs) == 0 {
				t.Errorf("history: %d position-delete files, %d deletion vectors", hparquet, len(hblobs))
			}

			// the purge removes 3's soft-deleted row with a deletion vector
			dvp.tw.Mirror.now = func() time.Time { return time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) }
			res, err := dvp.tw.Mirror.Purge(ctx, 30*24*time.Hour, 0)
			if err != nil || res.Purged != 1 {
				t.Fatalf("purge: %+v, %v", res, err)
			}
			mirror = load(testTable.Mirror())
			want := []string{"1 eu 12 false", "2 us 21 false", "4 us 40 false"}
			if got := liveRows(t, mirror, "id", "region", "amount", lakecat.ColDeleted); !slices.Equal(got, want) {
				t.Errorf("after the purge: mirror %q, want %q", got, want)
			}
			blobs, _ = readBlobs(t, mirror)
			gotBlobs = blobSummary(t, mirror, blobs)
			if lay.Mirror.IsZero() {
				wantBlobs = []string{"ids [1 2 3] card=3", "ids [1] card=1", "ids [3] card=1"}
			} else {
				wantBlobs = []string{"ids [1 3] card=2", "ids [1] card=1", "ids [2] card=1", "ids [3] card=1"}
			}
			if !slices.Equal(gotBlobs, wantBlobs) {
				t.Errorf("after the purge: mirror deletion vectors %q, want %q", gotBlobs, wantBlobs)
			}

			// compaction applies and drops every deletion vector
			cres, err := compact.Compact(ctx, dvp.cat, testTable.Mirror(), compact.Options{})
			if err != nil {
				t.Fatal(err)
			}
			wantFiles := 1
			if !lay.Mirror.IsZero() {
				wantFiles = 2 // eu, us
			}
			if cres.DeleteFilesBefore != len(wantBlobs) || cres.RemovedDeleteFiles != len(wantBlobs) || cres.Added != wantFiles {
				t.Errorf("compaction %+v: want %d deletion vectors before and removed, %d files added", cres, len(wantBlobs), wantFiles)
			}
			mirror = load(testTable.Mirror())
			if blobs, parquet := readBlobs(t, mirror); len(blobs) != 0 || parquet != 0 {
				t.Errorf("after compaction: %d deletion vectors, %d position-delete files", len(blobs), parquet)
			}
			if got := liveRows(t, mirror, "id", "region", "amount", lakecat.ColDeleted); !slices.Equal(got, want) {
				t.Errorf("after compaction: mirror %q, want %q", got, want)
			}
			if got := len(fileIDsAll(t, mirror)); got != wantFiles {
				t.Errorf("after compaction: %d data files, want %d", got, wantFiles)
			}
			hc, err := compact.Compact(ctx, dvp.cat, testTable.History(), compact.Options{})
			if err != nil {
				t.Fatal(err)
			}
			history = load(testTable.History())
			if blobs, _ := readBlobs(t, history); len(blobs) != 0 || hc.RemovedDeleteFiles != len(hblobs) {
				t.Errorf("history compaction %+v: %d deletion vectors left, want %d removed", hc, len(blobs), len(hblobs))
			}
			if h, hp := liveRows(t, history, hcols...), liveRows(t, loadPos(testTable.History()), hcols...); !slices.Equal(h, hp) {
				t.Errorf("compacted history %q, want %q", h, hp)
			}

			// the writer goes on: a deletion vector of a compacted file
			dvp.batch(orderValue("u", 400, 3, orderRow(4, "us", 40), orderRow(4, "us", 41)))
			mirror = load(testTable.Mirror())
			want = []string{"1 eu 12 false", "2 us 21 false", "4 us 41 false"}
			if got := liveRows(t, mirror, "id", "region", "amount", lakecat.ColDeleted); !slices.Equal(got, want) {
				t.Errorf("after compaction and a batch: mirror %q, want %q", got, want)
			}
			blobs, _ = readBlobs(t, mirror)
			if got, want := blobSummary(t, mirror, blobs), []string{"ids [4] card=1"}; !slices.Equal(got, want) {
				t.Errorf("after compaction and a batch: deletion vectors %q, want %q", got, want)
			}
		})
	}
}

// blobSummary renders each deletion vector as the ids of the rows at its
// positions in its data file: "ids [1 3] card=2", sorted.
func blobSummary(t *testing.T, tbl *table.Table, blobs []dvBlob) []string {
	t.Helper()
	files := fileIDsAll(t, tbl)
	var out []string
	for _, b := range blobs {
		ids, ok := files[b.data]
		if !ok {
			t.Fatalf("deletion vector of %s, which is not a live data file", b.data)
		}
		var at []int64
		for _, p := range b.positions {
			at = append(at, ids[p])
		}
		slices.Sort(at)
		if int64(len(b.positions)) != b.card {
			t.Errorf("deletion vector of %s: %d positions, cardinality %d", b.data, len(b.positions), b.card)
		}
		out = append(out, fmt.Sprintf("ids %v card=%d", at, b.card))
	}
	slices.Sort(out)
	return out
}

// The delete format is fixed when the tables are created: a writer set
// to deletion vectors finds a format-version 2 mirror and stops the
// batch with a DeleteFormatError that says how to go on, the mirror
// untouched.
func TestDeleteFormatFixed(t *testing.T) {
	cat := newCatalog(t)
	pos, load := dvPipeline(t, cat, layout.Tables{}, layout.DeletePosition)
	pos.batch(orderValue("c", 100, 0, "", orderRow(1, "eu", 10)))
	before := load(testTable.Mirror()).CurrentSnapshot().SnapshotID
	dvp, _ := dvPipeline(t, cat, layout.Tables{}, layout.DeleteVector)
	dvp.offset = pos.offset
	v := orderValue("u", 200, 1, orderRow(1, "eu", 10), orderRow(1, "eu", 11))
	d, err := dvp.dec.Decode(schemas.Record{Topic: "t", Offset: dvp.offset, Value: v})
	if err != nil {
		t.Fatal(err)
	}
	in := WriteInput{Events: []*cdc.Event{d.Event}, Bronze: []BronzeRecord{{Record: payload.Record{Offset: dvp.offset, Value: v}, Op: d.RawOp, Seq: d.Event.Seq}}, MaxQuarantine: 10,
		Batch: Batch{ID: "b2", Seq: 2, Topic: "t", Ranges: []Range{{From: dvp.offset, To: dvp.offset + 1}}, EndOffsets: Offsets{0: dvp.offset + 1}}}
	_, err = dvp.tw.Write(context.Background(), in)
	var dfe *DeleteFormatError
	if !errors.As(err, &dfe) || dfe.Has != layout.DeletePosition || dfe.Want != layout.DeleteVector {
		t.Fatalf("write: %v, want a DeleteFormatError", err)
	}
	const want = "lake: shop.orders writes position (Iceberg v2 position deletes) but the table's delete format setting is dv (Iceberg v3 deletion vectors); the delete format is fixed when the tables are created: set it back to position (starter settings --delete-format position), or stop the table, drop its Iceberg tables and start it again with --delete-format dv"
	if dfe.Error() != want {
		t.Errorf("error %q\nwant %q", dfe.Error(), want)
	}
	mirror := load(testTable.Mirror())
	if mirror.CurrentSnapshot().SnapshotID != before || mirror.Metadata().Version() != 2 {
		t.Errorf("mirror moved: Iceberg snapshot %d (was %d), format version %d", mirror.CurrentSnapshot().SnapshotID, before, mirror.Metadata().Version())
	}
	if got := liveRows(t, mirror, "id", "amount"); !slices.Equal(got, []string{"1 10"}) {
		t.Errorf("mirror %q", got)
	}
}
