package tablestate

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/localstate"
)

// The state sidecar (docs/design.md, "State sidecar") is a table's local
// state (key index, chain log, the codec's layouts and topics, the
// history file names) written as one file next to the mirror, at
// SidecarPath, keyed to the mirror's and history's Iceberg snapshot ids,
// so that a worker without the state loads it instead of reading the
// tables. A sidecar for other snapshots than the tables' current ones (or
// one that does not verify) is not used: the state is built from the
// tables (reason BuildStaleSidecar). Its format is in
// internal/lake/localstate (sidecar.go).

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
	s.Settle()
	if !s.Built || s.Pending != nil || s.log == nil {
		return fmt.Errorf("lake: state of %s not settled: no sidecar written", s.name)
	}
	if err := s.log.Flush(); err != nil {
		s.invalidate()
		return err
	}
	mirror, err := lakecat.LoadTable(ctx, s.cat, s.name.Mirror())
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
	if s.OwnsHistory {
		history, err := lakecat.LoadTable(ctx, s.cat, s.name.History())
		if err != nil {
			return fmt.Errorf("lake: sidecar of %s: history table: %w", s.name, err)
		}
		if history != nil {
			locs[1] = history.MetadataLocation()
		}
	}
	if lakecat.SnapID(mirror) != s.MirrorSnap {
		return fmt.Errorf("lake: sidecar of %s: the mirror is at Iceberg snapshot %d, the state at %d: no sidecar written", s.name, lakecat.SnapID(mirror), s.MirrorSnap)
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
	s.sidecarSnap = s.MirrorSnap
	return nil
}

// SidecarSnapshot is the mirror snapshot of the last sidecar this state
// wrote (0: none).
func (s *State) SidecarSnapshot() int64 { return s.sidecarSnap }

// image is the state as a sidecar, its log read from the log file.
func (s *State) image(metadataLocations []string) *localstate.SidecarImage {
	img := &localstate.SidecarImage{MirrorSnap: s.MirrorSnap, HistorySnap: s.HistorySnap, BuiltAt: s.BuiltAtBatch, Locs: metadataLocations,
		KeyCols: s.keyCols, Ix: s.Ix, HFiles: s.HFiles, Topics: s.c.Topics()}
	img.LogLen, img.Log = s.log.Flushed()
	if s.eventsComplete {
		img.Flags |= 1
	}
	for _, l := range s.c.Layouts() {
		img.Layouts = append(img.Layouts, l.Names)
	}
	return img
}

func (s *State) encodeSidecar(e *keyindex.Enc, metadataLocations []string) {
	localstate.EncodeSidecar(e, s.image(metadataLocations))
}

// loadSidecar replaces the state with the table's sidecar when it is for
// the snapshots of mirror and history (either nil when the state does not
// own it or it does not exist). Errors: errNoSidecar when there is none;
// localstate.ErrStaleSidecar when it is for other snapshots or does not verify;
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
		return localstate.ErrStaleSidecar
	}
	img, err := localstate.ParseSidecar(b)
	if err != nil {
		return err
	}
	if img.MirrorSnap != lakecat.SnapID(mirror) || (s.OwnsHistory && img.HistorySnap != lakecat.SnapID(history)) ||
		img.Locs[0] != mirror.MetadataLocation() || (s.OwnsHistory && history != nil && img.Locs[1] != history.MetadataLocation()) ||
		strings.Join(img.KeyCols, "\x00") != strings.Join(s.keyCols, "\x00") {
		return localstate.ErrStaleSidecar
	}

	if err := s.reset(); err != nil {
		return err
	}
	if err := s.log.Load(img.LogBytes); err != nil {
		s.invalidate()
		return err
	}
	s.Ix.Close()
	s.Ix = s.newIndex(img.Ix)
	if err := s.flush(); err != nil {
		return err
	}
	if err := s.Ix.Release(); err != nil { // over its budget: to disk
		s.invalidate()
		return err
	}
	for _, l := range img.Layouts {
		s.c.Layout(cdc.NewColumns(l))
	}
	for _, t := range img.Topics {
		s.c.Topic(t)
	}
	for _, p := range img.HFiles {
		s.HFileID(p)
	}
	s.BuiltAtBatch = img.BuiltAt
	s.eventsComplete = img.Flags&1 != 0
	s.MirrorSnap, s.HistorySnap = lakecat.SnapID(mirror), lakecat.SnapID(history)
	s.sidecarSnap = s.MirrorSnap
	return nil
}
