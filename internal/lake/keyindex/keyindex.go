package keyindex

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"slices"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/merge"
)

// Entry is what the primary-key index holds per key: the stored
// mirror row's position and guard state.
type Entry struct {
	Seq     cdc.Seq
	File    int32 // index into the mirror file table (Index.FilePath); -1 when the key has no mirror row
	Pos     int64 // row position in that data file
	Deleted bool
}

// Index maps each primary key of a table to its mirror row and to the
// head of its record chain in the table's local state log (docs/design.md,
// "Write path"). It is built for memory, not convenience: an open-addressing
// hash table of 8-byte slots (32-bit hash tag, 32-bit entry number) over
// pointer-free columns, one value per entry each: the encoded key bytes (a
// fixed-width array while every key has the same length, else bytes plus
// end offsets), the mirror `_seq` as fixed-width 64-bit words, the file id
// and row position of the mirror row, a flag byte and the 64-bit chain
// head. The garbage collector never scans it (no pointers), and a PostgreSQL
// table keyed by one bigint costs about 53 bytes per key (BenchmarkKeyIndex
// reports bytes/key). Keys are compared in full after a tag match, so hash
// collisions cost time, never correctness.
//
// It reflects exactly one Iceberg snapshot of the mirror (SnapshotID); a
// writer that finds the table at another snapshot rebuilds it. Not safe for
// concurrent use.
type Index struct {
	SnapshotID int64 // mirror snapshot this index reflects; 0 for a table without snapshots
	Duplicates int   // live rows found for an already-indexed key during a rebuild (should be 0)

	seed       maphash.Seed
	slots      []uint64 // 0 = empty; else tag<<32 | entry+1
	used       int      // entries in use (keys)
	mirrorKeys int      // keys with a mirror row

	// entries, struct of arrays
	keyWidth int      // > 0: every key is keyWidth bytes, at keys[i*keyWidth:]; 0: variable, ends in keyEnd
	keys     []byte   // key bytes
	keyEnd   []uint32 // variable keys: end offset of entry i's key in keys
	words    int      // `_seq` words per key (a table's positions all have one width); 0 until the first key
	seqs     []uint64 // entry i's `_seq` words at [i*words:]
	flags    []uint8
	file     []int32
	pos      []uint32
	head     []uint64 // chain head ref in the state log; 0 = none
	free     []uint32 // entry numbers of removed keys, reused first

	files   []string
	fileIDs map[string]int32

	// ramKeys: entries in the slot table (equal to used while the index
	// is in RAM; once spilled, the keys the RAM part holds, tombstones of
	// keys known absent included).
	ramKeys int
	// spill: where the index lives once it outgrew its budget (spill.go);
	// nil while it is all in RAM.
	spill *spill
	// budget, dir, meter: SetBudget's; accRAM and accDisk are the bytes
	// last counted in the budget.
	budget          *Budget
	dir             string
	meter           *Meter
	accRAM, accDisk int64
	// gen counts the times a spilled index emptied its RAM part: entry
	// numbers handed out before are void (Gen).
	gen uint64
}

// Entry flags.
const (
	flagDeleted  = 1 << 0 // the mirror row is soft-deleted
	flagNoMirror = 1 << 1 // the key has no mirror row (only history or log records)
	flagDirty    = 1 << 6 // spilled: changed since the last Flush (never on disk, never set in RAM)
	flagFree     = 1 << 7 // the entry number is unused (key removed); spilled: a tombstone, the key is absent
)

const maxLoad = 0.85 // slots in use / slots before the table grows

func New(snapshotID int64, sizeHint int) *Index {
	ix := &Index{SnapshotID: snapshotID, seed: maphash.MakeSeed(), fileIDs: map[string]int32{}}
	ix.Reserve(sizeHint)
	return ix
}

// Reserve makes room for n keys without growing.
func (ix *Index) Reserve(n int) {
	if n < 8 {
		n = 8
	}
	if need := int(float64(n)/maxLoad) + 1; need > len(ix.slots) {
		ix.rehash(need)
	}
	if cap(ix.flags) < n {
		ix.growEntries(n)
	}
}

// Len is the number of keys with a mirror row (live or soft-deleted).
func (ix *Index) Len() int { return ix.mirrorKeys }

// Keys is the number of keys held (with or without a mirror row).
func (ix *Index) Keys() int { return ix.used }

// Bytes is the memory the index holds (capacity of its arrays), for
// benchmarks and status.
func (ix *Index) Bytes() int {
	n := 8*cap(ix.slots) + cap(ix.keys) + 4*cap(ix.keyEnd) + 8*cap(ix.seqs) + cap(ix.flags) +
		4*cap(ix.file) + 4*cap(ix.pos) + 8*cap(ix.head) + 4*cap(ix.free)
	for _, f := range ix.files {
		n += len(f) + 16
	}
	return n
}

