package localstate

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
)

// A chain record is what the local state log holds for one key and one
// batch (docs/design.md, "Local state"): the key's row changes of the
// batch, the mirror row's values after it, the history rows it wrote and
// removed, and the key's open history version after it. Every section is
// optional (flags say which are present) and length-prefixed, so readers
// skip what they do not need. Records of one key are linked newest first
// by their prev reference.
//
//	[8]prev | uvarint batch | flags | sections in flag order
//
// A record stores each row once: an upsert's before image is not kept (the
// merge rules read a before image only for deletes: merge.Fold, the
// primary-key change carry), and an after image or open-version values
// equal to the record's mirror row refer to the mirror section instead of
// repeating the row. Bronze keeps every record whole.
const (
	RecEvents = 1 << iota // the key's row changes of the batch
	RecMirror             // the mirror row's values after the batch
	RecRows               // history rows written (with their positions) and removed
	RecOpen               // the key's open history version after the batch, or none
	RecReset              // every history row of the key in older records is dead (a rebuild replaced them)
)

// ChainRec is a decoded chain record. Sections not asked for stay empty.
type ChainRec struct {
	Prev    uint64
	Batch   int64
	Flags   uint8
	Events  []*cdc.Event
	Mirror  *cdc.Row
	Rows    []HistRow // written, with their file ids and positions
	Removed []rowLoc  // removed history rows
	Open    *HistRow  // the open version (nil: none, when recOpen is set)
	OpenVal *cdc.Row  // its values
}

// rowLoc is a row of a data file: file id (in the table's file table) and
// row position.
type rowLoc = parquetio.RowLoc

// Codec interns the column layouts and topic names records refer to. A
// layout is a column-name list; rows are stored as a layout id plus their
// values. The tables live as long as the log.
type Codec struct {
	// mu guards the tables below while records are encoded on several
	// goroutines (the lake package's State.recordPlan); decoding runs only between
	// recordings and reads them without it.
	mu       sync.Mutex
	layouts  []*cdc.Columns
	layoutID map[string]uint32
	topics   []string
	topicID  map[string]uint32
}

// NewCodec returns an empty codec.
func NewCodec() *Codec {
	return &Codec{layoutID: map[string]uint32{}, topicID: map[string]uint32{}}
}

// Layout returns the id of a column layout, registering it when new.
// Safe for concurrent use.
func (c *Codec) Layout(cols *cdc.Columns) uint32 {
	k := strings.Join(cols.Names, "\x00")
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.layoutID[k]
	if !ok {
		id = uint32(len(c.layouts))
		c.layouts = append(c.layouts, cols)
		c.layoutID[k] = id
	}
	return id
}

// Topic returns the id of a topic name, registering it when new. Safe
// for concurrent use.
func (c *Codec) Topic(t string) uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.topicID[t]
	if !ok {
		id = uint32(len(c.topics))
		c.topics = append(c.topics, t)
		c.topicID[t] = id
	}
	return id
}

// Layouts are the column layouts registered, by id. Not safe for use
// while records are encoded.
func (c *Codec) Layouts() []*cdc.Columns { return c.layouts }

// Topics are the topic names registered, by id. Not safe for use while
// records are encoded.
func (c *Codec) Topics() []string { return c.topics }

// RecWriter encodes one chain record.
type RecWriter struct {
	C   *Codec
	Buf []byte
	sec int // start of the open section's payload
	// the last layout and topic looked up (rows of a batch share a few),
	// in codec cached (the state swaps its codec when it is rebuilt)
	cached    *Codec
	lastCols  *cdc.Columns
	lastID    uint32
	lastTopic string
	topicID   uint32
	hasTopic  bool
}

// checkCache drops the cached ids when the writer's codec changed.
func (w *RecWriter) checkCache() {
	if w.cached != w.C {
		w.cached, w.lastCols, w.hasTopic = w.C, nil, false
	}
}

// layout is c.layout with the writer's one-entry cache.
func (w *RecWriter) layout(cols *cdc.Columns) uint32 {
	w.checkCache()
	if cols != w.lastCols || cols == nil {
		w.lastCols, w.lastID = cols, w.C.Layout(cols)
	}
	return w.lastID
}

// topic is c.topic with the writer's one-entry cache.
func (w *RecWriter) topic(t string) uint32 {
	w.checkCache()
	if !w.hasTopic || t != w.lastTopic {
		w.lastTopic, w.topicID, w.hasTopic = t, w.C.Topic(t), true
	}
	return w.topicID
}

