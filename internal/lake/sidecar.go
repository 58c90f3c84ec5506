package lake

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
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
// location is written: "<location>/lakemirror/state.lms"
// (lakecat.SidecarPath).
func SidecarPath(location string) string { return lakecat.SidecarPath(location) }

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
	e := &keyindex.Enc{W: bw}
	s.encodeSidecar(e, locs)
	if e.Err == nil {
		e.Err = bw.Flush()
	}
	if e.Err == nil {
		_, e.Err = f.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32()))
	}
	if cerr := f.Close(); e.Err == nil {
		e.Err = cerr
	}
	if e.Err != nil {
		return fmt.Errorf("lake: write %s: %w", path, e.Err)
	}
	s.sidecarSnap = s.mirrorSnap
	return nil
}

// SidecarSnapshot is the mirror snapshot of the last sidecar this state
// wrote (0: none).
func (s *State) SidecarSnapshot() int64 { return s.sidecarSnap }

// sidecarImage is a sidecar's content: what encodeSidecar writes and
// parseSidecar reads.
type sidecarImage struct {
	mirrorSnap, historySnap int64
	builtAt                 int64    // the batch seq the tables held when the state was built
	locs                    []string // metadata locations of the mirror and the history ("" for none)
	flags                   byte     // bit 0: the log holds every past change
	keyCols                 []string
	ix                      *keyindex.Index
	hfiles                  []string
	layouts                 [][]string
	topics                  []string
	logLen                  int64
	log                     io.Reader // encode: the log's logLen bytes
	logBytes                []byte    // parse: the log's bytes
}

// image is the state as a sidecar, its log read from the log file.
func (s *State) image(metadataLocations []string) *sidecarImage {
	img := &sidecarImage{mirrorSnap: s.mirrorSnap, historySnap: s.historySnap, builtAt: s.builtAtBatch, locs: metadataLocations,
		keyCols: s.keyCols, ix: s.ix, hfiles: s.hfiles, topics: s.c.topics, logLen: s.log.flushed,
		log: io.NewSectionReader(s.log.f, 0, s.log.flushed)}
	if s.eventsComplete {
		img.flags |= 1
	}
	for _, l := range s.c.layouts {
		img.layouts = append(img.layouts, l.Names)
	}
	return img
}

func (s *State) encodeSidecar(e *keyindex.Enc, metadataLocations []string) {
	encodeSidecar(e, s.image(metadataLocations))
}

// encodeSidecar writes img in the sidecar format (without the checksum).
// Errors stick in e.Err.
func encodeSidecar(e *keyindex.Enc, img *sidecarImage) {
	e.Raw([]byte(sidecarMagic))
	e.U64(uint64(img.mirrorSnap))
	e.U64(uint64(img.historySnap))
	e.U64(uint64(img.builtAt))
	e.Strs(img.locs)
	e.Raw([]byte{img.flags})
	e.Strs(img.keyCols)
	img.ix.EncodeSidecar(e)
	e.Strs(img.hfiles)
	e.Uv(uint64(len(img.layouts)))
	for _, l := range img.layouts {
		e.Strs(l)
	}
	e.Strs(img.topics)
	e.U64(uint64(img.logLen))
	if e.Err == nil {
		_, e.Err = io.Copy(e.W, img.log)
	}
}

// parseSidecar reads a whole sidecar file b (checksum included).
// Errors: errStaleSidecar when it does not verify (checksum, magic, a
// field cut short or inconsistent).
func parseSidecar(b []byte) (*sidecarImage, error) {
	if len(b) < len(sidecarMagic)+4 {
		return nil, errStaleSidecar
	}
	body := b[:len(b)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(b[len(b)-4:]) || string(body[:len(sidecarMagic)]) != sidecarMagic {
		return nil, errStaleSidecar
	}
	d := &keyindex.Dec{B: body[len(sidecarMagic):]}
	img := &sidecarImage{mirrorSnap: int64(d.U64()), historySnap: int64(d.U64()), builtAt: int64(d.U64())}
	img.locs = d.Strs()
	if fl := d.Raw(1); fl != nil {
		img.flags = fl[0]
	}
	img.keyCols = d.Strs()
	if d.Err != nil {
		return nil, errStaleSidecar
	}
	ix, err := keyindex.DecodeSidecar(d, img.mirrorSnap)
	if err != nil {
		return nil, errStaleSidecar
	}
	img.ix = ix
	img.hfiles = d.Strs()
	nl := int(d.Uv())
	for i := 0; i < nl && d.Err == nil; i++ {
		img.layouts = append(img.layouts, d.Strs())
	}
	img.topics = d.Strs()
	img.logLen = int64(d.U64())
	img.logBytes = d.Raw(int(min(uint64(img.logLen), math.MaxInt32*4)))
	if d.Err != nil || len(d.B) != 0 || len(img.locs) != 2 ||
		len(img.logBytes) < len(stateLogMagic) || !knownLogMagic(string(img.logBytes[:len(stateLogMagic)])) {
		return nil, errStaleSidecar
	}
	return img, nil
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
	if err != nil {
		return errStaleSidecar
	}
	img, err := parseSidecar(b)
	if err != nil {
		return err
	}
	if img.mirrorSnap != snapID(mirror) || (s.ownsHistory && img.historySnap != snapID(history)) ||
		img.locs[0] != mirror.MetadataLocation() || (s.ownsHistory && history != nil && img.locs[1] != history.MetadataLocation()) ||
		strings.Join(img.keyCols, "\x00") != strings.Join(s.keyCols, "\x00") {
		return errStaleSidecar
	}

	if err := s.reset(); err != nil {
		return err
	}
	if _, err := s.log.f.WriteAt(img.logBytes, 0); err != nil {
		s.invalidate()
		return fmt.Errorf("lake: write local state log %s: %w", s.log.path, err)
	}
	s.log.buf, s.log.flushed = s.log.buf[:0], int64(len(img.logBytes))
	s.ix.Close()
	s.ix = s.newIndex(img.ix)
	if err := s.flush(); err != nil {
		return err
	}
	if err := s.ix.Release(); err != nil { // over its budget: to disk
		s.invalidate()
		return err
	}
	for _, l := range img.layouts {
		s.c.layout(cdc.NewColumns(l))
	}
	for _, t := range img.topics {
		s.c.topic(t)
	}
	for _, p := range img.hfiles {
		s.hfileID(p)
	}
	s.builtAtBatch = img.builtAt
	s.eventsComplete = img.flags&1 != 0
	s.mirrorSnap, s.historySnap = snapID(mirror), snapID(history)
	s.sidecarSnap = s.mirrorSnap
	return nil
}

// errStaleSidecar: the sidecar is for other snapshots, or does not
// verify (a torn or concurrent write, another format).
var errStaleSidecar = errors.New("lake: the state sidecar is for other snapshots of the table, or does not verify")

// knownLogMagic reports whether a sidecar's log starts with a magic this
// code reads: its own (stateLogMagic) or the older stateLogMagicV1. A
// worker of older code finds a log of this code's magic unknown and
// builds the state from the tables (reason BuildStaleSidecar).
func knownLogMagic(m string) bool { return m == stateLogMagic || m == stateLogMagicV1 }
