package lake

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
	recEvents = 1 << iota // the key's row changes of the batch
	recMirror             // the mirror row's values after the batch
	recRows               // history rows written (with their positions) and removed
	recOpen               // the key's open history version after the batch, or none
	recReset              // every history row of the key in older records is dead (a rebuild replaced them)
)

// chainRec is a decoded chain record. Sections not asked for stay empty.
type chainRec struct {
	prev    uint64
	batch   int64
	flags   uint8
	events  []*cdc.Event
	mirror  *cdc.Row
	rows    []histRow // written, with their file ids and positions
	removed []rowLoc  // removed history rows
	open    *histRow  // the open version (nil: none, when recOpen is set)
	openVal *cdc.Row  // its values
}

// rowLoc is a row of a data file: file id (in the table's file table) and
// row position.
type rowLoc = parquetio.RowLoc

// codec interns the column layouts and topic names records refer to. A
// layout is a column-name list; rows are stored as a layout id plus their
// values. The tables live as long as the log.
type codec struct {
	// mu guards the tables below while records are encoded on several
	// goroutines (State.recordPlan); decoding runs only between
	// recordings and reads them without it.
	mu       sync.Mutex
	layouts  []*cdc.Columns
	layoutID map[string]uint32
	topics   []string
	topicID  map[string]uint32
}

func newCodec() *codec {
	return &codec{layoutID: map[string]uint32{}, topicID: map[string]uint32{}}
}

// layout returns the id of a column layout, registering it when new.
// Safe for concurrent use.
func (c *codec) layout(cols *cdc.Columns) uint32 {
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

// topic returns the id of a topic name, registering it when new. Safe
// for concurrent use.
func (c *codec) topic(t string) uint32 {
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

// recWriter encodes one chain record.
type recWriter struct {
	c   *codec
	buf []byte
	sec int // start of the open section's payload
	// the last layout and topic looked up (rows of a batch share a few),
	// in codec cached (the state swaps its codec when it is rebuilt)
	cached    *codec
	lastCols  *cdc.Columns
	lastID    uint32
	lastTopic string
	topicID   uint32
	hasTopic  bool
}

// checkCache drops the cached ids when the writer's codec changed.
func (w *recWriter) checkCache() {
	if w.cached != w.c {
		w.cached, w.lastCols, w.hasTopic = w.c, nil, false
	}
}

// layout is c.layout with the writer's one-entry cache.
func (w *recWriter) layout(cols *cdc.Columns) uint32 {
	w.checkCache()
	if cols != w.lastCols || cols == nil {
		w.lastCols, w.lastID = cols, w.c.layout(cols)
	}
	return w.lastID
}

// topic is c.topic with the writer's one-entry cache.
func (w *recWriter) topic(t string) uint32 {
	w.checkCache()
	if !w.hasTopic || t != w.lastTopic {
		w.lastTopic, w.topicID, w.hasTopic = t, w.c.topic(t), true
	}
	return w.topicID
}

func (w *recWriter) begin(prev uint64, batch int64, flags uint8) {
	w.buf = binary.LittleEndian.AppendUint64(w.buf[:0], prev)
	w.buf = binary.AppendUvarint(w.buf, uint64(batch))
	w.buf = append(w.buf, flags)
}

// section starts a length-prefixed section (ended by end). The length is
// a fixed 4 bytes so it can be written afterwards.
func (w *recWriter) section() {
	w.buf = append(w.buf, 0, 0, 0, 0)
	w.sec = len(w.buf)
}

func (w *recWriter) end() {
	binary.LittleEndian.PutUint32(w.buf[w.sec-4:], uint32(len(w.buf)-w.sec))
}

func (w *recWriter) uvarint(v uint64) { w.buf = binary.AppendUvarint(w.buf, v) }
func (w *recWriter) varint(v int64)   { w.buf = binary.AppendVarint(w.buf, v) }
func (w *recWriter) str(s string) {
	w.buf = binary.AppendUvarint(w.buf, uint64(len(s)))
	w.buf = append(w.buf, s...)
}

func (w *recWriter) value(v cdc.Value) {
	w.buf = append(w.buf, byte(v.Kind))
	switch v.Kind {
	case cdc.KindNull, cdc.KindUnavailable:
	case cdc.KindBool, cdc.KindInt, cdc.KindDate, cdc.KindTime, cdc.KindTimestamp, cdc.KindTimestampTZ:
		w.varint(v.I)
	case cdc.KindFloat:
		w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(v.I))
	case cdc.KindString, cdc.KindBytes, cdc.KindUUID:
		w.str(v.S)
	case cdc.KindDecimal:
		w.varint(int64(v.Scale))
		w.varint(v.I)
		w.str(v.S)
	case cdc.KindList:
		w.str(v.S)
		w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(v.I))
	default: // unknown kinds keep every field
		w.varint(int64(v.Scale))
		w.varint(v.I)
		w.str(v.S)
	}
}