// Begin starts a record in w.Buf: its previous record of the key, its
// batch, and the flags of the sections that follow.
func (w *RecWriter) Begin(prev uint64, batch int64, flags uint8) {
	w.Buf = binary.LittleEndian.AppendUint64(w.Buf[:0], prev)
	w.Buf = binary.AppendUvarint(w.Buf, uint64(batch))
	w.Buf = append(w.Buf, flags)
}

// Section starts a length-prefixed section (ended by End). The length is
// a fixed 4 bytes so it can be written afterwards.
func (w *RecWriter) Section() {
	w.Buf = append(w.Buf, 0, 0, 0, 0)
	w.sec = len(w.Buf)
}

// End ends the section Section started, writing its length.
func (w *RecWriter) End() {
	binary.LittleEndian.PutUint32(w.Buf[w.sec-4:], uint32(len(w.Buf)-w.sec))
}

// Uvarint appends v as an unsigned varint.
func (w *RecWriter) Uvarint(v uint64) { w.Buf = binary.AppendUvarint(w.Buf, v) }
func (w *RecWriter) varint(v int64)   { w.Buf = binary.AppendVarint(w.Buf, v) }

// Str appends s, length first.
func (w *RecWriter) Str(s string) {
	w.Buf = binary.AppendUvarint(w.Buf, uint64(len(s)))
	w.Buf = append(w.Buf, s...)
}

func (w *RecWriter) value(v cdc.Value) {
	w.Buf = append(w.Buf, byte(v.Kind))
	switch v.Kind {
	case cdc.KindNull, cdc.KindUnavailable:
	case cdc.KindBool, cdc.KindInt, cdc.KindDate, cdc.KindTime, cdc.KindTimestamp, cdc.KindTimestampTZ:
		w.varint(v.I)
	case cdc.KindFloat:
		w.Buf = binary.LittleEndian.AppendUint64(w.Buf, uint64(v.I))
	case cdc.KindString, cdc.KindBytes, cdc.KindUUID:
		w.Str(v.S)
	case cdc.KindDecimal:
		w.varint(int64(v.Scale))
		w.varint(v.I)
		w.Str(v.S)
	case cdc.KindList:
		w.Str(v.S)
		w.Buf = binary.LittleEndian.AppendUint64(w.Buf, uint64(v.I))
	default: // unknown kinds keep every field
		w.varint(int64(v.Scale))
		w.varint(v.I)
		w.Str(v.S)
	}
}

// Row appends r: its layout id and values.
func (w *RecWriter) Row(r *cdc.Row) {
	w.Uvarint(uint64(w.layout(r.Cols)))
	w.Uvarint(uint64(len(r.Vals)))
	for _, v := range r.Vals {
		w.value(v)
	}
}

// Event appends e; an after image equal to mirror (nil: none) refers to
// the record's mirror section.
func (w *RecWriter) Event(e *cdc.Event, mirror *cdc.Row) {
	w.Buf = append(w.Buf, byte(e.Op), byte(e.Snapshot))
	w.Str(string(e.Seq))
	w.varint(e.SourceTs)
	w.Str(e.TxID)
	w.Uvarint(uint64(w.topic(e.Origin.Topic)))
	w.varint(int64(e.Origin.Partition))
	w.varint(e.Origin.Offset)
	// one key slot: a create's old key, or a delete's new key (a
	// primary-key update's two events; a log written before deletes
	// kept their new key holds "" there, as for any other delete)
	if e.Op == cdc.OpDelete {
		w.Str(string(e.NewKey))
	} else {
		w.Str(string(e.OldKey))
	}
	var imgs byte
	before := e.Before
	if e.Op.IsUpsert() && (e.OldKey == "" || !HasUnavailable(before)) {
		before = nil // read only for deletes, and a key-change create's as it came (the lake package's MirrorWriter.fillLogged)
	}
	if before != nil {
		imgs |= imgBefore
	}
	switch {
	case e.After != nil && mirror != nil && sameRow(e.After, mirror):
		imgs |= imgAfterIsMirror
	case e.After != nil:
		imgs |= imgAfter
	}
	w.Buf = append(w.Buf, imgs)
	if before != nil {
		w.Row(before)
	}
	if imgs&imgAfter != 0 {
		w.Row(e.After)
	}
}

// Image flags of an event in a chain record.
const (
	imgBefore        = 1 // a before image follows
	imgAfter         = 2 // an after image follows
	imgAfterIsMirror = 4 // the after image is the record's mirror row
)

