package keyindex

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// spill is a spilled index's disk part: a pebble store holding every key
// and its entry, value = flags, chain head, file id + 1, row position
// (unsigned varints after the flag byte), then the mirror `_seq` (8 bytes
// a word; absent for a key without a mirror row). The RAM part of the
// Index holds the entries of the keys looked up since the last Release,
// write-back: changed entries (flagDirty, listed in dirty) reach the store
// in one pebble batch at Flush.
type spill struct {
	db    *pebble.DB
	dir   string
	dirty []uint32
	err   error // the first disk error (sticky: the index is then unusable)
	// broken: pebble reported a corrupt or missing file, or a failed
	// background flush or compaction (on its own goroutines): the index is
	// unusable.
	broken atomic.Pointer[error]
}

// fail is the spill's error: its own first one, or pebble's.
func (s *spill) fail() error {
	if s.err != nil {
		return s.err
	}
	if p := s.broken.Load(); p != nil {
		return *p
	}
	return nil
}

// breakWith records pebble's report err (the first one wins).
func (s *spill) breakWith(err error) {
	err = fmt.Errorf("lake: key index store %s: %w", s.dir, err)
	s.broken.CompareAndSwap(nil, &err)
}

var spillSeq atomic.Int64

// SetBudget puts the index under budget b (nil: it never spills), its
// disk part (when it spills) in a new directory under dir, and publishes
// its usage to m (nil: nowhere). Call before use, with the index in RAM.
func (ix *Index) SetBudget(b *Budget, dir string, m *Meter) {
	ix.budget, ix.dir, ix.meter = b, dir, m
	if b != nil {
		b.tables.Add(1)
	}
	ix.publish()
}

// Spilled reports whether the index lives on disk.
func (ix *Index) Spilled() bool { return ix.spill != nil }

// Gen changes whenever a spilled index empties its RAM part (Release):
// entry numbers obtained before are void, look the keys up again.
func (ix *Index) Gen() uint64 { return ix.gen }

// Err is the first disk error of a spilled index (nil in RAM): lookups
// after it may have missed keys, so the index must be dropped and built
// again.
func (ix *Index) Err() error {
	if ix.spill == nil {
		return nil
	}
	return ix.spill.fail()
}

// Lost reports whether a spilled index's directory is gone (the local
// disk was wiped) or its store failed (Err): the index must be built
// again.
func (ix *Index) Lost() bool {
	if ix.spill == nil {
		return false
	}
	_, err := os.Stat(ix.spill.dir)
	return err != nil || ix.spill.fail() != nil
}

// Close releases the index from its budget; a spilled index's store is
// closed and its directory removed, and its RAM part emptied. A spilled
// index is not usable after (one in RAM still reads as it was).
func (ix *Index) Close() error {
	var err error
	if ix.spill != nil {
		err = ix.spill.db.Close()
		os.RemoveAll(ix.spill.dir)
		ix.spill = nil
		ix.slots, ix.keys, ix.keyEnd, ix.seqs, ix.flags, ix.file, ix.pos, ix.head, ix.free = nil, nil, nil, nil, nil, nil, nil, nil, nil
		ix.ramKeys = 0
	}
	if b := ix.budget; b != nil {
		b.inRAM.Add(-ix.accRAM)
		b.onDisk.Add(-ix.accDisk)
		b.tables.Add(-1)
		ix.accRAM, ix.accDisk = 0, 0
		ix.budget = nil
	}
	return err
}

// Resolve sets entries[i] to EntryOf(keys[i]) for every key (adding the
// absent ones). A spilled index reads the keys it does not hold in RAM
// from disk in one pass in key order (an iterator seeking from key to
// key, not one random read each), so the cost follows the batch, not the
// table. Errors: disk reads (the index is then unusable, see Err).
func (ix *Index) Resolve(keys []cdc.Key, entries []uint32) error {
	if s := ix.spill; s != nil && s.fail() == nil {
		var miss []cdc.Key
		for _, k := range keys {
			if _, _, ok := ix.find(k); !ok {
				miss = append(miss, k)
			}
		}
		if len(miss) > 0 {
			ix.Reserve(ix.ramKeys + len(miss))
			slices.Sort(miss)
			s.loadSorted(ix, slices.Compact(miss))
		}
	}
	for i, k := range keys {
		entries[i] = ix.EntryOf(k)
	}
	return ix.Err()
}

