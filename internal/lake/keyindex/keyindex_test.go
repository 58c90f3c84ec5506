package keyindex

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// The compact key index against a Go map, under random inserts, updates,
// removals, mirror drops and key-length changes.
func TestKeyIndexMatchesMap(t *testing.T) {
	type entry struct {
		seq     cdc.Seq
		deleted bool
		file    int32
		pos     int64
		head    uint64
		mirror  bool
	}
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 9))
		ix := New(0, r.IntN(50))
		model := map[cdc.Key]*entry{}
		varKeys := seed%3 == 0
		key := func() cdc.Key {
			n := r.IntN(400)
			if varKeys && r.IntN(2) == 0 {
				return cdc.Key(fmt.Sprintf("k-%d", n))
			}
			var b [9]byte
			b[0] = 0x10
			binary.BigEndian.PutUint64(b[1:], uint64(n))
			return cdc.Key(b[:])
		}
		for op := 0; op < 5000; op++ {
			k := key()
			switch r.IntN(6) {
			case 0, 1:
				e := &entry{seq: cdc.SeqOf(r.Uint64(), r.Uint64()), deleted: r.IntN(3) == 0, file: int32(r.IntN(5)), pos: int64(r.IntN(1 << 20)), mirror: true}
				if old := model[k]; old != nil {
					e.head = old.head
				}
				model[k] = e
				ix.Set(k, e.seq, e.deleted, e.file, e.pos)
			case 2:
				h := r.Uint64() | 1
				if model[k] == nil {
					model[k] = &entry{}
				}
				model[k].head = h
				ix.SetHead(k, h)
			case 3:
				delete(model, k)
				ix.Remove(k)
			case 4:
				if e := model[k]; e != nil {
					e.mirror = false
				}
				ix.DropMirror(k)
			case 5:
				got, ok := ix.Lookup(k)
				e := model[k]
				if want := e != nil && e.mirror; ok != want {
					t.Fatalf("seed %d op %d: Lookup(%x) found=%v, want %v", seed, op, string(k), ok, want)
				}
				if ok && (got.Seq != e.seq || got.Deleted != e.deleted || got.File != e.file || got.Pos != e.pos) {
					t.Fatalf("seed %d op %d: Lookup(%x) = %+v, want %+v", seed, op, string(k), got, *e)
				}
			}
		}
		mirrors := 0
		for k, e := range model {
			if e.mirror {
				mirrors++
			}
			if got := ix.Head(k); got != e.head {
				t.Fatalf("seed %d: Head(%x) = %d, want %d", seed, string(k), got, e.head)
			}
		}
		if ix.Len() != mirrors || ix.Keys() != len(model) {
			t.Fatalf("seed %d: Len %d Keys %d, want %d and %d", seed, ix.Len(), ix.Keys(), mirrors, len(model))
		}
		seen := 0
		ix.Each(func(k cdc.Key, got Entry) {
			seen++
			e := model[k]
			if e == nil || !e.mirror || got.Seq != e.seq || got.Pos != e.pos {
				t.Fatalf("seed %d: Each gave %x %+v, model %+v", seed, string(k), got, e)
			}
		})
		if seen != mirrors {
			t.Fatalf("seed %d: Each visited %d keys, want %d", seed, seen, mirrors)
		}
	}
}

// BenchmarkKeyIndex reports the index's bytes per key for a table keyed
// by one bigint with PostgreSQL positions, both as the index counts its
// arrays and as the Go heap grows (live heap after a GC), and the cost of
// a lookup. LAKEMIRROR_INDEX_KEYS sets the keys (default 1,000,000).
func BenchmarkKeyIndex(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("LAKEMIRROR_INDEX_KEYS")); err == nil {
		n = v
	}
	key := func(i int) cdc.Key {
		var k [9]byte
		k[0] = 0x10
		binary.BigEndian.PutUint64(k[1:], uint64(i)^(1<<63))
		return cdc.Key(k[:])
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	ix := New(0, 0) // grown key by key, as a stream of inserts does
	for i := range n {
		ix.Set(key(i), cdc.SeqOf(uint64(i), uint64(i)), false, 0, int64(i))
		ix.SetHead(key(i), uint64(i)*100+8)
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heap := float64(ms.HeapAlloc-before) / float64(n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := ix.Lookup(key(i % n)); !ok {
			b.Fatal("missing key")
		}
	}
	b.ReportMetric(float64(ix.Bytes())/float64(n), "index-bytes/key")
	b.ReportMetric(heap, "heap-bytes/key")
	runtime.KeepAlive(ix)
}

// Positions of one table may differ in width (an Oracle XStream source
// snapshot read has no LCR position, its streamed changes do:
// cdc.OracleLCRSeq): the index widens its words, keeps narrower positions
// zero-padded (ordered as before against every wider position with a
// non-zero tail) and serves widths past its stack buffer.
func TestKeyIndexPositionWidths(t *testing.T) {
	ix := New(0, 4)
	read := cdc.OracleSeq(100, 100, cdc.OracleRSID{}, 0, 0)
	streamed, err := cdc.OracleLCRSeq(205, 204, 0, []byte{0xcd, 0xcc, 0x01})
	if err != nil {
		t.Fatal(err)
	}
	ix.Set("a", read, false, 1, 7)
	ix.Set("b", streamed, false, 2, 8)
	got, _ := ix.Lookup("a")
	if len(got.Seq) != len(streamed) || got.Seq[:len(read)] != read || got.Seq[len(read):] != cdc.Seq(make([]byte, len(streamed)-len(read))) ||
		!(got.Seq < streamed) || got.File != 1 || got.Pos != 7 {
		t.Errorf("narrow position: %s %+v", got.Seq.Hex(), got)
	}
	if got, _ := ix.Lookup("b"); got.Seq != streamed {
		t.Errorf("wide position: %s", got.Seq.Hex())
	}
	wide := cdc.SeqOf(make([]uint64, 20)...)
	wide = wide[:159] + "\x01"
	ix.Set("c", wide, true, 3, 9)
	if got, _ := ix.Lookup("c"); got.Seq != wide || !got.Deleted {
		t.Errorf("20 words: %s", got.Seq.Hex())
	}
	if got, _ := ix.Lookup("b"); got.Seq[:len(streamed)] != streamed || len(got.Seq) != len(wide) {
		t.Errorf("after widening to 20 words: %s", got.Seq.Hex())
	}
}