// sameRow reports whether a and b have the same columns and values.
func sameRow(a, b *cdc.Row) bool {
	if a == b {
		return true
	}
	if len(a.Vals) != len(b.Vals) || !SameNames(a.Cols, b.Cols) {
		return false
	}
	for i := range a.Vals {
		if a.Vals[i] != b.Vals[i] {
			return false
		}
	}
	return true
}

// Events writes the events section; mirror is the row the record's mirror
// section holds (nil: none), which equal after images refer to.
func (w *RecWriter) Events(es []*cdc.Event, mirror *cdc.Row) {
	w.Section()
	w.Uvarint(uint64(len(es)))
	for _, e := range es {
		w.Event(e, mirror)
	}
	w.End()
}

// MirrorRow writes the mirror section: r.
func (w *RecWriter) MirrorRow(r *cdc.Row) {
	w.Section()
	w.Row(r)
	w.End()
}

// hashForm: history row hashes are 32 lowercase hex digits (merge.RowHash)
// and stored as their 16 bytes; anything else is stored as text.
func (w *RecWriter) hash(h string) {
	var raw [16]byte
	if len(h) == 32 && parquetio.DecodeLowerHex(raw[:], h) {
		w.Buf = append(w.Buf, 0)
		w.Buf = append(w.Buf, raw[:]...)
		return
	}
	w.Buf = append(w.Buf, 1)
	w.Str(h)
}

// HistRow appends a stored history row.
func (w *RecWriter) HistRow(h *HistRow) {
	w.Str(string(h.Seq))
	w.Str(string(h.ToSeq))
	w.varint(h.From)
	w.varint(h.To)
	w.hash(h.Hash)
	w.Str(h.Tx)
	w.Uvarint(uint64(h.File))
	w.Uvarint(uint64(h.Pos))
}

// Rows writes the rows section: the history rows written, with their
// file ids and positions, and the rows removed.
func (w *RecWriter) Rows(written []HistRow, removed []rowLoc) {
	w.Section()
	w.Uvarint(uint64(len(written)))
	for i := range written {
		w.HistRow(&written[i])
	}
	w.Uvarint(uint64(len(removed)))
	for _, r := range removed {
		w.Uvarint(uint64(r.File))
		w.Uvarint(uint64(r.Pos))
	}
	w.End()
}

// OpenVersion writes the open-version section: h and its values, or none.
// mirror is the row the record's mirror section holds (nil: none); values
// equal to it refer to it, and then h, when it is row at (>= 0) of the
// record's rows section, refers to that row (openAtRow) instead of being
// written again.
func (w *RecWriter) OpenVersion(h *HistRow, at int, vals, mirror *cdc.Row) {
	w.Section()
	switch {
	case h == nil:
		w.Buf = append(w.Buf, openNone)
	case at >= 0 && mirror != nil && sameRow(vals, mirror):
		w.Buf = append(w.Buf, OpenAtRow)
		w.Uvarint(uint64(at))
	case mirror != nil && sameRow(vals, mirror):
		w.Buf = append(w.Buf, openIsMirror)
		w.HistRow(h)
	default:
		w.Buf = append(w.Buf, OpenRow)
		w.HistRow(h)
		w.Row(vals)
	}
	w.End()
}

// Forms of the open-version section.
const (
	openNone     = 0 // the key has no open version
	OpenRow      = 1 // its row and values follow
	openIsMirror = 2 // its row follows; its values are the record's mirror row
	// openAtRow: an uvarint i follows; the open version is row i of the
	// record's rows section, its values the record's mirror row. Written
	// into logs whose magic is LMSTATE2 (logMagic; older code does
	// not load them): by a build from the tables (the lake package's statebulk.go) and by a
	// batch whose open version is one of the rows it wrote.
	OpenAtRow = 3
)

// RecReader decodes a chain record.
type RecReader struct {
	C   *Codec
	B   []byte
	Err error
}

var errCorrupt = errors.New("lake: corrupt local state record")

func (r *RecReader) fail() {
	if r.Err == nil {
		r.Err = errCorrupt
	}
	r.B = nil
}

// Byte1 reads one byte.
func (r *RecReader) Byte1() byte {
	if len(r.B) < 1 {
		r.fail()
		return 0
	}
	v := r.B[0]
	r.B = r.B[1:]
	return v
}

// Uvarint reads an unsigned varint.
func (r *RecReader) Uvarint() uint64 {
	v, n := binary.Uvarint(r.B)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.B = r.B[n:]
	return v
}