// Flush writes a spilled index's changed entries to disk, as one pebble
// batch, and publishes the index's usage (to its Meter and Budget).
// Entry numbers stay valid. Errors: disk writes (see Err).
func (ix *Index) Flush() error {
	s := ix.spill
	if s == nil {
		ix.publish()
		return nil
	}
	if err := s.fail(); err != nil {
		return err
	}
	if len(s.dirty) > 0 {
		b := s.db.NewBatch()
		var v []byte
		for _, e := range s.dirty {
			if ix.flags[e]&flagDirty == 0 {
				continue // listed twice
			}
			ix.flags[e] &^= flagDirty
			if ix.flags[e]&flagFree != 0 {
				b.Delete(ix.keyBytes(e), nil)
				continue
			}
			v = ix.appendValue(v[:0], e)
			b.Set(ix.keyBytes(e), v, nil)
		}
		err := b.Commit(pebble.NoSync)
		b.Close()
		s.dirty = s.dirty[:0]
		if err != nil {
			s.err = fmt.Errorf("lake: key index store %s: %w", s.dir, err)
			return s.err
		}
	}
	ix.publish()
	return nil
}

// Release is a safe point: no entry number handed out before is used
// after it. It flushes; then an index in RAM over its budget (its own, or
// the worker's while the worker's indexes together exceed theirs) moves
// to disk, and a spilled index whose RAM part outgrew a quarter of the
// table budget empties it (Gen changes). Errors: disk writes.
func (ix *Index) Release() error {
	if err := ix.Flush(); err != nil {
		return err
	}
	b := ix.budget
	if b == nil {
		return nil
	}
	n := int64(ix.Bytes())
	if ix.spill == nil {
		if n > b.table || (b.inRAM.Load()+b.cacheBytes > b.worker && n >= minSpill) {
			return ix.spillOut()
		}
		return nil
	}
	if n > b.cacheAllowance() {
		ix.clearRAM()
		ix.publish()
	}
	return nil
}

// publish refreshes the index's usage in its Meter and Budget.
func (ix *Index) publish() {
	u := Usage{RAMBytes: int64(ix.Bytes()), Keys: int64(ix.used), Spilled: ix.spill != nil}
	if s := ix.spill; s != nil {
		m := s.db.Metrics()
		u.RAMBytes += int64(m.MemTable.Size)
		u.DiskBytes = int64(m.DiskSpaceUsage())
	}
	if b := ix.budget; b != nil {
		b.inRAM.Add(u.RAMBytes - ix.accRAM)
		b.onDisk.Add(u.DiskBytes - ix.accDisk)
		ix.accRAM, ix.accDisk = u.RAMBytes, u.DiskBytes
	}
	if ix.meter != nil {
		ix.meter.set(u)
	}
}

// spillOut moves the index to disk: a new store under ix.dir gets every
// entry (in batches), then the RAM part is emptied.
func (ix *Index) spillOut() error {
	dir := filepath.Join(ix.dir, fmt.Sprintf("keyindex-%d-%d", os.Getpid(), spillSeq.Add(1)))
	s := &spill{dir: dir}
	db, err := pebble.Open(dir, ix.storeOptions(s))
	if err != nil {
		return fmt.Errorf("lake: key index store %s: %w", dir, err)
	}
	s.db = db
	b := db.NewBatch()
	var v []byte
	for i := range ix.flags {
		e := uint32(i)
		if ix.flags[e]&flagFree != 0 {
			continue
		}
		v = ix.appendValue(v[:0], e)
		b.Set(ix.keyBytes(e), v, nil)
		if b.Count() >= 1<<16 {
			if err = b.Commit(pebble.NoSync); err != nil {
				break
			}
			b.Close()
			b = db.NewBatch()
		}
	}
	if err == nil {
		err = b.Commit(pebble.NoSync)
	}
	b.Close()
	if err != nil {
		db.Close()
		os.RemoveAll(dir)
		return fmt.Errorf("lake: key index store %s: %w", dir, err)
	}
	ix.spill = s
	ix.free = nil
	ix.clearRAM()
	ix.publish()
	return nil
}