func (ix *Index) hash(k cdc.Key) uint32 {
	h := maphash.String(ix.seed, string(k))
	return uint32(h>>32) | 1 // never 0, so a slot word is never 0
}

// slotOf maps a tag to its home slot (multiply-shift over any table size).
func (ix *Index) slotOf(tag uint32) int {
	hi, _ := bits.Mul64(uint64(tag)*0x9E3779B97F4A7C15, uint64(len(ix.slots)))
	return int(hi)
}

func (ix *Index) keyAt(i uint32) string {
	if ix.keyWidth > 0 {
		o := int(i) * ix.keyWidth
		return string(ix.keys[o : o+ix.keyWidth])
	}
	start := uint32(0)
	if i > 0 {
		start = ix.keyEnd[i-1]
	}
	return string(ix.keys[start:ix.keyEnd[i]])
}

// keyEquals compares entry i's key with k without allocating.
func (ix *Index) keyEquals(i uint32, k cdc.Key) bool {
	if ix.keyWidth > 0 {
		if len(k) != ix.keyWidth {
			return false
		}
		o := int(i) * ix.keyWidth
		return string(ix.keys[o:o+ix.keyWidth]) == string(k)
	}
	start := uint32(0)
	if i > 0 {
		start = ix.keyEnd[i-1]
	}
	return string(ix.keys[start:ix.keyEnd[i]]) == string(k)
}

// find returns the entry number of k and its slot, or ok false and the
// slot where k would go.
func (ix *Index) find(k cdc.Key) (entry uint32, slot int, ok bool) {
	if len(ix.slots) == 0 {
		return 0, 0, false
	}
	tag := ix.hash(k)
	s := ix.slotOf(tag)
	for {
		w := ix.slots[s]
		if w == 0 {
			return 0, s, false
		}
		if uint32(w>>32) == tag {
			e := uint32(w) - 1
			if ix.keyEquals(e, k) {
				return e, s, true
			}
		}
		if s++; s == len(ix.slots) {
			s = 0
		}
	}
}

// EntryOf returns the entry number of k, adding k (with no mirror row)
// when absent. Entry numbers stay valid until the key is removed, and for
// a spilled index until the next Release.
func (ix *Index) EntryOf(k cdc.Key) uint32 {
	if e, ok := ix.entry(k); ok {
		if ix.flags[e]&flagFree != 0 { // spilled: a key known absent comes back
			ix.resetEntry(e)
			ix.used++
			ix.markDirty(e)
		}
		return e
	}
	e := ix.insert(k)
	ix.used++
	return e
}

// insert adds k to the slot table as a new entry with no mirror row.
func (ix *Index) insert(k cdc.Key) uint32 {
	if float64(ix.ramKeys+1) > maxLoad*float64(len(ix.slots)) {
		ix.rehash(max(int(float64(len(ix.slots))*1.5), 16))
	}
	e := ix.newEntry(k)
	tag := ix.hash(k)
	s := ix.slotOf(tag)
	for ix.slots[s] != 0 {
		if s++; s == len(ix.slots) {
			s = 0
		}
	}
	ix.slots[s] = uint64(tag)<<32 | uint64(e+1)
	ix.ramKeys++
	ix.markDirty(e)
	return e
}

// entry returns k's entry number: from the slot table, or for a spilled
// index loaded from disk (a key absent there gets a tombstone entry,
// flagFree, so it is read once). ok is false only for a key an index in
// RAM does not hold. A disk read error is kept (Err) and the key treated
// as absent.
func (ix *Index) entry(k cdc.Key) (uint32, bool) {
	if e, _, ok := ix.find(k); ok {
		return e, true
	}
	if ix.spill == nil {
		return 0, false
	}
	return ix.spill.load(ix, k), true
}

