package lake

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"io"
	"math"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// The state sidecar (docs/design.md, "State sidecar") is a table's local
// state (key index, chain log, the codec's layouts and topics, the
// history file names) written as one file next to the mirror, at
// SidecarPath, keyed to the mirror's and history's Iceberg snapshot ids,
// so that a worker without the state loads it instead of reading the
// tables. A sidecar for other snapshots than the tables' current ones (or
// one that does not verify) is not used: the state is built from the
// tables (reason BuildStaleSidecar).
//
// Format, little-endian, every count and length an unsigned varint:
//
//	magic "LMSIDE02"
//	u64 mirror snapshot id, u64 history snapshot id, u64 built-at batch seq
//	strings: the metadata locations of the mirror and (when the state owns
//	         it) the history it was written against ("" for none)
//	u8  flags (bit 0: the log holds every past change)
//	strings: key columns
//	index: entries, key width (0: variable), seq words, keys used, keys with a mirror row;
//	       bytes keys; u32s key ends; u64s seq words; bytes flags; i32s file ids;
//	       u32s positions; u64s chain heads; u32s free entries; strings mirror files
//	strings: history files
//	layouts: count, then each layout's column names as strings
//	strings: topics
//	log: u64 length, then the chain log's bytes (its magic first; records keep their offsets)
//	u32 CRC-32 (IEEE) of every byte before it
//
// strings = count, then each as length + bytes; u32s/u64s/i32s = count,
// then fixed-width values.
const sidecarMagic = "LMSIDE02"

// SidecarPath is where the sidecar of the table whose mirror lives at
// location is written: "<location>/lakemirror/state.lms".
func SidecarPath(location string) string {
	return strings.TrimSuffix(location, "/") + "/lakemirror/state.lms"
}

// errNoSidecar: the table has no sidecar (never written, or removed).
var errNoSidecar = errors.New("lake: no state sidecar")

// WriteSidecar writes the state's sidecar next to the mirror (replacing
// the previous one). It waits for a batch being recorded. Errors: the
// state is not built, or holds a batch its history writer has not
// recorded; the mirror has no location or its FileIO cannot write; IO.
func (s *State) WriteSidecar(ctx context.Context) error {
	s.settle()
	if !s.built || s.pending != nil || s.log == nil {
		return fmt.Errorf("lake: state of %s not settled: no sidecar written", s.name)
	}
	if err := s.log.flush(); err != nil {
		s.invalidate()
		return err
	}
	mirror, err := LoadTable(ctx, s.cat, s.name.Mirror())
	if err != nil || mirror == nil {
		return fmt.Errorf("lake: sidecar of %s: no mirror table (%v)", s.name, err)
	}
	fs, err := mirror.FS(ctx)
	if err != nil {
		return fmt.Errorf("lake: file IO: %w", err)
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return fmt.Errorf("lake: the table's file IO cannot write files")
	}
	// a batch can change the log and commit only bookkeeping (no new
	// Iceberg snapshot): the sidecar is keyed to the tables' metadata
	// files too, which every commit replaces
	locs := []string{mirror.MetadataLocation(), ""}
	if s.ownsHistory {
		history, err := LoadTable(ctx, s.cat, s.name.History())
		if err != nil {
			return fmt.Errorf("lake: sidecar of %s: history table: %w", s.name, err)
		}
		if history != nil {
			locs[1] = history.MetadataLocation()
		}
	}
	if snapID(mirror) != s.mirrorSnap {
		return fmt.Errorf("lake: sidecar of %s: the mirror is at Iceberg snapshot %d, the state at %d: no sidecar written", s.name, snapID(mirror), s.mirrorSnap)
	}
	path := SidecarPath(mirror.Location())
	f, err := wfs.Create(path)
	if err != nil {
		return fmt.Errorf("lake: create %s: %w", path, err)
	}
	crc := crc32.NewIEEE()
	bw := bufio.NewWriterSize(io.MultiWriter(f, crc), 1<<20)
	e := &sideEnc{w: bw}
	s.encodeSidecar(e, locs)
	if e.err == nil {
		e.err = bw.Flush()
	}
	if e.err == nil {
		_, e.err = f.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32()))
	}
	if cerr := f.Close(); e.err == nil {
		e.err = cerr
	}
	if e.err != nil {
		return fmt.Errorf("lake: write %s: %w", path, e.err)
	}
	s.sidecarSnap = s.mirrorSnap
	return nil
}

// SidecarSnapshot is the mirror snapshot of the last sidecar this state
// wrote (0: none).
func (s *State) SidecarSnapshot() int64 { return s.sidecarSnap }