// storeOptions configures a spilled index's pebble store: no write-ahead
// log and no syncs (the index is a cache of the tables: a store lost in a
// crash is built again), bloom filters for point reads of absent keys, the
// budget's shared block cache and a memtable sized by the table budget.
// Corrupt or missing files and failed background work mark s broken
// instead of ending the process (pebble's default for corruption).
func (ix *Index) storeOptions(s *spill) *pebble.Options {
	o := &pebble.Options{
		EventListener: &pebble.EventListener{
			DataCorruption:  func(info pebble.DataCorruptionInfo) { s.breakWith(info.Details) },
			BackgroundError: func(err error) { s.breakWith(err) },
		},
		Cache:                       ix.budget.cache,
		MemTableSize:                ix.budget.memTableSize(),
		MemTableStopWritesThreshold: 4,
		DisableWAL:                  true,
		MaxManifestFileSize:         1 << 40, // never rotated: a wiped directory then fails only new tables, which Flush reports
		Logger:                      storeLogger{},
	}
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	// few, large files: a lookup batch seeks in every file its keys fall
	// in, and pebble's default 2 MB files outnumber its open-file cache at
	// 100 M keys (each miss reopens a file and reads its index)
	o.TargetFileSizes[0] = 32 << 20
	o.EnsureDefaults()
	return o
}

// storeLogger sends pebble's messages to the process's log: errors as
// warnings (a background flush or compaction that failed is retried, and
// the index's own writes report theirs), informational ones not at all.
type storeLogger struct{}

func (storeLogger) Infof(string, ...any) {}
func (storeLogger) Errorf(format string, args ...any) {
	slog.Warn("key index store: " + fmt.Sprintf(format, args...))
}
func (storeLogger) Fatalf(format string, args ...any) {
	panic("key index store: " + fmt.Sprintf(format, args...))
}

// clearRAM empties the RAM part of a spilled index (its entries are on
// disk after Flush); entry numbers handed out before are void.
func (ix *Index) clearRAM() {
	ix.slots, ix.keys, ix.keyEnd, ix.seqs, ix.flags, ix.file, ix.pos, ix.head = nil, nil, nil, nil, nil, nil, nil, nil
	ix.keyWidth, ix.ramKeys = 0, 0
	ix.gen++
}

// appendValue encodes entry e's store value.
func (ix *Index) appendValue(v []byte, e uint32) []byte {
	f := ix.flags[e] &^ flagDirty
	v = append(v, f)
	v = binary.AppendUvarint(v, ix.head[e])
	v = binary.AppendUvarint(v, uint64(uint32(ix.file[e]+1)))
	v = binary.AppendUvarint(v, uint64(ix.pos[e]))
	if f&flagNoMirror == 0 && ix.words > 0 {
		o := int(e) * ix.words
		for _, w := range ix.seqs[o : o+ix.words] {
			v = binary.BigEndian.AppendUint64(v, w)
		}
	}
	return v
}

var errBadValue = errors.New("lake: key index store holds a malformed entry")

// decodeValue reads a store value: the flags, head, file id, row
// position and `_seq` bytes (in place).
func decodeValue(v []byte) (flags uint8, head uint64, file int32, pos uint32, seq []byte, err error) {
	if len(v) < 4 {
		return 0, 0, 0, 0, nil, errBadValue
	}
	flags, v = v[0], v[1:]
	var f, p uint64
	var k int
	if head, k = binary.Uvarint(v); k <= 0 {
		return 0, 0, 0, 0, nil, errBadValue
	}
	v = v[k:]
	if f, k = binary.Uvarint(v); k <= 0 {
		return 0, 0, 0, 0, nil, errBadValue
	}
	v = v[k:]
	if p, k = binary.Uvarint(v); k <= 0 {
		return 0, 0, 0, 0, nil, errBadValue
	}
	v = v[k:]
	if len(v)%8 != 0 {
		return 0, 0, 0, 0, nil, errBadValue
	}
	return flags, head, int32(uint32(f)) - 1, uint32(p), v, nil
}