// newEntry stores k in a fresh (or reused) entry with no mirror row.
func (ix *Index) newEntry(k cdc.Key) uint32 {
	if n := len(ix.free); n > 0 && ix.keyWidth > 0 && len(k) == ix.keyWidth {
		e := ix.free[n-1]
		ix.free = ix.free[:n-1]
		copy(ix.keys[int(e)*ix.keyWidth:], k)
		ix.resetEntry(e)
		return e
	}
	e := uint32(len(ix.flags))
	if len(ix.flags) == cap(ix.flags) {
		ix.growEntries(len(ix.flags) + len(ix.flags)/4 + 64)
	}
	switch {
	case e == 0 && ix.keyEnd == nil:
		ix.keyWidth = len(k)
	case ix.keyWidth > 0 && len(k) != ix.keyWidth:
		ix.toVariableKeys()
	}
	ix.keys = append(ix.keys, k...)
	if ix.keyWidth == 0 {
		ix.keyEnd = append(ix.keyEnd, uint32(len(ix.keys)))
	}
	ix.flags = append(ix.flags, 0)
	ix.file = append(ix.file, -1)
	ix.pos = append(ix.pos, 0)
	ix.head = append(ix.head, 0)
	if ix.words > 0 {
		ix.seqs = append(ix.seqs, make([]uint64, ix.words)...)
	}
	ix.resetEntry(e)
	return e
}

func (ix *Index) resetEntry(e uint32) {
	ix.flags[e] = flagNoMirror
	ix.file[e], ix.pos[e], ix.head[e] = -1, 0, 0
	if ix.words > 0 {
		clear(ix.seqs[int(e)*ix.words : int(e+1)*ix.words])
	}
}

// growEntries raises the capacity of the entry columns to n (growing by a
// quarter at a time keeps unused capacity, which is live heap, small).
func (ix *Index) growEntries(n int) {
	grow := func(s []byte) []byte { return append(make([]byte, 0, n*max(ix.keyWidth, 1)), s...) }
	ix.keys = grow(ix.keys)
	if ix.keyWidth == 0 && ix.keyEnd != nil {
		ix.keyEnd = append(make([]uint32, 0, n), ix.keyEnd...)
	}
	ix.flags = append(make([]uint8, 0, n), ix.flags...)
	ix.file = append(make([]int32, 0, n), ix.file...)
	ix.pos = append(make([]uint32, 0, n), ix.pos...)
	ix.head = append(make([]uint64, 0, n), ix.head...)
	if ix.words > 0 {
		ix.seqs = append(make([]uint64, 0, n*ix.words), ix.seqs...)
	}
}

// toVariableKeys switches key storage from fixed width to end offsets
// (the first key of another length arrived). Removed entries keep their
// bytes, so entry numbers and offsets stay aligned.
func (ix *Index) toVariableKeys() {
	n := len(ix.flags)
	ix.keyEnd = make([]uint32, n, cap(ix.flags))
	for i := range n {
		ix.keyEnd[i] = uint32((i + 1) * ix.keyWidth)
	}
	ix.keyWidth = 0
	ix.free = nil // free entries are reused only with fixed-width keys
}

// rehash rebuilds the slot table with n slots.
func (ix *Index) rehash(n int) {
	old := ix.slots
	ix.slots = make([]uint64, n)
	for _, w := range old {
		if w == 0 {
			continue
		}
		s := ix.slotOf(uint32(w >> 32))
		for ix.slots[s] != 0 {
			if s++; s == len(ix.slots) {
				s = 0
			}
		}
		ix.slots[s] = w
	}
}

// Remove drops key k (a purged row). Slots are closed by backward shift,
// so lookups never meet tombstones; the entry number is reused. In a
// spilled index the entry becomes a tombstone instead, deleted from disk
// by the next Flush.
func (ix *Index) Remove(k cdc.Key) {
	if ix.spill != nil {
		e, _ := ix.entry(k)
		if ix.flags[e]&flagFree != 0 {
			return
		}
		if ix.flags[e]&flagNoMirror == 0 {
			ix.mirrorKeys--
		}
		ix.resetEntry(e)
		ix.flags[e] = flagFree | flagNoMirror
		ix.used--
		ix.markDirty(e)
		return
	}
	e, s, ok := ix.find(k)
	if !ok {
		return
	}
	ix.slots[s] = 0
	n := len(ix.slots)
	for j := (s + 1) % n; ix.slots[j] != 0; j = (j + 1) % n {
		home := ix.slotOf(uint32(ix.slots[j] >> 32))
		// move slot j back to s when its home is not cyclically in (s, j]
		if (j > s && (home <= s || home > j)) || (j < s && home <= s && home > j) {
			ix.slots[s], ix.slots[j] = ix.slots[j], 0
			s = j
		}
	}
	if ix.flags[e]&flagNoMirror == 0 {
		ix.mirrorKeys--
	}
	ix.flags[e] = flagFree
	ix.head[e] = 0
	ix.used--
	ix.ramKeys--
	if ix.keyWidth > 0 {
		ix.free = append(ix.free, e)
	}
}