func (r *RecReader) varint() int64 {
	v, n := binary.Varint(r.B)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.B = r.B[n:]
	return v
}

func (r *RecReader) fixed64() uint64 {
	if len(r.B) < 8 {
		r.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(r.B)
	r.B = r.B[8:]
	return v
}

// Raw reads n bytes (r.B's storage).
func (r *RecReader) Raw(n int) []byte {
	if n < 0 || len(r.B) < n {
		r.fail()
		return nil
	}
	v := r.B[:n]
	r.B = r.B[n:]
	return v
}

// Str reads a string Str appended.
func (r *RecReader) Str() string { return string(r.Raw(int(r.Uvarint()))) }

func (r *RecReader) value() cdc.Value {
	v := cdc.Value{Kind: cdc.Kind(r.Byte1())}
	switch v.Kind {
	case cdc.KindNull, cdc.KindUnavailable:
	case cdc.KindBool, cdc.KindInt, cdc.KindDate, cdc.KindTime, cdc.KindTimestamp, cdc.KindTimestampTZ:
		v.I = r.varint()
	case cdc.KindFloat:
		v.I = int64(r.fixed64())
	case cdc.KindString, cdc.KindBytes, cdc.KindUUID:
		v.S = r.Str()
	case cdc.KindList:
		v.S = r.Str()
		v.I = int64(r.fixed64())
	default:
		sc := r.varint()
		if sc < math.MinInt16 || sc > math.MaxInt16 {
			r.fail()
		}
		v.Scale = int16(sc)
		v.I = r.varint()
		v.S = r.Str()
	}
	return v
}

func (r *RecReader) row() *cdc.Row {
	id := r.Uvarint()
	n := r.Uvarint()
	if r.Err != nil || id >= uint64(len(r.C.layouts)) || n > uint64(len(r.B)) {
		r.fail()
		return nil
	}
	row := &cdc.Row{Cols: r.C.layouts[id], Vals: make([]cdc.Value, n)}
	for i := range row.Vals {
		row.Vals[i] = r.value()
	}
	if len(row.Vals) != row.Cols.Len() {
		r.fail()
	}
	return row
}

// Event reads an event of key k that Event appended; mirror returns the
// record's mirror row, for an after image that refers to it.
func (r *RecReader) Event(k cdc.Key, mirror func() *cdc.Row) *cdc.Event {
	e := &cdc.Event{Key: k}
	e.Op = cdc.Op(r.Byte1())
	e.Snapshot = cdc.SnapshotMark(r.Byte1())
	e.Seq = cdc.Seq(r.Str())
	e.SourceTs = r.varint()
	e.TxID = r.Str()
	if t := r.Uvarint(); t < uint64(len(r.C.topics)) {
		e.Origin.Topic = r.C.topics[t]
	} else {
		r.fail()
	}
	e.Origin.Partition = int32(r.varint())
	e.Origin.Offset = r.varint()
	if k := cdc.Key(r.Str()); e.Op == cdc.OpDelete {
		e.NewKey = k
	} else {
		e.OldKey = k
	}
	imgs := r.Byte1()
	if imgs&imgBefore != 0 {
		e.Before = r.row()
	}
	switch {
	case imgs&imgAfter != 0:
		e.After = r.row()
	case imgs&imgAfterIsMirror != 0:
		if e.After = mirror(); e.After == nil {
			r.fail()
		}
	}
	return e
}

func (r *RecReader) hash() string {
	if r.Byte1() == 0 {
		return hex.EncodeToString(r.Raw(16))
	}
	return r.Str()
}

func (r *RecReader) histRow() HistRow {
	var h HistRow
	h.Seq = cdc.Seq(r.Str())
	h.ToSeq = cdc.Seq(r.Str())
	h.From = r.varint()
	h.To = r.varint()
	h.Hash = r.hash()
	h.Tx = r.Str()
	h.File = int32(r.Uvarint())
	h.Pos = int64(r.Uvarint())
	return h
}

// What DecodeRec reads; sections not asked for are skipped.
const (
	WantEvents = RecEvents
	WantMirror = RecMirror
	WantRows   = RecRows
	WantOpen   = RecOpen
)

// DecodeRec decodes the record payload b of key k, reading the sections
// in want (and the mirror section when a wanted section refers to it).
// Rows are never shared between sections of the result. Errors: a
// malformed record.
func (c *Codec) DecodeRec(b []byte, k cdc.Key, want uint8) (ChainRec, error) {
	r := RecReader{C: c, B: b}
	var rec ChainRec
	rec.Prev = r.fixed64()
	rec.Batch = int64(r.Uvarint())
	rec.Flags = r.Byte1()
	sections := [...]uint8{RecEvents, RecMirror, RecRows, RecOpen}
	var bodies [len(sections)][]byte
	for i, s := range sections {
		if rec.Flags&s == 0 || r.Err != nil {
			continue
		}
		if len(r.B) < 4 {
			r.fail()
			break
		}
		n := int(binary.LittleEndian.Uint32(r.B))
		if body := r.Raw(4 + n); body != nil {
			bodies[i] = body[4:]
		}
	}
	if r.Err != nil {
		return rec, r.Err
	}
	// the mirror row, decoded once for the sections that refer to it; each
	// one gets its own copy
	var mirror *cdc.Row
	mirrorDecoded := false
	mirrorRow := func() *cdc.Row {
		if !mirrorDecoded {
			mirrorDecoded = true
			if bodies[1] != nil {
				sr := RecReader{C: c, B: bodies[1]}
				if mirror = sr.row(); sr.Err != nil {
					mirror = nil
				}
			}
			return mirror
		}
		if mirror == nil {
			return nil
		}
		return &cdc.Row{Cols: mirror.Cols, Vals: slices.Clone(mirror.Vals)}
	}
	for i, s := range sections {
		if want&s == 0 || bodies[i] == nil {
			continue
		}
		sr := RecReader{C: c, B: bodies[i]}
		switch s {
		case RecEvents:
			cnt := sr.Uvarint()
			if cnt > uint64(len(sr.B)) {
				sr.fail()
			}
			rec.Events = make([]*cdc.Event, 0, cnt)
			for i := uint64(0); i < cnt && sr.Err == nil; i++ {
				rec.Events = append(rec.Events, sr.Event(k, mirrorRow))
			}
		case RecMirror:
			if rec.Mirror = mirrorRow(); rec.Mirror == nil {
				sr.fail()
			}
		case RecRows:
			cnt := sr.Uvarint()
			if cnt > uint64(len(sr.B)) {
				sr.fail()
			}
			for i := uint64(0); i < cnt && sr.Err == nil; i++ {
				rec.Rows = append(rec.Rows, sr.histRow())
			}
			cnt = sr.Uvarint()
			if cnt > uint64(len(sr.B)) {
				sr.fail()
			}
			for i := uint64(0); i < cnt && sr.Err == nil; i++ {
				rec.Removed = append(rec.Removed, rowLoc{File: int32(sr.Uvarint()), Pos: int64(sr.Uvarint())})
			}
		case RecOpen:
			switch sr.Byte1() {
			case openNone:
			case OpenRow:
				h := sr.histRow()
				rec.Open = &h
				rec.OpenVal = sr.row()
			case openIsMirror:
				h := sr.histRow()
				rec.Open = &h
				if rec.OpenVal = mirrorRow(); rec.OpenVal == nil {
					sr.fail()
				}
			case OpenAtRow:
				h, ok := rowAt(c, bodies[2], sr.Uvarint())
				if !ok {
					sr.fail()
					break
				}
				rec.Open = &h
				if rec.OpenVal = mirrorRow(); rec.OpenVal == nil {
					sr.fail()
				}
			default:
				sr.fail()
			}
		}
		if sr.Err != nil {
			r.Err = sr.Err
		}
	}
	return rec, r.Err
}

// rowAt decodes row i of a rows section body (nil: none); ok is false
// when there is no such row or the body is malformed.
func rowAt(c *Codec, body []byte, i uint64) (HistRow, bool) {
	if body == nil {
		return HistRow{}, false
	}
	r := RecReader{C: c, B: body}
	cnt := r.Uvarint()
	if i >= cnt || cnt > uint64(len(r.B)) {
		return HistRow{}, false
	}
	var h HistRow
	for j := uint64(0); j <= i && r.Err == nil; j++ {
		h = r.histRow()
	}
	return h, r.Err == nil
}

// HasUnavailable reports whether r (nil: none) holds a TOAST placeholder
// (cdc.KindUnavailable).
func HasUnavailable(r *cdc.Row) bool {
	if r == nil {
		return false
	}
	for _, v := range r.Vals {
		if v.Kind == cdc.KindUnavailable {
			return true
		}
	}
	return false
}

// SameNames reports whether a and b name the same columns in the same
// order.
func SameNames(a, b *cdc.Columns) bool { return a == b || slices.Equal(a.Names, b.Names) }