// put adds k to the RAM part as it is on disk (value v; nil: absent, a
// tombstone entry), clean.
func (ix *Index) put(k cdc.Key, v []byte) uint32 {
	e := ix.insert(k)
	s := ix.spill
	if n := len(s.dirty); n > 0 && s.dirty[n-1] == e {
		s.dirty = s.dirty[:n-1]
	}
	ix.flags[e] = flagFree | flagNoMirror
	if v == nil {
		return e
	}
	flags, head, file, pos, seq, err := decodeValue(v)
	if err != nil {
		s.err = fmt.Errorf("%w (key %x)", err, string(k))
		return e
	}
	if flags&flagNoMirror == 0 {
		ix.setSeq(e, cdc.Seq(seq))
	}
	ix.flags[e], ix.head[e], ix.file[e], ix.pos[e] = flags, head, file, pos
	return e
}

// load reads k from disk into the RAM part (a tombstone when absent).
func (s *spill) load(ix *Index, k cdc.Key) uint32 {
	if s.fail() != nil {
		return ix.put(k, nil)
	}
	v, closer, err := s.db.Get([]byte(k))
	if errors.Is(err, pebble.ErrNotFound) {
		return ix.put(k, nil)
	}
	if err != nil {
		s.err = fmt.Errorf("lake: key index store %s: %w", s.dir, err)
		return ix.put(k, nil)
	}
	e := ix.put(k, v)
	closer.Close()
	return e
}

// loadSorted reads the sorted, distinct keys into the RAM part with one
// iterator, seeking forward from key to key.
func (s *spill) loadSorted(ix *Index, keys []cdc.Key) {
	it, err := s.db.NewIter(nil)
	if err != nil {
		s.err = fmt.Errorf("lake: key index store %s: %w", s.dir, err)
		for _, k := range keys {
			ix.put(k, nil)
		}
		return
	}
	for _, k := range keys {
		kb := []byte(k)
		if it.SeekGE(kb) && bytes.Equal(it.Key(), kb) {
			v, err := it.ValueAndErr()
			if err == nil {
				ix.put(k, v)
				continue
			}
			s.err = fmt.Errorf("lake: key index store %s: %w", s.dir, err)
		}
		ix.put(k, nil)
	}
	if err := it.Close(); err != nil && s.err == nil {
		s.err = fmt.Errorf("lake: key index store %s: %w", s.dir, err)
	}
}

// each flushes, then calls fn for every key on disk in key order with its
// entry (`_seq` at the index's width), chain head, and whether it has a
// mirror row. A read error stops it (Err).
func (s *spill) each(ix *Index, fn func(k cdc.Key, e Entry, head uint64, mirror bool)) {
	if ix.Flush() != nil {
		return
	}
	it, err := s.db.NewIter(nil)
	if err != nil {
		s.err = fmt.Errorf("lake: key index store %s: %w", s.dir, err)
		return
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			s.err = fmt.Errorf("lake: key index store %s: %w", s.dir, err)
			return
		}
		flags, head, file, pos, seq, err := decodeValue(v)
		if err != nil {
			s.err = err
			return
		}
		mirror := flags&flagNoMirror == 0
		var e Entry
		if mirror {
			padded := make([]byte, max(8*ix.words, len(seq)))
			copy(padded, seq)
			e = Entry{Seq: cdc.Seq(padded), File: file, Pos: int64(pos), Deleted: flags&flagDeleted != 0}
		}
		fn(cdc.Key(string(it.Key())), e, head, mirror)
	}
	if err := it.Error(); err != nil {
		s.err = fmt.Errorf("lake: key index store %s: %w", s.dir, err)
	}
}