func (s *State) encodeSidecar(e *sideEnc, metadataLocations []string) {
	e.raw([]byte(sidecarMagic))
	e.u64(uint64(s.mirrorSnap))
	e.u64(uint64(s.historySnap))
	e.u64(uint64(s.builtAtBatch))
	e.strs(metadataLocations)
	var flags byte
	if s.eventsComplete {
		flags |= 1
	}
	e.raw([]byte{flags})
	e.strs(s.keyCols)
	ix := s.ix
	e.uv(uint64(len(ix.flags)))
	e.uv(uint64(ix.keyWidth))
	e.uv(uint64(ix.words))
	e.uv(uint64(ix.used))
	e.uv(uint64(ix.mirrorKeys))
	e.bytes(ix.keys)
	e.u32s(ix.keyEnd)
	e.u64s(ix.seqs)
	e.bytes(ix.flags)
	e.uv(uint64(len(ix.file)))
	for _, v := range ix.file {
		e.u32(uint32(v))
	}
	e.u32s(ix.pos)
	e.u64s(ix.head)
	e.u32s(ix.free)
	e.strs(ix.files)
	e.strs(s.hfiles)
	e.uv(uint64(len(s.c.layouts)))
	for _, l := range s.c.layouts {
		e.strs(l.Names)
	}
	e.strs(s.c.topics)
	e.u64(uint64(s.log.flushed))
	if e.err == nil {
		_, e.err = io.Copy(e.w, io.NewSectionReader(s.log.f, 0, s.log.flushed))
	}
}