// DropMirror forgets key k's mirror row (purged), keeping its chain.
func (ix *Index) DropMirror(k cdc.Key) {
	if e, ok := ix.entry(k); ok && ix.flags[e]&flagNoMirror == 0 {
		ix.flags[e] = flagNoMirror | ix.flags[e]&flagDirty
		ix.file[e] = -1
		ix.mirrorKeys--
		ix.markDirty(e)
	}
}

func (ix *Index) setSeq(e uint32, seq cdc.Seq) {
	if ix.words == 0 {
		ix.words = len(seq) / 8
		if ix.words == 0 {
			ix.words = 1
		}
		ix.seqs = make([]uint64, len(ix.flags)*ix.words, cap(ix.flags)*ix.words)
	}
	if len(seq) != 8*ix.words {
		ix.widen(len(seq) / 8)
	}
	o := int(e) * ix.words
	for w := 0; w < ix.words; w++ {
		if 8*w+8 <= len(seq) {
			ix.seqs[o+w] = binary.BigEndian.Uint64([]byte(seq[8*w : 8*w+8]))
		} else {
			ix.seqs[o+w] = 0
		}
	}
}

// widen re-lays the seq words for positions of width n (a table whose
// positions changed width: never for one connector, but never wrong).
func (ix *Index) widen(n int) {
	if n <= ix.words {
		return
	}
	out := make([]uint64, len(ix.flags)*n, cap(ix.flags)*n)
	for i := range len(ix.flags) {
		copy(out[i*n:], ix.seqs[i*ix.words:(i+1)*ix.words])
	}
	ix.seqs, ix.words = out, n
}

func (ix *Index) seqOf(e uint32) cdc.Seq {
	var stack [112]byte // an Oracle XStream position's 14 words (cdc.OracleLCRSeq)
	buf := stack[:]
	if ix.words > len(stack)/8 {
		buf = make([]byte, 8*ix.words)
	}
	o := int(e) * ix.words
	for w := 0; w < ix.words; w++ {
		binary.BigEndian.PutUint64(buf[8*w:], ix.seqs[o+w])
	}
	return cdc.Seq(buf[:8*ix.words])
}

// StoredAt returns entry e's guard state for merge.Fold.
func (ix *Index) StoredAt(e uint32) merge.Stored {
	if ix.flags[e]&(flagNoMirror|flagFree) != 0 {
		return merge.Stored{}
	}
	return merge.Stored{Found: true, Seq: ix.seqOf(e), Deleted: ix.flags[e]&flagDeleted != 0}
}

// LocAt returns the file id and row position of entry e's mirror row.
func (ix *Index) LocAt(e uint32) (int32, int64) { return ix.file[e], int64(ix.pos[e]) }

// SetAt records that entry e's mirror row now lives at (fileID, pos)
// with position seq, soft-deleted or not.
func (ix *Index) SetAt(e uint32, seq cdc.Seq, deleted bool, fileID int32, pos int64) {
	ix.setSeq(e, seq)
	if ix.flags[e]&flagNoMirror != 0 {
		ix.mirrorKeys++
	}
	f := ix.flags[e] &^ (flagDeleted | flagNoMirror)
	if deleted {
		f |= flagDeleted
	}
	ix.flags[e] = f
	ix.file[e], ix.pos[e] = fileID, uint32(pos)
	ix.markDirty(e)
}

// Lookup returns the mirror entry of key k; false when the key has no
// mirror row.
func (ix *Index) Lookup(k cdc.Key) (Entry, bool) {
	e, ok := ix.entry(k)
	if !ok || ix.flags[e]&flagNoMirror != 0 {
		return Entry{}, false
	}
	return Entry{Seq: ix.seqOf(e), File: ix.file[e], Pos: int64(ix.pos[e]), Deleted: ix.flags[e]&flagDeleted != 0}, true
}

// Stored returns the guard state of key k for merge.Fold.
func (ix *Index) Stored(k cdc.Key) merge.Stored {
	e, ok := ix.Lookup(k)
	if !ok {
		return merge.Stored{}
	}
	return merge.Stored{Found: true, Seq: e.Seq, Deleted: e.Deleted}
}

// Head returns the chain head ref of key k (0 = none).
func (ix *Index) Head(k cdc.Key) uint64 {
	if e, ok := ix.entry(k); ok {
		return ix.head[e]
	}
	return 0
}