// encodeSpilled writes a spilled index in the sidecar's index format
// (EncodeSidecar): one pass over the store, each column spooled to a file
// beside the store's directory, then copied out in the format's order. The
// entries are the keys in key order (no free entries).
func (ix *Index) encodeSpilled(e *Enc) {
	s := ix.spill
	if err := ix.Flush(); err != nil {
		e.Err = err
		return
	}
	names := []string{"keys", "ends", "seqs", "flags", "files", "pos", "heads"}
	cols := make([]*os.File, len(names))
	ws := make([]*bufio.Writer, len(names))
	defer func() {
		for _, f := range cols {
			if f != nil {
				f.Close()
				os.Remove(f.Name())
			}
		}
	}()
	for i, n := range names {
		f, err := os.CreateTemp(ix.dir, "keyindex-sidecar-"+n+"-*.tmp") // beside the store: pebble owns its directory
		if err != nil {
			e.Err = fmt.Errorf("lake: key index sidecar spool: %w", err)
			return
		}
		cols[i], ws[i] = f, bufio.NewWriterSize(f, 256<<10)
	}
	var (
		n, keyBytes, mirror int
		width               = -1 // common key length; -2: lengths differ
		b8                  [8]byte
	)
	s.eachRaw(func(k []byte, flags uint8, head uint64, file int32, pos uint32, seq []byte) {
		switch {
		case width == -1:
			width = len(k)
		case width != len(k):
			width = -2
		}
		ws[0].Write(k)
		keyBytes += len(k)
		ws[1].Write(binary.LittleEndian.AppendUint32(b8[:0], uint32(keyBytes)))
		for w := 0; w < ix.words; w++ {
			var word uint64
			if 8*w+8 <= len(seq) {
				word = binary.BigEndian.Uint64(seq[8*w:])
			}
			ws[2].Write(binary.LittleEndian.AppendUint64(b8[:0], word))
		}
		ws[3].WriteByte(flags)
		ws[4].Write(binary.LittleEndian.AppendUint32(b8[:0], uint32(file)))
		ws[5].Write(binary.LittleEndian.AppendUint32(b8[:0], pos))
		ws[6].Write(binary.LittleEndian.AppendUint64(b8[:0], head))
		if flags&flagNoMirror == 0 {
			mirror++
		}
		n++
	})
	if s.err != nil {
		e.Err = s.err
		return
	}
	for _, w := range ws {
		if err := w.Flush(); err != nil {
			e.Err = fmt.Errorf("lake: key index sidecar spool: %w", err)
			return
		}
	}
	copyCol := func(i int, count int) {
		e.Uv(uint64(count))
		if e.Err == nil {
			_, e.Err = io.Copy(e.W, io.NewSectionReader(cols[i], 0, 1<<62))
		}
	}
	fixed := max(width, 0)
	e.Uv(uint64(n))
	e.Uv(uint64(fixed))
	e.Uv(uint64(ix.words))
	e.Uv(uint64(n))
	e.Uv(uint64(mirror))
	copyCol(0, keyBytes)
	if fixed > 0 || n == 0 {
		e.Uv(0)
	} else {
		copyCol(1, n)
	}
	copyCol(2, n*ix.words)
	copyCol(3, n)
	copyCol(4, n)
	copyCol(5, n)
	copyCol(6, n)
	e.Uv(0) // no free entries
	e.Strs(ix.files)
}

// eachRaw calls fn for every store entry in key order (arguments valid
// during the call only); a read error stops it (s.err).
func (s *spill) eachRaw(fn func(k []byte, flags uint8, head uint64, file int32, pos uint32, seq []byte)) {
	it, err := s.db.NewIter(nil)
	if err != nil {
		s.err = fmt.Errorf("lake: key index store %s: %w", s.dir, err)
		return
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			s.err = fmt.Errorf("lake: key index store %s: %w", s.dir, err)
			return
		}
		flags, head, file, pos, seq, err := decodeValue(v)
		if err != nil {
			s.err = err
			return
		}
		fn(it.Key(), flags, head, file, pos, seq)
	}
	if err := it.Error(); err != nil {
		s.err = fmt.Errorf("lake: key index store %s: %w", s.dir, err)
	}
}