// loadSidecar replaces the state with the table's sidecar when it is for
// the snapshots of mirror and history (either nil when the state does not
// own it or it does not exist). Errors: errNoSidecar when there is none;
// errStaleSidecar when it is for other snapshots or does not verify;
// local IO.
func (s *State) loadSidecar(ctx context.Context, mirror, history *table.Table) error {
	if mirror == nil {
		return errNoSidecar
	}
	fs, err := mirror.FS(ctx)
	if err != nil {
		return fmt.Errorf("lake: file IO: %w", err)
	}
	f, err := fs.Open(SidecarPath(mirror.Location()))
	if err != nil {
		return errNoSidecar
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil || len(b) < len(sidecarMagic)+4 {
		return errStaleSidecar
	}
	body := b[:len(b)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(b[len(b)-4:]) || string(body[:len(sidecarMagic)]) != sidecarMagic {
		return errStaleSidecar
	}
	d := &sideDec{b: body[len(sidecarMagic):]}
	mSnap, hSnap := int64(d.u64()), int64(d.u64())
	if d.err != nil || mSnap != snapID(mirror) || (s.ownsHistory && hSnap != snapID(history)) {
		return errStaleSidecar
	}
	builtAt := int64(d.u64())
	locs := d.strs()
	if d.err != nil || len(locs) != 2 || locs[0] != mirror.MetadataLocation() ||
		(s.ownsHistory && history != nil && locs[1] != history.MetadataLocation()) {
		return errStaleSidecar
	}
	flags := d.raw(1)
	keyCols := d.strs()
	if d.err != nil || strings.Join(keyCols, "\x00") != strings.Join(s.keyCols, "\x00") {
		return errStaleSidecar
	}
	ix := &KeyIndex{SnapshotID: mSnap, fileIDs: map[string]int32{}}
	ix.seed = newKeyIndex(0, 0).seed
	n := int(d.uv())
	ix.keyWidth, ix.words, ix.used, ix.mirrorKeys = int(d.uv()), int(d.uv()), int(d.uv()), int(d.uv())
	ix.keys = d.bytes()
	ix.keyEnd = d.u32s()
	ix.seqs = d.u64s()
	ix.flags = d.bytes()
	nf := int(d.uv())
	if d.err == nil && nf <= len(d.b)/4 {
		ix.file = make([]int32, nf)
		for i := range ix.file {
			ix.file[i] = int32(d.u32())
		}
	}
	ix.pos = d.u32s()
	ix.head = d.u64s()
	ix.free = d.u32s()
	ix.files = d.strs()
	hfiles := d.strs()
	nl := int(d.uv())
	var layouts [][]string
	for i := 0; i < nl && d.err == nil; i++ {
		layouts = append(layouts, d.strs())
	}
	topics := d.strs()
	logLen := d.u64()
	logBytes := d.raw(int(min(logLen, math.MaxInt32*4)))
	if d.err != nil || len(d.b) != 0 || len(ix.flags) != n || len(ix.file) != n || len(ix.pos) != n || len(ix.head) != n ||
		(ix.keyWidth == 0 && len(ix.keyEnd) != n) || (ix.keyWidth > 0 && len(ix.keys) != n*ix.keyWidth) || len(ix.seqs) != n*ix.words ||
		len(logBytes) < len(stateLogMagic) || string(logBytes[:len(stateLogMagic)]) != stateLogMagic {
		return errStaleSidecar
	}
	if ix.keyWidth > 0 || len(ix.keyEnd) == 0 {
		ix.keyEnd = nil // fixed-width keys (or none yet) have no end offsets
	}
	for i, p := range ix.files {
		ix.fileIDs[p] = int32(i)
	}
	ix.rebuildSlots()

	if err := s.reset(); err != nil {
		return err
	}
	if _, err := s.log.f.WriteAt(logBytes, 0); err != nil {
		s.invalidate()
		return fmt.Errorf("lake: write local state log %s: %w", s.log.path, err)
	}
	s.log.buf, s.log.flushed = s.log.buf[:0], int64(len(logBytes))
	s.ix = ix
	for _, l := range layouts {
		s.c.layout(cdc.NewColumns(l))
	}
	for _, t := range topics {
		s.c.topic(t)
	}
	for _, p := range hfiles {
		s.hfileID(p)
	}
	s.builtAtBatch = builtAt
	s.eventsComplete = flags[0]&1 != 0
	s.mirrorSnap, s.historySnap = snapID(mirror), snapID(history)
	s.sidecarSnap = s.mirrorSnap
	return nil
}

// errStaleSidecar: the sidecar is for other snapshots, or does not
// verify (a torn or concurrent write, another format).
var errStaleSidecar = errors.New("lake: the state sidecar is for other snapshots of the table, or does not verify")

// rebuildSlots fills the slot table from the entries (a loaded index: the
// hash seed is new).
func (ix *KeyIndex) rebuildSlots() {
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
func (ix *KeyIndex) keyBytes(i uint32) []byte {
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
func (ix *KeyIndex) hashBytes(k []byte) uint32 {
	return uint32(maphash.Bytes(ix.seed, k)>>32) | 1
}

// sideEnc writes the sidecar's fields; the first error sticks.
type sideEnc struct {
	w   io.Writer
	buf []byte
	err error
}

func (e *sideEnc) raw(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}
func (e *sideEnc) uv(v uint64)  { e.raw(binary.AppendUvarint(e.buf[:0], v)) }
func (e *sideEnc) u32(v uint32) { e.raw(binary.LittleEndian.AppendUint32(e.buf[:0], v)) }
func (e *sideEnc) u64(v uint64) { e.raw(binary.LittleEndian.AppendUint64(e.buf[:0], v)) }
func (e *sideEnc) bytes(b []byte) {
	e.uv(uint64(len(b)))
	e.raw(b)
}
func (e *sideEnc) strs(ss []string) {
	e.uv(uint64(len(ss)))
	for _, s := range ss {
		e.bytes([]byte(s))
	}
}
func (e *sideEnc) u32s(vs []uint32) {
	e.uv(uint64(len(vs)))
	for _, v := range vs {
		e.u32(v)
	}
}
func (e *sideEnc) u64s(vs []uint64) {
	e.uv(uint64(len(vs)))
	for _, v := range vs {
		e.u64(v)
	}
}

// sideDec reads the sidecar's fields; the first error sticks.
type sideDec struct {
	b   []byte
	err error
}

var errShort = errors.New("lake: sidecar truncated")

func (d *sideDec) raw(n int) []byte {
	if d.err != nil || n < 0 || n > len(d.b) {
		d.err = errShort
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}
func (d *sideDec) uv() uint64 {
	if d.err != nil {
		return 0
	}
	v, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[k:]
	return v
}
func (d *sideDec) u32() uint32 {
	b := d.raw(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}
func (d *sideDec) u64() uint64 {
	b := d.raw(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}
func (d *sideDec) bytes() []byte {
	n := d.uv()
	if n > uint64(len(d.b)) {
		d.err = errShort
		return nil
	}
	return append([]byte(nil), d.raw(int(n))...)
}
func (d *sideDec) strs() []string {
	n := d.uv()
	if n > uint64(len(d.b)) {
		d.err = errShort
		return nil
	}
	out := make([]string, 0, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		out = append(out, string(d.bytes()))
	}
	return out
}
func (d *sideDec) u32s() []uint32 {
	n := d.uv()
	if n > uint64(len(d.b))/4 {
		d.err = errShort
		return nil
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = d.u32()
	}
	return out
}
func (d *sideDec) u64s() []uint64 {
	n := d.uv()
	if n > uint64(len(d.b))/8 {
		d.err = errShort
		return nil
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = d.u64()
	}
	return out
}
