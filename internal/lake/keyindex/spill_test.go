package keyindex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// dump lists every key with its mirror entry and chain head, sorted.
func dump(ix *Index) string {
	var out []string
	ix.Each(func(k cdc.Key, e Entry) {
		out = append(out, fmt.Sprintf("%x m %s %d %d %v", string(k), e.Seq.Hex(), e.File, e.Pos, e.Deleted))
	})
	ix.EachHead(func(k cdc.Key, h uint64) { out = append(out, fmt.Sprintf("%x h %d", string(k), h)) })
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// A spilled index (table budget 0: it spills at its first safe point)
// behaves as one in RAM under the same random inserts, updates, removals,
// mirror drops and key-length changes, with safe points (Release) and
// batch lookups (Resolve) between them: every lookup, head, count and
// listing agrees, and its sidecar encoding loads back to the same keys.
func TestSpilledIndexMatchesRAM(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		b := NewBudget(64<<20, 0)
		disk := New(0, 0)
		disk.SetBudget(b, t.TempDir(), &Meter{})
		ram := New(0, 0)
		varKeys := seed%3 == 0
		key := func() cdc.Key {
			n := r.IntN(300)
			if varKeys && r.IntN(2) == 0 {
				return cdc.Key(fmt.Sprintf("k-%d", n))
			}
			var kb [9]byte
			kb[0] = 0x10
			binary.BigEndian.PutUint64(kb[1:], uint64(n))
			return cdc.Key(kb[:])
		}
		for op := 0; op < 4000; op++ {
			k := key()
			switch r.IntN(9) {
			case 0, 1:
				seq, del, f, p := cdc.SeqOf(r.Uint64(), r.Uint64()), r.IntN(3) == 0, int32(r.IntN(5)), int64(r.IntN(1<<20))
				if seed%4 == 0 && r.IntN(50) == 0 {
					seq = cdc.SeqOf(r.Uint64(), r.Uint64(), r.Uint64()) // a wider position
				}
				ram.Set(k, seq, del, f, p)
				disk.Set(k, seq, del, f, p)
			case 2:
				h := r.Uint64() | 1
				ram.SetHead(k, h)
				disk.SetHead(k, h)
			case 3:
				ram.Remove(k)
				disk.Remove(k)
			case 4:
				ram.DropMirror(k)
				disk.DropMirror(k)
			case 5:
				if err := disk.Release(); err != nil {
					t.Fatal(err)
				}
				if !disk.Spilled() {
					t.Fatalf("seed %d: not spilled after Release with a table budget of 0", seed)
				}
			case 6: // a batch: its keys resolved at once, then changed by entry number
				keys := make([]cdc.Key, 1+r.IntN(40))
				for i := range keys {
					keys[i] = key()
				}
				de, re := make([]uint32, len(keys)), make([]uint32, len(keys))
				if err := disk.Resolve(keys, de); err != nil {
					t.Fatal(err)
				}
				if err := ram.Resolve(keys, re); err != nil {
					t.Fatal(err)
				}
				for i := range keys {
					if got, want := disk.StoredAt(de[i]), ram.StoredAt(re[i]); got != want || disk.HeadAt(de[i]) != ram.HeadAt(re[i]) {
						t.Fatalf("seed %d op %d: entry of %x: %+v head %d, want %+v head %d", seed, op, string(keys[i]), got, disk.HeadAt(de[i]), want, ram.HeadAt(re[i]))
					}
					if r.IntN(2) == 0 {
						seq, p := cdc.SeqOf(r.Uint64(), r.Uint64()), int64(r.IntN(100))
						disk.SetAt(de[i], seq, false, 7, p)
						ram.SetAt(re[i], seq, false, 7, p)
					}
					h := r.Uint64() | 1
					disk.SetHeadAt(de[i], h)
					ram.SetHeadAt(re[i], h)
				}
				if err := disk.Flush(); err != nil {
					t.Fatal(err)
				}
			default:
				dg, dok := disk.Lookup(k)
				rg, rok := ram.Lookup(k)
				if dok != rok || dg.Seq != rg.Seq || dg.File != rg.File || dg.Pos != rg.Pos || dg.Deleted != rg.Deleted || disk.Head(k) != ram.Head(k) {
					t.Fatalf("seed %d op %d: Lookup(%x) = %+v %v head %d, in RAM %+v %v head %d", seed, op, string(k), dg, dok, disk.Head(k), rg, rok, ram.Head(k))
				}
			}
		}
		if disk.Len() != ram.Len() || disk.Keys() != ram.Keys() {
			t.Fatalf("seed %d: Len %d Keys %d, in RAM %d and %d", seed, disk.Len(), disk.Keys(), ram.Len(), ram.Keys())
		}
		want := dump(ram)
		if got := dump(disk); got != want {
			t.Fatalf("seed %d: spilled index lists\n%s\nin RAM\n%s", seed, got, want)
		}
		if got, want := disk.MaxSeq(), ram.MaxSeq(); got != want {
			t.Fatalf("seed %d: MaxSeq %s, in RAM %s", seed, got.Hex(), want.Hex())
		}
		var buf bytes.Buffer
		enc := &Enc{W: &buf}
		disk.EncodeSidecar(enc)
		if enc.Err != nil {
			t.Fatal(enc.Err)
		}
		d := &Dec{B: buf.Bytes()}
		back, err := DecodeSidecar(d, 0)
		if err != nil || len(d.B) != 0 {
			t.Fatalf("seed %d: sidecar of the spilled index: %v, %d bytes left", seed, err, len(d.B))
		}
		if got := dump(back); got != want || back.Len() != ram.Len() || back.Keys() != ram.Keys() {
			t.Fatalf("seed %d: sidecar of the spilled index loads as\n%s\nwant\n%s", seed, got, want)
		}
		dir := disk.spill.dir
		if err := disk.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("seed %d: store directory left after Close: %v", seed, err)
		}
		if b.InRAM() != 0 || b.OnDisk() != 0 {
			t.Fatalf("seed %d: budget still counts %d bytes in RAM, %d on disk after Close", seed, b.InRAM(), b.OnDisk())
		}
		b.Close()
	}
}