// AddNew adds key k with chain head head and, when mirror is not nil,
// its mirror row (mirror.Seq, Deleted, File, Pos). k must not be in the
// index yet (a build from the tables adds each key once): a spilled index
// does not read its disk for k (the entry reaches the store at the next
// Flush, overwriting whatever the store held for k), so a build adding
// keys in any order costs no random reads. A k the RAM part holds is
// updated in place.
func (ix *Index) AddNew(k cdc.Key, head uint64, mirror *Entry) {
	e, _, ok := ix.find(k)
	switch {
	case !ok:
		e = ix.insert(k)
		ix.used++
	case ix.flags[e]&flagFree != 0: // spilled: a key known absent
		ix.resetEntry(e)
		ix.used++
		ix.markDirty(e)
	}
	ix.SetHeadAt(e, head)
	if mirror != nil {
		ix.SetAt(e, mirror.Seq, mirror.Deleted, mirror.File, mirror.Pos)
	}
}

// SetHead records key k's new chain head, adding the key if needed.
func (ix *Index) SetHead(k cdc.Key, ref uint64) { ix.SetHeadAt(ix.EntryOf(k), ref) }

// HeadAt returns entry e's chain head ref (0 = none).
func (ix *Index) HeadAt(e uint32) uint64 { return ix.head[e] }

// SetHeadAt records entry e's new chain head.
func (ix *Index) SetHeadAt(e uint32, ref uint64) {
	ix.head[e] = ref
	ix.markDirty(e)
}

// markDirty notes that entry e changed since the last Flush (spilled
// indexes only; an index in RAM has nothing to write).
func (ix *Index) markDirty(e uint32) {
	if ix.spill != nil && ix.flags[e]&flagDirty == 0 {
		ix.flags[e] |= flagDirty
		ix.spill.dirty = append(ix.spill.dirty, e)
	}
}

// FilePath returns the data file path of a file id.
func (ix *Index) FilePath(id int32) string { return ix.files[id] }

// Files is the mirror file table: the data file path of each file id
// (the index's own slice: do not modify).
func (ix *Index) Files() []string { return ix.files }

// FileID returns the id of a mirror data file path, adding it when new.
func (ix *Index) FileID(path string) int32 {
	if id, ok := ix.fileIDs[path]; ok {
		return id
	}
	id := int32(len(ix.files))
	ix.files = append(ix.files, path)
	ix.fileIDs[path] = id
	return id
}

// Set records that key k's mirror row now lives at (fileID, pos), adding
// the key if needed.
func (ix *Index) Set(k cdc.Key, seq cdc.Seq, deleted bool, fileID int32, pos int64) {
	ix.SetAt(ix.EntryOf(k), seq, deleted, fileID, pos)
}

// Each calls fn for every key with a mirror row, in unspecified order
// (a spilled index: in key order, read from disk after a Flush; a read
// error stops it and is kept, Err).
func (ix *Index) Each(fn func(cdc.Key, Entry)) {
	if ix.spill != nil {
		ix.spill.each(ix, func(k cdc.Key, e Entry, head uint64, mirror bool) {
			if mirror {
				fn(k, e)
			}
		})
		return
	}
	for i := range ix.flags {
		e := uint32(i)
		if ix.flags[e]&(flagFree|flagNoMirror) != 0 {
			continue
		}
		fn(cdc.Key(ix.keyAt(e)), Entry{Seq: ix.seqOf(e), File: ix.file[e], Pos: int64(ix.pos[e]), Deleted: ix.flags[e]&flagDeleted != 0})
	}
}

// EachHead calls fn for every key with a chain head, in unspecified
// order.
func (ix *Index) EachHead(fn func(cdc.Key, uint64)) {
	if ix.spill != nil {
		ix.spill.each(ix, func(k cdc.Key, _ Entry, head uint64, _ bool) {
			if head != 0 {
				fn(k, head)
			}
		})
		return
	}
	for i := range ix.flags {
		if ix.flags[i]&flagFree != 0 || ix.head[i] == 0 {
			continue
		}
		fn(cdc.Key(ix.keyAt(uint32(i))), ix.head[i])
	}
}

// MaxSeq is the highest `_seq` among the keys with a mirror row ("" when
// none): one pass over the index's entries.
func (ix *Index) MaxSeq() cdc.Seq {
	if ix.spill != nil {
		var best cdc.Seq
		ix.Each(func(_ cdc.Key, e Entry) {
			if e.Seq > best {
				best = e.Seq
			}
		})
		return best
	}
	best := -1
	for e := range len(ix.flags) {
		if ix.flags[e]&(flagFree|flagNoMirror) != 0 {
			continue
		}
		if best < 0 || slices.Compare(ix.seqs[e*ix.words:(e+1)*ix.words], ix.seqs[best*ix.words:(best+1)*ix.words]) > 0 {
			best = e
		}
	}
	if best < 0 || ix.words == 0 {
		return ""
	}
	return ix.seqOf(uint32(best))
}
