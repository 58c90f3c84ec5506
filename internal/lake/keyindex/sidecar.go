package keyindex

import (
	"errors"
	"hash/maphash"
)

// EncodeSidecar writes the index as the sidecar's "index" field
// (docs/design.md, "State sidecar"): entries, key width (0: variable),
// `_seq` words per key, keys used, keys with a mirror row; bytes keys;
// u32s key end offsets; u64s `_seq` words; bytes entry flags; i32s mirror
// file ids; u32s row positions; u64s chain heads; u32s free entries;
// strings mirror file paths. The hash slots are not written. Errors stick
// in e.Err.
func (ix *Index) EncodeSidecar(e *Enc) {
	if ix.spill != nil {
		ix.encodeSpilled(e)
		return
	}
	e.Uv(uint64(len(ix.flags)))
	e.Uv(uint64(ix.keyWidth))
	e.Uv(uint64(ix.words))
	e.Uv(uint64(ix.used))
	e.Uv(uint64(ix.mirrorKeys))
	e.Bytes(ix.keys)
	e.U32s(ix.keyEnd)
	e.U64s(ix.seqs)
	e.Bytes(ix.flags)
	e.Uv(uint64(len(ix.file)))
	for _, v := range ix.file {
		e.U32(uint32(v))
	}
	e.U32s(ix.pos)
	e.U64s(ix.head)
	e.U32s(ix.free)
	e.Strs(ix.files)
}

// ErrBadSidecar: the sidecar's index field does not verify (its columns
// disagree in length, or it is cut short).
var ErrBadSidecar = errors.New("lake: the state sidecar's key index does not verify")

// DecodeSidecar reads an index EncodeSidecar wrote from d, for mirror
// snapshot snapshotID, hashing its keys with a new seed. Errors:
// ErrBadSidecar (d.Err holds ErrShort when the input ended early).
func DecodeSidecar(d *Dec, snapshotID int64) (*Index, error) {
	ix := &Index{SnapshotID: snapshotID, seed: maphash.MakeSeed(), fileIDs: map[string]int32{}}
	n := int(d.Uv())
	ix.keyWidth, ix.words, ix.used, ix.mirrorKeys = int(d.Uv()), int(d.Uv()), int(d.Uv()), int(d.Uv())
	ix.keys = d.Bytes()
	ix.keyEnd = d.U32s()
	ix.seqs = d.U64s()
	ix.flags = d.Bytes()
	nf := int(d.Uv())
	if d.Err == nil && nf <= len(d.B)/4 {
		ix.file = make([]int32, nf)
		for i := range ix.file {
			ix.file[i] = int32(d.U32())
		}
	}
	ix.pos = d.U32s()
	ix.head = d.U64s()
	ix.free = d.U32s()
	ix.files = d.Strs()
	if d.Err != nil || len(ix.flags) != n || len(ix.file) != n || len(ix.pos) != n || len(ix.head) != n ||
		(ix.keyWidth == 0 && len(ix.keyEnd) != n) || (ix.keyWidth > 0 && len(ix.keys) != n*ix.keyWidth) || len(ix.seqs) != n*ix.words {
		return nil, ErrBadSidecar
	}
	if ix.keyWidth > 0 || len(ix.keyEnd) == 0 {
		ix.keyEnd = nil // fixed-width keys (or none yet) have no end offsets
	}
	for i, p := range ix.files {
		ix.fileIDs[p] = int32(i)
	}
	ix.rebuildSlots()
	ix.ramKeys = ix.used
	return ix, nil
}

// rebuildSlots fills the slot table from the entries (a loaded index: the
// hash seed is new).
func (ix *Index) rebuildSlots() {
	ix.slots = make([]uint64, max(int(float64(max(ix.used, 8))/maxLoad)+1, 16))
	for i := range ix.flags {
		if ix.flags[i]&flagFree != 0 {
			continue
		}
		tag := ix.hashBytes(ix.keyBytes(uint32(i)))
		s := ix.slotOf(tag)
		for ix.slots[s] != 0 {
			if s++; s == len(ix.slots) {
				s = 0
			}
		}
		ix.slots[s] = uint64(tag)<<32 | uint64(i+1)
	}
}

// keyBytes is entry i's key, in place (no copy: do not keep it).
func (ix *Index) keyBytes(i uint32) []byte {
	if ix.keyWidth > 0 {
		o := int(i) * ix.keyWidth
		return ix.keys[o : o+ix.keyWidth]
	}
	start := uint32(0)
	if i > 0 {
		start = ix.keyEnd[i-1]
	}
	return ix.keys[start:ix.keyEnd[i]]
}

// hashBytes is hash for a key held as bytes (maphash gives bytes and
// strings of the same content the same hash).
func (ix *Index) hashBytes(k []byte) uint32 {
	return uint32(maphash.Bytes(ix.seed, k)>>32) | 1
}