// Release spills an index over its table budget and keeps one within it
// in RAM; a spilled index empties its RAM part (Gen moves) once it holds
// more than a quarter of the table budget; the Meter reports each state.
// A spilled index whose directory is removed reports itself Lost.
func TestReleaseBudget(t *testing.T) {
	key := func(i int) cdc.Key {
		var kb [9]byte
		kb[0] = 0x10
		binary.BigEndian.PutUint64(kb[1:], uint64(i))
		return cdc.Key(kb[:])
	}
	b := NewBudget(64<<20, 4<<20)
	defer b.Close()
	var m Meter
	ix := New(0, 0)
	ix.SetBudget(b, t.TempDir(), &m)
	for i := range 20_000 { // about 1.2 MB
		ix.Set(key(i), cdc.SeqOf(1, uint64(i)), false, 0, int64(i))
	}
	if err := ix.Release(); err != nil {
		t.Fatal(err)
	}
	u := m.Usage()
	if ix.Spilled() || u.Spilled || u.Keys != 20_000 || u.RAMBytes != int64(ix.Bytes()) || u.DiskBytes != 0 || b.InRAM() != u.RAMBytes {
		t.Fatalf("within budget: spilled %v, usage %+v, index bytes %d, budget in RAM %d", ix.Spilled(), u, ix.Bytes(), b.InRAM())
	}
	for i := 20_000; i < 100_000; i++ { // about 6 MB: over the 4 MiB table budget
		ix.Set(key(i), cdc.SeqOf(1, uint64(i)), false, 0, int64(i))
	}
	if err := ix.Release(); err != nil {
		t.Fatal(err)
	}
	u = m.Usage()
	if !ix.Spilled() || !u.Spilled || u.Keys != 100_000 || u.DiskBytes <= 0 || ix.Bytes() != 0 || ix.Gen() != 1 {
		t.Fatalf("over budget: spilled %v, usage %+v, index bytes %d, gen %d", ix.Spilled(), u, ix.Bytes(), ix.Gen())
	}
	keys := make([]cdc.Key, 30_000) // a batch of 30,000 keys, 10,000 of them new
	for i := range keys {
		keys[i] = key(80_000 + i)
	}
	entries := make([]uint32, len(keys))
	if err := ix.Resolve(keys, entries); err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		st := ix.StoredAt(e)
		if found := 80_000+i < 100_000; st.Found != found || (found && st.Seq != cdc.SeqOf(1, uint64(80_000+i))) {
			t.Fatalf("key %d: %+v", 80_000+i, st)
		}
		ix.SetAt(e, cdc.SeqOf(2, uint64(i)), false, 1, int64(i))
	}
	if err := ix.Release(); err != nil { // 30,000 entries in RAM: over a quarter of 4 MiB
		t.Fatal(err)
	}
	if ix.Gen() != 2 || ix.Bytes() != 0 || ix.Keys() != 110_000 || ix.Len() != 110_000 {
		t.Fatalf("after the batch: gen %d, %d bytes in RAM, %d keys, %d with a mirror row", ix.Gen(), ix.Bytes(), ix.Keys(), ix.Len())
	}
	if e, ok := ix.Lookup(key(109_999)); !ok || e.Seq != cdc.SeqOf(2, 29_999) || e.File != 1 || e.Pos != 29_999 {
		t.Fatalf("key 109999 after the batch: %+v %v", e, ok)
	}
	if ix.Lost() {
		t.Fatalf("Lost with its directory in place: %v", ix.Err())
	}
	var err error
	for range 10 { // pebble may be writing a file meanwhile
		if err = os.RemoveAll(filepath.Dir(filepath.Join(ix.spill.dir, "x"))); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if !ix.Lost() {
		t.Fatal("not Lost after its directory was removed")
	}
	ix.Close()
}

