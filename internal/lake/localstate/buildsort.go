package localstate

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// A build from the tables (the lake package's State.build) does not look keys up while it
// reads them: a key's mirror row and its history rows come from different
// files, in no key order, and once the key index outgrows its budget and
// lives on disk every such lookup is a random read (at 30 M keys they
// made the build about eight times slower per key than at 1 M). Instead
// the rows read go to a BuildSorter as (key, kind, payload) items: kept
// in a chunk of bounded size, sorted by key when full and written to a
// run file beside the log; the runs are then merged in key order, and
// each key gets one chain record (its mirror row, its history rows, its
// open version) and one index entry (keyindex.Index.AddNew), the index's
// disk seeing its keys in order.

// Kinds of a build item, in the order a key's items are merged.
const (
	BuildMirrorRow  = 0 // payload: seq, deleted, file id, position, row
	BuildHistoryRow = 1 // payload: history row, open flag, row (when open)
	BuildEvents     = 2 // payload: count, then each event as a chain record holds it (tablestate.State.LoadAllEvents)
)

// BuildSorter collects a build's items and gives them back grouped by
// key, in key order, each key's items mirror first, then in the order
// they were added. Not safe for concurrent use.
type BuildSorter struct {
	Dir   string // where run files go
	Limit int    // chunk bytes before a run is written
	arena []byte // the chunk's items: key, kind, payload
	items []sortItem
	runs  []*os.File
	// Runs and RunBytes count the run files written and their bytes.
	Runs     int
	RunBytes int64
}

// sortItem is one item of the chunk: arena[off:off+klen] is its key,
// arena[off+klen] its kind, arena[off+klen+1:end] its payload.
type sortItem struct{ off, klen, end uint32 }

// Add appends one item (key and payload are copied). Errors: writing a
// run file.
func (b *BuildSorter) Add(k cdc.Key, kind byte, payload []byte) error {
	if len(b.items) > 0 && len(b.arena)+len(k)+len(payload)+1 > b.Limit {
		if err := b.writeRun(); err != nil {
			return err
		}
	}
	off := len(b.arena)
	b.arena = append(b.arena, k...)
	b.arena = append(b.arena, kind)
	b.arena = append(b.arena, payload...)
	if len(b.arena) > 1<<32-1 {
		return fmt.Errorf("lake: local state build: item of %d bytes too large", len(payload))
	}
	b.items = append(b.items, sortItem{off: uint32(off), klen: uint32(len(k)), end: uint32(len(b.arena))})
	return nil
}

// sortChunk orders the chunk's items by key, then kind, stably.
func (b *BuildSorter) sortChunk() {
	a := b.arena
	slices.SortStableFunc(b.items, func(x, y sortItem) int {
		if c := bytes.Compare(a[x.off:x.off+x.klen], a[y.off:y.off+y.klen]); c != 0 {
			return c
		}
		return int(a[x.off+x.klen]) - int(a[y.off+y.klen])
	})
}

// writeRun sorts the chunk and writes it to a new run file, then empties
// it (keeping its memory). Run file item: uvarint key length, key, kind,
// uvarint payload length, payload.
func (b *BuildSorter) writeRun() error {
	b.sortChunk()
	f, err := os.CreateTemp(b.Dir, "state-build-*.run")
	if err != nil {
		return fmt.Errorf("lake: local state build: %w", err)
	}
	os.Remove(f.Name()) // unnamed: gone with the process whatever happens
	b.runs = append(b.runs, f)
	w := bufio.NewWriterSize(f, 1<<20)
	var hdr [binary.MaxVarintLen64]byte
	for _, it := range b.items {
		w.Write(hdr[:binary.PutUvarint(hdr[:], uint64(it.klen))])
		w.Write(b.arena[it.off : it.off+it.klen+1])
		w.Write(hdr[:binary.PutUvarint(hdr[:], uint64(it.end-it.off-it.klen-1))])
		w.Write(b.arena[it.off+it.klen+1 : it.end])
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("lake: local state build: write run: %w", err)
	}
	size, _ := f.Seek(0, io.SeekCurrent)
	b.Runs++
	b.RunBytes += size
	b.arena, b.items = b.arena[:0], b.items[:0]
	return nil
}

// Close releases the run files.
func (b *BuildSorter) Close() {
	for _, f := range b.runs {
		f.Close()
	}
	b.runs = nil
	b.arena, b.items = nil, nil
}

