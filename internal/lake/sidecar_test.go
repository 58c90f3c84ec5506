package lake

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/localstate"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
)

// sidecarWriter is a mirror writer with its own state under dir, loading
// sidecars, that records its builds and loads in counts ("new",
// "stale-sidecar", ..., "load").
func sidecarWriter(t testing.TB, dir string, counts map[string]int) *MirrorWriter {
	t.Helper()
	cat, err := lakecat.OpenCatalog(context.Background(), lakecat.CatalogConfig{LocalDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := NewWriters(cat, testTable, orderKey, WriterOptions{StateDir: t.TempDir(), Sidecar: true,
		OnBuild: func(r string) { counts[r]++ }, OnLoad: func() { counts["load"]++ }})
	return m
}

// A worker without the state loads it from the sidecar written for the
// table's current snapshot (no build), and applies the next batch exactly
// as the worker that wrote it would: a key-only delete keeps the values
// the loaded log holds. A sidecar of an older snapshot is not used: the
// state is built from the table, counted as stale-sidecar.
func TestStateSidecar(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	counts := map[string]int{}
	w1 := sidecarWriter(t, dir, counts)
	if _, _, err := apply(w1, batch(1), []*cdc.Event{ev(cdc.OpCreate, 1, 1001, "placed", 2550), ev(cdc.OpCreate, 2, 1002, "placed", 1200),
		ev(cdc.OpCreate, 3, 1003, "placed", 6000)}); err != nil {
		t.Fatal(err)
	}
	if err := w1.State().WriteSidecar(ctx); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(counts); got != "map[new:1]" {
		t.Fatalf("first writer: %s, want map[new:1]", got)
	}

	w2 := sidecarWriter(t, dir, counts)
	if _, _, err := apply(w2, batch(2), []*cdc.Event{ev(cdc.OpUpdate, 4, 1001, "paid", 2550), ev(cdc.OpDelete, 5, 1002, "", 0)}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(counts); got != "map[load:1 new:1]" {
		t.Fatalf("after the second writer: %s, want map[load:1 new:1] (loaded, not built)", got)
	}
	want := "1001 paid 25.50 @4 deleted=false\n1002 placed 12.00 @5 deleted=true\n1003 placed 60.00 @3 deleted=false"
	if got := mirrorLines(t, w2.cat); got != want {
		t.Fatalf("mirror after a batch on the loaded state:\n%s\nwant:\n%s", got, want)
	}
	ix := w2.Index()
	if ix.Len() != 3 || ix.SnapshotID != w2.State().MirrorSnap {
		t.Fatalf("loaded index: %d keys at snapshot %d, want 3 at %d", ix.Len(), ix.SnapshotID, w2.State().MirrorSnap)
	}

	// the sidecar is for batch 1's snapshot; the table is at batch 2's
	w3 := sidecarWriter(t, dir, counts)
	if _, _, err := apply(w3, batch(3), []*cdc.Event{ev(cdc.OpCreate, 6, 1004, "placed", 100)}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(counts); got != "map[load:1 new:1 stale-sidecar:1]" {
		t.Fatalf("after the third writer: %s, want map[load:1 new:1 stale-sidecar:1]", got)
	}
	want += "\n1004 placed 1.00 @6 deleted=false"
	if got := mirrorLines(t, w3.cat); got != want {
		t.Fatalf("mirror:\n%s\nwant:\n%s", got, want)
	}

	// a torn sidecar does not verify
	if err := w3.State().WriteSidecar(ctx); err != nil {
		t.Fatal(err)
	}
	tbl, err := w3.cat.LoadTable(ctx, testTable.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	path := tablestate.SidecarPath(tbl.Location())
	if len(path) > 7 && path[:7] == "file://" {
		path = path[7:]
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	w4 := sidecarWriter(t, dir, counts)
	if err := w4.EnsureState(ctx); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(counts); got != "map[load:1 new:1 stale-sidecar:2]" {
		t.Fatalf("after a torn sidecar: %s, want map[load:1 new:1 stale-sidecar:2]", got)
	}
}

// BenchmarkStateSidecar compares, for a mirror of LAKEMIRROR_BENCH_KEYS
// keys (default 1,000,000), building a worker's state from the table
// (build) with loading it from the sidecar (load).
func BenchmarkStateSidecar(b *testing.B) {
	ctx := context.Background()
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("LAKEMIRROR_BENCH_KEYS")); err == nil && v > 0 {
		n = v
	}
	dir := b.TempDir()
	counts := map[string]int{}
	w := sidecarWriter(b, dir, counts)
	const per = 200_000
	for seq, from := int64(1), 0; from < n; seq, from = seq+1, from+per {
		var evs []*cdc.Event
		for i := from; i < min(from+per, n); i++ {
			evs = append(evs, ev(cdc.OpCreate, uint64(i+1), int64(i), "placed", int64(i%10000)))
		}
		if _, _, err := apply(w, batch(seq), evs); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.State().WriteSidecar(ctx); err != nil {
		b.Fatal(err)
	}
	tbl, _ := w.cat.LoadTable(ctx, testTable.Mirror())
	if path := tablestate.SidecarPath(tbl.Location()); len(path) > 7 {
		if fi, err := os.Stat(path[len("file://"):]); err == nil {
			b.Logf("%d keys: sidecar %d bytes (%.0f bytes/key), log %d bytes", n, fi.Size(), float64(fi.Size())/float64(n), w.State().LogBytes())
		}
	}
	for _, mode := range []string{"build", "load"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				c := map[string]int{}
				cat, err := lakecat.OpenCatalog(ctx, lakecat.CatalogConfig{LocalDir: dir})
				if err != nil {
					b.Fatal(err)
				}
				m, _ := NewWriters(cat, testTable, orderKey, WriterOptions{StateDir: b.TempDir(), Sidecar: mode == "load",
					OnBuild: func(r string) { c[r]++ }, OnLoad: func() { c["load"]++ }})
				if err := m.EnsureState(ctx); err != nil {
					b.Fatal(err)
				}
				if want := map[string]string{"build": "map[new:1]", "load": "map[load:1]"}[mode]; fmt.Sprint(c) != want || m.Index().Len() != n {
					b.Fatalf("%s: %v, %d keys; want %s, %d keys", mode, c, m.Index().Len(), want, n)
				}
				m.State().Close()
			}
			b.ReportMetric(float64(n), "keys")
		})
	}
}

// A batch that changes the state log but commits no new Iceberg snapshot
// (a late change older than the key's row: recorded, the mirror row kept)
// makes the sidecar written before it stale: it is keyed to the tables'
// metadata files, which every commit replaces, not to snapshot ids alone.
// (Found by a breaker run: the sidecar was loaded and held one event of
// the key where the log held two.)
func TestSidecarStaleAfterCommitWithoutSnapshot(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	counts := map[string]int{}
	w1 := sidecarWriter(t, dir, counts)
	if _, _, err := apply(w1, batch(1), []*cdc.Event{ev(cdc.OpCreate, 10, 1001, "placed", 2550), ev(cdc.OpCreate, 11, 1002, "placed", 1200)}); err != nil {
		t.Fatal(err)
	}
	if err := w1.State().WriteSidecar(ctx); err != nil {
		t.Fatal(err)
	}
	snap1 := w1.State().MirrorSnap
	if _, _, err := apply(w1, batch(2), []*cdc.Event{ev(cdc.OpUpdate, 5, 1001, "late", 999)}); err != nil {
		t.Fatal(err)
	}
	tbl, err := lakecat.LoadTable(ctx, w1.cat, testTable.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	if lakecat.SnapID(tbl) != snap1 {
		t.Fatalf("the late batch made Iceberg snapshot %d (from %d): the case needs a commit without one", lakecat.SnapID(tbl), snap1)
	}
	k, _ := cdc.EncodeKey(nil, cdc.Int(1001))
	want, _, err := w1.State().Events([]cdc.Key{cdc.Key(k)})
	if err != nil {
		t.Fatal(err)
	}
	w2 := sidecarWriter(t, dir, counts)
	if err := w2.EnsureState(ctx); err != nil {
		t.Fatal(err)
	}
	got, complete, err := w2.State().Events([]cdc.Key{cdc.Key(k)})
	if err != nil {
		t.Fatal(err)
	}
	if counts["load"] != 0 || counts[string(tablestate.BuildStaleSidecar)] != 1 {
		t.Fatalf("builds and loads %v, want the sidecar refused as stale", counts)
	}
	// built from the tables, the new state claims no past events (the late
	// path reads bronze instead); the writer's log holds both
	if len(want[cdc.Key(k)]) != 2 || complete || len(got[cdc.Key(k)]) != 0 {
		t.Fatalf("events of key 1001: writer %d, new state %d (complete %v); want 2, and 0 not complete", len(want[cdc.Key(k)]), len(got[cdc.Key(k)]), complete)
	}
}

// Sidecars written before the key index moved to its own package
// (testdata, written by commit ae90505: a 3-batch orders table with
// history, fixed-width keys; a codes table with string keys of several
// lengths) parse, hold the keys they were written with, and encode again
// to the same bytes: the format did not change.
func TestSidecarFormatGolden(t *testing.T) {
	for _, c := range []struct {
		file, keyCols, layouts string
		files, hfiles          int
		entries                string // key: seq file pos deleted head, sorted
	}{
		{"testdata/sidecar-LMSIDE02.lms", "[order_id]", "[[order_id status amount]]", 3, 3,
			"107ffffffffffffff9: 00000000000000000000000000000004 0 0 false 270\n" +
				"1080000000000003e9: 00000000000000000000000000000005 1 0 false 1179\n" +
				"1080000000000003ea: 00000000000000000000000000000006 1 1 true 1417\n" +
				"1080000000000003eb: 00000000000000000000000000000008 2 0 false 1865\n" +
				"1080000000000003ec: 00000000000000000000000000000009 2 1 true 2110"},
		{"testdata/sidecar-LMSIDE02-varkeys.lms", "[code]", "[[code note]]", 2, 0,
			"20610001: 00000000000000000000000000000004 1 0 false 182\n" +
				"20612d6d7563682d6c6f6e6765722d636f64650001: 00000000000000000000000000000006 1 1 false 240\n" +
				"20626262620001: 00000000000000000000000000000005 1 2 true 314\n" +
				"2063630001: 00000000000000000000000000000003 0 2 false 124"},
	} {
		b, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		img, err := localstate.ParseSidecar(b)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		var got []string
		img.Ix.Each(func(k cdc.Key, e keyindex.Entry) {
			got = append(got, fmt.Sprintf("%x: %s %d %d %v %d", string(k), e.Seq.Hex(), e.File, e.Pos, e.Deleted, img.Ix.Head(k)))
		})
		sort.Strings(got)
		if g := strings.Join(got, "\n"); g != c.entries {
			t.Errorf("%s: entries\n%s\nwant\n%s", c.file, g, c.entries)
		}
		if g := fmt.Sprint(img.KeyCols); g != c.keyCols || fmt.Sprint(img.Layouts) != c.layouts || len(img.Ix.Files()) != c.files || len(img.HFiles) != c.hfiles {
			t.Errorf("%s: key columns %s, layouts %v, %d mirror and %d history files; want %s, %s, %d, %d", c.file, g, img.Layouts,
				len(img.Ix.Files()), len(img.HFiles), c.keyCols, c.layouts, c.files, c.hfiles)
		}
		img.Log = bytes.NewReader(img.LogBytes)
		var out bytes.Buffer
		e := &keyindex.Enc{W: &out}
		localstate.EncodeSidecar(e, img)
		if e.Err != nil {
			t.Fatal(e.Err)
		}
		out.Write(binary.LittleEndian.AppendUint32(nil, crc32.ChecksumIEEE(out.Bytes())))
		if !bytes.Equal(out.Bytes(), b) {
			t.Errorf("%s: encoded again, %d bytes differ from the %d written by ae90505", c.file, out.Len(), len(b))
		}
	}
}