// Resolve of a spilled index reads the keys it lacks in key order,
// whatever the batch's order: the same entries as one lookup per key.
func TestResolveUnsorted(t *testing.T) {
	b := NewBudget(64<<20, 0)
	defer b.Close()
	ix := New(0, 0)
	ix.SetBudget(b, t.TempDir(), nil)
	for i := range 1000 {
		ix.Set(cdc.Key(fmt.Sprintf("key-%04d", i)), cdc.SeqOf(uint64(i)), i%2 == 0, 0, int64(i))
	}
	if err := ix.Release(); err != nil || !ix.Spilled() {
		t.Fatalf("release: %v, spilled %v", err, ix.Spilled())
	}
	var keys []cdc.Key
	for _, i := range []int{999, 3, 500, 3, 1200, 0} {
		keys = append(keys, cdc.Key(fmt.Sprintf("key-%04d", i)))
	}
	entries := make([]uint32, len(keys))
	if err := ix.Resolve(keys, entries); err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, e := range entries {
		st := ix.StoredAt(e)
		got = append(got, fmt.Sprintf("%s:%v:%s:%v", keys[i], st.Found, st.Seq.Hex(), st.Deleted))
	}
	want := []string{"key-0999:true:00000000000003e7:false", "key-0003:true:0000000000000003:false", "key-0500:true:00000000000001f4:true",
		"key-0003:true:0000000000000003:false", "key-1200:false::false", "key-0000:true:0000000000000000:true"}
	if !slices.Equal(got, want) {
		t.Fatalf("resolved\n%v\nwant\n%v", got, want)
	}
	if entries[1] != entries[3] || ix.Keys() != 1001 {
		t.Fatalf("a key twice in the batch: entries %d and %d; %d keys (the new key-1200 counts)", entries[1], entries[3], ix.Keys())
	}
	ix.Close()
}