func (w *recWriter) row(r *cdc.Row) {
	w.uvarint(uint64(w.layout(r.Cols)))
	w.uvarint(uint64(len(r.Vals)))
	for _, v := range r.Vals {
		w.value(v)
	}
}

func (w *recWriter) event(e *cdc.Event, mirror *cdc.Row) {
	w.buf = append(w.buf, byte(e.Op), byte(e.Snapshot))
	w.str(string(e.Seq))
	w.varint(e.SourceTs)
	w.str(e.TxID)
	w.uvarint(uint64(w.topic(e.Origin.Topic)))
	w.varint(int64(e.Origin.Partition))
	w.varint(e.Origin.Offset)
	// one key slot: a create's old key, or a delete's new key (a
	// primary-key update's two events; a log written before deletes
	// kept their new key holds "" there, as for any other delete)
	if e.Op == cdc.OpDelete {
		w.str(string(e.NewKey))
	} else {
		w.str(string(e.OldKey))
	}
	var imgs byte
	before := e.Before
	if e.Op.IsUpsert() && (e.OldKey == "" || !hasUnavailable(before)) {
		before = nil // read only for deletes, and a key-change create's as it came (MirrorWriter.fillLogged)
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
	w.buf = append(w.buf, imgs)
	if before != nil {
		w.row(before)
	}
	if imgs&imgAfter != 0 {
		w.row(e.After)
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
	if len(a.Vals) != len(b.Vals) || !sameNames(a.Cols, b.Cols) {
		return false
	}
	for i := range a.Vals {
		if a.Vals[i] != b.Vals[i] {
			return false
		}
	}
	return true
}

// events writes the events section; mirror is the row the record's mirror
// section holds (nil: none), which equal after images refer to.
func (w *recWriter) events(es []*cdc.Event, mirror *cdc.Row) {
	w.section()
	w.uvarint(uint64(len(es)))
	for _, e := range es {
		w.event(e, mirror)
	}
	w.end()
}

func (w *recWriter) mirrorRow(r *cdc.Row) {
	w.section()
	w.row(r)
	w.end()
}

// hashForm: history row hashes are 32 lowercase hex digits (merge.RowHash)
// and stored as their 16 bytes; anything else is stored as text.
func (w *recWriter) hash(h string) {
	var raw [16]byte
	if len(h) == 32 && parquetio.DecodeLowerHex(raw[:], h) {
		w.buf = append(w.buf, 0)
		w.buf = append(w.buf, raw[:]...)
		return
	}
	w.buf = append(w.buf, 1)
	w.str(h)
}

func (w *recWriter) histRow(h *histRow) {
	w.str(string(h.seq))
	w.str(string(h.toSeq))
	w.varint(h.from)
	w.varint(h.to)
	w.hash(h.hash)
	w.str(h.tx)
	w.uvarint(uint64(h.file))
	w.uvarint(uint64(h.pos))
}

func (w *recWriter) rows(written []histRow, removed []rowLoc) {
	w.section()
	w.uvarint(uint64(len(written)))
	for i := range written {
		w.histRow(&written[i])
	}
	w.uvarint(uint64(len(removed)))
	for _, r := range removed {
		w.uvarint(uint64(r.File))
		w.uvarint(uint64(r.Pos))
	}
	w.end()
}

// openVersion writes the open-version section: h and its values, or none.
// mirror is the row the record's mirror section holds (nil: none); values
// equal to it refer to it, and then h, when it is row at (>= 0) of the
// record's rows section, refers to that row (openAtRow) instead of being
// written again.
func (w *recWriter) openVersion(h *histRow, at int, vals, mirror *cdc.Row) {
	w.section()
	switch {
	case h == nil:
		w.buf = append(w.buf, openNone)
	case at >= 0 && mirror != nil && sameRow(vals, mirror):
		w.buf = append(w.buf, openAtRow)
		w.uvarint(uint64(at))
	case mirror != nil && sameRow(vals, mirror):
		w.buf = append(w.buf, openIsMirror)
		w.histRow(h)
	default:
		w.buf = append(w.buf, openRow)
		w.histRow(h)
		w.row(vals)
	}
	w.end()
}

// Forms of the open-version section.
const (
	openNone     = 0 // the key has no open version
	openRow      = 1 // its row and values follow
	openIsMirror = 2 // its row follows; its values are the record's mirror row
	// openAtRow: an uvarint i follows; the open version is row i of the
	// record's rows section, its values the record's mirror row. Written
	// into logs whose magic is LMSTATE2 (stateLogMagic; older code does
	// not load them): by a build from the tables (statebulk.go) and by a
	// batch whose open version is one of the rows it wrote.
	openAtRow = 3
)

// recReader decodes a chain record.
type recReader struct {
	c   *codec
	b   []byte
	err error
}

var errCorrupt = errors.New("lake: corrupt local state record")

func (r *recReader) fail() {
	if r.err == nil {
		r.err = errCorrupt
	}
	r.b = nil
}

func (r *recReader) byte1() byte {
	if len(r.b) < 1 {
		r.fail()
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *recReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recReader) fixed64() uint64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *recReader) raw(n int) []byte {
	if n < 0 || len(r.b) < n {
		r.fail()
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *recReader) str() string { return string(r.raw(int(r.uvarint()))) }

func (r *recReader) value() cdc.Value {
	v := cdc.Value{Kind: cdc.Kind(r.byte1())}
	switch v.Kind {
	case cdc.KindNull, cdc.KindUnavailable:
	case cdc.KindBool, cdc.KindInt, cdc.KindDate, cdc.KindTime, cdc.KindTimestamp, cdc.KindTimestampTZ:
		v.I = r.varint()
	case cdc.KindFloat:
		v.I = int64(r.fixed64())
	case cdc.KindString, cdc.KindBytes, cdc.KindUUID:
		v.S = r.str()
	case cdc.KindList:
		v.S = r.str()
		v.I = int64(r.fixed64())
	default:
		sc := r.varint()
		if sc < math.MinInt16 || sc > math.MaxInt16 {
			r.fail()
		}
		v.Scale = int16(sc)
		v.I = r.varint()
		v.S = r.str()
	}
	return v
}

func (r *recReader) row() *cdc.Row {
	id := r.uvarint()
	n := r.uvarint()
	if r.err != nil || id >= uint64(len(r.c.layouts)) || n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	row := &cdc.Row{Cols: r.c.layouts[id], Vals: make([]cdc.Value, n)}
	for i := range row.Vals {
		row.Vals[i] = r.value()
	}
	if len(row.Vals) != row.Cols.Len() {
		r.fail()
	}
	return row
}

func (r *recReader) event(k cdc.Key, mirror func() *cdc.Row) *cdc.Event {
	e := &cdc.Event{Key: k}
	e.Op = cdc.Op(r.byte1())
	e.Snapshot = cdc.SnapshotMark(r.byte1())
	e.Seq = cdc.Seq(r.str())
	e.SourceTs = r.varint()
	e.TxID = r.str()
	if t := r.uvarint(); t < uint64(len(r.c.topics)) {
		e.Origin.Topic = r.c.topics[t]
	} else {
		r.fail()
	}
	e.Origin.Partition = int32(r.varint())
	e.Origin.Offset = r.varint()
	if k := cdc.Key(r.str()); e.Op == cdc.OpDelete {
		e.NewKey = k
	} else {
		e.OldKey = k
	}
	imgs := r.byte1()
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

func (r *recReader) hash() string {
	if r.byte1() == 0 {
		return hex.EncodeToString(r.raw(16))
	}
	return r.str()
}

func (r *recReader) histRow() histRow {
	var h histRow
	h.seq = cdc.Seq(r.str())
	h.toSeq = cdc.Seq(r.str())
	h.from = r.varint()
	h.to = r.varint()
	h.hash = r.hash()
	h.tx = r.str()
	h.file = int32(r.uvarint())
	h.pos = int64(r.uvarint())
	return h
}

// What decodeRec reads; sections not asked for are skipped.
const (
	wantEvents = recEvents
	wantMirror = recMirror
	wantRows   = recRows
	wantOpen   = recOpen
)

// decodeRec decodes the record payload b of key k, reading the sections
// in want (and the mirror section when a wanted section refers to it).
// Rows are never shared between sections of the result. Errors: a
// malformed record.
func (c *codec) decodeRec(b []byte, k cdc.Key, want uint8) (chainRec, error) {
	r := recReader{c: c, b: b}
	var rec chainRec
	rec.prev = r.fixed64()
	rec.batch = int64(r.uvarint())
	rec.flags = r.byte1()
	sections := [...]uint8{recEvents, recMirror, recRows, recOpen}
	var bodies [len(sections)][]byte
	for i, s := range sections {
		if rec.flags&s == 0 || r.err != nil {
			continue
		}
		if len(r.b) < 4 {
			r.fail()
			break
		}
		n := int(binary.LittleEndian.Uint32(r.b))
		if body := r.raw(4 + n); body != nil {
			bodies[i] = body[4:]
		}
	}
	if r.err != nil {
		return rec, r.err
	}
	// the mirror row, decoded once for the sections that refer to it; each
	// one gets its own copy
	var mirror *cdc.Row
	mirrorDecoded := false
	mirrorRow := func() *cdc.Row {
		if !mirrorDecoded {
			mirrorDecoded = true
			if bodies[1] != nil {
				sr := recReader{c: c, b: bodies[1]}
				if mirror = sr.row(); sr.err != nil {
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
		sr := recReader{c: c, b: bodies[i]}
		switch s {
		case recEvents:
			cnt := sr.uvarint()
			if cnt > uint64(len(sr.b)) {
				sr.fail()
			}
			rec.events = make([]*cdc.Event, 0, cnt)
			for i := uint64(0); i < cnt && sr.err == nil; i++ {
				rec.events = append(rec.events, sr.event(k, mirrorRow))
			}
		case recMirror:
			if rec.mirror = mirrorRow(); rec.mirror == nil {
				sr.fail()
			}
		case recRows:
			cnt := sr.uvarint()
			if cnt > uint64(len(sr.b)) {
				sr.fail()
			}
			for i := uint64(0); i < cnt && sr.err == nil; i++ {
				rec.rows = append(rec.rows, sr.histRow())
			}
			cnt = sr.uvarint()
			if cnt > uint64(len(sr.b)) {
				sr.fail()
			}
			for i := uint64(0); i < cnt && sr.err == nil; i++ {
				rec.removed = append(rec.removed, rowLoc{File: int32(sr.uvarint()), Pos: int64(sr.uvarint())})
			}
		case recOpen:
			switch sr.byte1() {
			case openNone:
			case openRow:
				h := sr.histRow()
				rec.open = &h
				rec.openVal = sr.row()
			case openIsMirror:
				h := sr.histRow()
				rec.open = &h
				if rec.openVal = mirrorRow(); rec.openVal == nil {
					sr.fail()
				}
			case openAtRow:
				h, ok := rowAt(c, bodies[2], sr.uvarint())
				if !ok {
					sr.fail()
					break
				}
				rec.open = &h
				if rec.openVal = mirrorRow(); rec.openVal == nil {
					sr.fail()
				}
			default:
				sr.fail()
			}
		}
		if sr.err != nil {
			r.err = sr.err
		}
	}
	return rec, r.err
}

// rowAt decodes row i of a rows section body (nil: none); ok is false
// when there is no such row or the body is malformed.
func rowAt(c *codec, body []byte, i uint64) (histRow, bool) {
	if body == nil {
		return histRow{}, false
	}
	r := recReader{c: c, b: body}
	cnt := r.uvarint()
	if i >= cnt || cnt > uint64(len(r.b)) {
		return histRow{}, false
	}
	var h histRow
	for j := uint64(0); j <= i && r.err == nil; j++ {
		h = r.histRow()
	}
	return h, r.err == nil
}

func hasUnavailable(r *cdc.Row) bool {
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

// sameNames reports whether a and b name the same columns in the same
// order.
func sameNames(a, b *cdc.Columns) bool { return a == b || slices.Equal(a.Names, b.Names) }