// BuildGroup is one key's items: its mirror rows', history rows' and
// events' payloads (valid until the next group).
type BuildGroup struct {
	Key     cdc.Key
	Mirrors [][]byte
	History [][]byte
	Events  [][]byte
}

// Each calls fn for every key's group, in key order: the runs written and
// the chunk in memory, merged. Errors: reading a run file, fn's.
func (b *BuildSorter) Each(fn func(g *BuildGroup) error) error {
	b.sortChunk()
	srcs := make(mergeHeap, 0, len(b.runs)+1)
	for i, f := range b.runs {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("lake: local state build: read run: %w", err)
		}
		s := &mergeSrc{order: i, r: bufio.NewReaderSize(f, 256<<10)}
		if err := s.next(); err != nil {
			return err
		}
		if !s.done {
			srcs = append(srcs, s)
		}
	}
	mem := &mergeSrc{order: len(b.runs), arena: b.arena, items: b.items}
	if err := mem.next(); err != nil {
		return err
	}
	if !mem.done {
		srcs = append(srcs, mem)
	}
	heap.Init(&srcs)
	var g BuildGroup
	var keyBuf []byte
	var store []byte // the group's payloads
	type span struct {
		kind       byte
		start, end int
	}
	var spans []span
	for len(srcs) > 0 {
		keyBuf = append(keyBuf[:0], srcs[0].key...)
		store, spans = store[:0], spans[:0]
		for len(srcs) > 0 && bytes.Equal(srcs[0].key, keyBuf) {
			s := srcs[0]
			start := len(store)
			store = append(store, s.payload...)
			spans = append(spans, span{s.kind, start, len(store)})
			if err := s.next(); err != nil {
				return err
			}
			if s.done {
				heap.Pop(&srcs)
			} else {
				heap.Fix(&srcs, 0)
			}
		}
		g.Key, g.Mirrors, g.History, g.Events = cdc.Key(keyBuf), g.Mirrors[:0], g.History[:0], g.Events[:0]
		for _, sp := range spans {
			p := store[sp.start:sp.end:sp.end]
			switch sp.kind {
			case BuildMirrorRow:
				g.Mirrors = append(g.Mirrors, p)
			case BuildHistoryRow:
				g.History = append(g.History, p)
			case BuildEvents:
				g.Events = append(g.Events, p)
			default:
				return fmt.Errorf("lake: local state build: item of unknown kind %d", sp.kind)
			}
		}
		if err := fn(&g); err != nil {
			return err
		}
	}
	return nil
}

// mergeSrc is one sorted source of the merge: a run file (r) or the
// chunk in memory (arena, items). key, kind and payload are its current
// item (a run's are valid until its next call to next).
type mergeSrc struct {
	order int // sources added earlier come first among equal items
	r     *bufio.Reader
	arena []byte
	items []sortItem
	at    int

	key     []byte
	kind    byte
	payload []byte
	done    bool
}

var ErrBadRun = errors.New("lake: local state build: malformed run file")

// next moves to the source's next item (done after its last).
func (s *mergeSrc) next() error {
	if s.r == nil {
		if s.at >= len(s.items) {
			s.done = true
			return nil
		}
		it := s.items[s.at]
		s.at++
		s.key, s.kind, s.payload = s.arena[it.off:it.off+it.klen], s.arena[it.off+it.klen], s.arena[it.off+it.klen+1:it.end]
		return nil
	}
	kl, err := binary.ReadUvarint(s.r)
	if err == io.EOF {
		s.done = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("lake: local state build: read run: %w", err)
	}
	if s.key, err = readN(s.r, s.key, int(kl)+1); err != nil {
		return err
	}
	s.kind, s.key = s.key[kl], s.key[:kl]
	pl, err := binary.ReadUvarint(s.r)
	if err != nil {
		return ErrBadRun
	}
	if s.payload, err = readN(s.r, s.payload, int(pl)); err != nil {
		return err
	}
	return nil
}

// readN reads n bytes into buf's storage (grown when needed).
func readN(r io.Reader, buf []byte, n int) ([]byte, error) {
	if n < 0 || n > 1<<31 {
		return nil, ErrBadRun
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, ErrBadRun
	}
	return buf, nil
}

// mergeHeap orders sources by their current item: key, kind, order.
type mergeHeap []*mergeSrc

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].key, h[j].key); c != 0 {
		return c < 0
	}
	if h[i].kind != h[j].kind {
		return h[i].kind < h[j].kind
	}
	return h[i].order < h[j].order
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(*mergeSrc)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