// The worker's budget: an index within its table budget still spills at
// its safe point once the worker's indexes together (and the block
// cache) exceed the worker's budget, while a smaller index stays in RAM.
func TestReleaseWorkerBudget(t *testing.T) {
	key := func(i int) cdc.Key {
		var kb [9]byte
		kb[0] = 0x10
		binary.BigEndian.PutUint64(kb[1:], uint64(i))
		return cdc.Key(kb[:])
	}
	b := NewBudget(20<<20, 12<<20) // a cache of 8 MiB: 12 MiB for the indexes
	defer b.Close()
	fill := func(ix *Index, n int) {
		for i := range n {
			ix.Set(key(i), cdc.SeqOf(1, uint64(i)), false, 0, int64(i))
		}
		if err := ix.Release(); err != nil {
			t.Fatal(err)
		}
	}
	small, large := New(0, 0), New(0, 0)
	small.SetBudget(b, t.TempDir(), nil)
	large.SetBudget(b, t.TempDir(), nil)
	defer small.Close()
	defer large.Close()
	fill(small, 50_000) // about 3 MB
	fill(large, 60_000)
	if small.Spilled() || large.Spilled() {
		t.Fatalf("within the worker's budget (%d bytes in RAM): spilled %v, %v", b.InRAM(), small.Spilled(), large.Spilled())
	}
	fill(large, 200_000) // about 11 MB: within its own 12 MiB, over the worker's 12 together
	if !large.Spilled() || small.Spilled() {
		t.Fatalf("over the worker's budget (%d bytes in RAM, large %d): small spilled %v, large %v (want only the one at its safe point)", b.InRAM(), large.Bytes(), small.Spilled(), large.Spilled())
	}
	// the spill went through the large index's memtables, counted in RAM
	// until pebble flushes them to disk
	for deadline := time.Now().Add(30 * time.Second); b.InRAM()+b.CacheBytes() > b.Worker() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		if err := large.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := small.Release(); err != nil || small.Spilled() {
		t.Fatalf("back within the worker's budget (%d bytes in RAM): small spilled %v, %v", b.InRAM(), small.Spilled(), err)
	}
}

// AddNew, as a build from the tables calls it (each key once, in any
// order, safe points between), leaves a spilled index as Set and SetHead
// leave one in RAM: the same entries, heads and counts, though it never
// reads the keys from disk first.
func TestAddNewSpilledMatchesRAM(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 33))
	b := NewBudget(64<<20, 0)
	defer b.Close()
	disk := New(0, 0)
	disk.SetBudget(b, t.TempDir(), &Meter{})
	ram := New(0, 0)
	for i, n := range r.Perm(5000) {
		var kb [9]byte
		kb[0] = 0x10
		binary.BigEndian.PutUint64(kb[1:], uint64(n))
		k := cdc.Key(kb[:])
		head := uint64(1000 + i)
		ram.SetHead(k, head)
		if n%7 == 0 { // no mirror row: history only
			disk.AddNew(k, head, nil)
		} else {
			e := Entry{Seq: cdc.SeqOf(uint64(n), uint64(i)), Deleted: n%5 == 0, File: int32(n % 3), Pos: int64(i)}
			ram.Set(k, e.Seq, e.Deleted, e.File, e.Pos)
			disk.AddNew(k, head, &e)
		}
		if i%500 == 499 {
			if err := disk.Release(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := disk.Flush(); err != nil {
		t.Fatal(err)
	}
	if !disk.Spilled() || disk.Keys() != ram.Keys() || disk.Len() != ram.Len() || ram.Keys() != 5000 {
		t.Fatalf("spilled %v, %d keys (%d with a mirror row), in RAM %d (%d)", disk.Spilled(), disk.Keys(), disk.Len(), ram.Keys(), ram.Len())
	}
	if got, want := dump(disk), dump(ram); got != want {
		t.Fatalf("spilled index after AddNew:\n%.2000s\nin RAM:\n%.2000s", got, want)
	}
	if err := disk.Close(); err != nil {
		t.Fatal(err)
	}
}
