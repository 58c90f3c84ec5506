package schemas

import (
	"bytes"
	"encoding/binary"
	"math"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/cdc/typing"
)

// The direct path: Debezium JSON change events decoded straight from the
// record's bytes, without building a fastjson tree of the payload.
//
// It handles the common shape only: a JSON object payload (with or
// without the JsonConverter {"schema","payload"} wrapper) with a string
// op, a source object, before/after images that are objects or null
// whose fields follow the cached Connect struct (or a known schema-less
// layout) in order. Anything else, and any record the direct path would
// reject, goes to the general path (Decoder.decode's fastjson parse),
// which then decodes it, or reports its error, exactly as before: the
// direct path only ever returns results the general path would return
// too (differential tests: direct_test.go).
//
// Validity: the record passes checkEscapes (every \ escape decodes to
// exactly one text; for a value without the wrapper the scanner checks
// each escape itself with the same escapeLen, and outside strings a
// backslash is invalid anyway), and a strict scanner (skipValue and
// scanString) checks every top-level member of the payload: RFC 8259
// strings without raw control characters or invalid UTF-8, strict
// numbers and literals, nesting at most 32 levels below the payload
// (directDepth). That is stricter than fastjson, so a record the direct
// path accepts is one fastjson parses too, to the same values; what it
// does not accept takes the general path. Image values the direct path
// does not decode itself (nested objects and arrays: JSON text, lists,
// geometries, VariableScaleDecimal; strings with escapes for columns
// other than text; numbers for other than int, float, decimal and
// temporal columns; declared columns' fallbacks) are parsed alone with
// fastjson and decoded by Decoder.field, the general path's own code.

// directDepth is the skipValue depth the direct path starts top-level
// payload members at: they may nest at most maxJSONDepth-directDepth
// levels (deeper records take the general path, whose limit counts from
// the record's root).
const directDepth = maxJSONDepth - 32

// member is one member of a JSON object, validated strictly: offsets
// into the payload text (no pointers: the direct path's scratch slices
// of them cost no GC write barriers).
type member struct {
	k0, k1 int32 // the key's raw bytes between the quotes
	v0, v1 int32 // the value's text (a string with its quotes)
	esc    bool  // the value is a string holding a backslash escape
}

func (m *member) key(pl []byte) []byte { return pl[m.k0:m.k1] }
func (m *member) val(pl []byte) []byte { return pl[m.v0:m.v1] }

// payloadSpans are the raw texts of the payload members the direct path
// reads (nil: absent; for a repeated key, the last, as readPayload keeps).
// The members of the last before, after, source and transaction objects
// are in Decoder.bm, am, sm and tm.
type payloadSpans struct {
	before, after, source, op, transaction, tsMs, tsUs []byte
}

// decodeDirect decodes rec by the direct path. ok is false when the
// record needs the general path (its shape is not handled here, or it is
// an error); no result is returned then, and the decoder's event text is
// left for the caller to reset.
func (d *Decoder) decodeDirect(rec *Record) (Decoded, bool) {
	b := rec.Value
	if d.flatMode == FlattenAlways || len(b) > math.MaxInt32 {
		return Decoded{}, false
	}
	var env *envSchema
	sch, pl, wrapped := d.splitEnvelope(b)
	if !wrapped {
		// scanPayload then checks all of b, every escape too (escapeLen,
		// as checkEscapes does; outside strings a backslash is invalid)
		pl = b
	} else if checkEscapes(b) != nil {
		return Decoded{}, false
	}
	var f payloadSpans
	if !d.scanPayload(pl, !wrapped, &f) {
		return Decoded{}, false
	}
	if wrapped && string(sch) != "null" {
		var err error
		if env, err = d.schemaFor(sch); err != nil {
			return Decoded{}, false
		}
	}
	if len(f.op) != 3 || f.op[0] != '"' || opNames[f.op[1]] == "" {
		return Decoded{}, false // no op (transaction metadata, flattened, ...), not a string, unknown
	}
	op, err := cdc.ParseOp(opNames[f.op[1]])
	if err != nil {
		return Decoded{}, false
	}
	if len(f.source) == 0 || f.source[0] != '{' {
		return Decoded{}, false
	}
	d.sarena = d.sarena[:0]
	d.readDirectSource(&d.src, pl, &f)
	pos, err := readSource(&d.src)
	if err != nil {
		return Decoded{}, false
	}

	box, txLen, truncate := d.openEvent(rec, op, &pos)
	if truncate != nil {
		return *truncate, true
	}
	ev := &box.ev
	hasBefore, okB := directImage(f.before)
	hasAfter, okA := directImage(f.after)
	if !okB || !okA || checkImages(op, hasBefore, hasAfter, opNames[op]) != nil {
		return Decoded{}, false
	}
	decodeBefore := hasBefore && !(d.dropBefore && op != cdc.OpDelete)
	var (
		bs, as *structSpec
		bl, al *layout
		ok     bool
	)
	nb, na := 0, 0
	if decodeBefore {
		if bs, bl, ok = d.directShape(env, true, pl, d.bm); !ok {
			return Decoded{}, false
		}
		nb = len(d.bm)
	} else if hasBefore && env != nil && env.before == nil {
		return Decoded{}, false // the schema has no "before" struct: an error
	}
	if hasAfter {
		if as, al, ok = d.directShape(env, false, pl, d.am); !ok {
			return Decoded{}, false
		}
		na = len(d.am)
	}
	vals := make([]cdc.Value, nb+na)
	if decodeBefore {
		r := &box.rows[0]
		if !d.directRow(pl, d.bm, bs, bl, vals[:nb:nb]) {
			return Decoded{}, false
		}
		r.Cols, r.Vals = rowCols(bs, bl), vals[:nb:nb]
		ev.Before = r
	}
	if hasAfter {
		r := &box.rows[1]
		if !d.directRow(pl, d.am, as, al, vals[nb:]) {
			return Decoded{}, false
		}
		r.Cols, r.Vals = rowCols(as, al), vals[nb:]
		ev.After = r
	}
	if err := d.finishImages(rec, ev, env, &pos, txLen); err != nil {
		return Decoded{}, false
	}
	return Decoded{Kind: KindChange, Event: ev, RawOp: opNames[op]}, true
}

// rowCols is an image's columns: of its struct, else of its layout.
func rowCols(ss *structSpec, l *layout) *cdc.Columns {
	if ss != nil {
		return ss.cols
	}
	return l.cols
}

// scanPayload validates the payload object pl strictly (see the file
// comment), records the members the direct path reads in f and collects
// the members of the before, after, source and transaction objects. bare:
// pl is the whole record value (no JsonConverter wrapper), so a "schema"
// or "payload" member may mean a wrapper of another shape: false then, as
// for any key with an escape, anything after the object, or invalid JSON.
func (d *Decoder) scanPayload(pl []byte, bare bool, f *payloadSpans) bool {
	i := skipWS(pl, 0)
	if i >= len(pl) || pl[i] != '{' {
		return false
	}
	i = skipWS(pl, i+1)
	if i < len(pl) && pl[i] == '}' {
		return false // {}: no op
	}
	for {
		if i >= len(pl) || pl[i] != '"' {
			return false
		}
		ke, esc, ok := scanString(pl, i)
		if !ok || esc {
			return false
		}
		key := pl[i+1 : ke-1]
		i = skipWS(pl, ke)
		if i >= len(pl) || pl[i] != ':' {
			return false
		}
		i = skipWS(pl, i+1)
		var ms *[]member
		switch string(key) {
		case "before":
			ms = &d.bm
		case "after":
			ms = &d.am
		case "source":
			ms = &d.sm
		case "transaction":
			ms = &d.tm
		case "schema", "payload":
			if bare {
				return false
			}
		}
		var ve int
		if ms != nil && i < len(pl) && pl[i] == '{' {
			if ve, *ms, ok = scanMembers(pl, i, directDepth, (*ms)[:0]); !ok {
				return false
			}
		} else {
			var err error
			if ve, err = skipValue(pl, i, directDepth); err != nil {
				return false
			}
		}
		v := pl[i:ve]
		switch string(key) {
		case "before":
			f.before = v
		case "after":
			f.after = v
		case "source":
			f.source = v
		case "op":
			f.op = v
		case "transaction":
			f.transaction = v
		case "ts_ms":
			f.tsMs = v
		case "ts_us":
			f.tsUs = v
		}
		i = skipWS(pl, ve)
		if i >= len(pl) {
			return false
		}
		if pl[i] == '}' {
			return skipWS(pl, i+1) == len(pl)
		}
		if pl[i] != ',' {
			return false
		}
		i = skipWS(pl, i+1)
	}
}

// strPlain marks the bytes a JSON string holds as they are: printable
// ASCII but the quote and the backslash.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainWord reports whether all eight bytes of w are strPlain: none is
// below 0x20, at or above 0x80, a quote or a backslash (the has-zero-byte
// and has-less-than tests of "Bit Twiddling Hacks", exact for whether
// any byte matches).
func plainWord(w uint64) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q, bs := w^(lo*'"'), w^(lo*'\\')
	less := (w - lo*0x20) &^ w
	quote := (q - lo) &^ q
	backslash := (bs - lo) &^ bs
	return (less|quote|backslash|w)&hi == 0
}

// scanString validates the string that starts at the quote b[i] as
// skipString does and returns the index past its closing quote and
// whether it holds an escape; ok is false for an invalid string.
func scanString(b []byte, i int) (end int, esc, ok bool) {
	j, ascii := i+1, true
	for {
		for j+8 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[j:])) {
			j += 8
		}
		for j < len(b) && strPlain[b[j]] {
			j++
		}
		if j >= len(b) {
			return 0, false, false
		}
		switch c := b[j]; {
		case c == '"':
			if !ascii && !utf8.Valid(b[i+1:j]) {
				return 0, false, false
			}
			return j + 1, esc, true
		case c == '\\':
			n, err := escapeLen(b, j)
			if err != nil {
				return 0, false, false
			}
			j += n
			esc = true
		case c < 0x20:
			return 0, false, false
		default:
			ascii = false
			j++
		}
	}
}

// scanMembers validates the object that starts at b[i] strictly, as
// skipValue at depth does, and appends its members to ms; it returns the
// index past the object. ok is false for invalid JSON and for a key
// holding an escape (fastjson unescapes keys; the direct path leaves
// them to it).
func scanMembers(b []byte, i, depth int, ms []member) (end int, _ []member, ok bool) {
	if depth > maxJSONDepth {
		return 0, ms, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, ms, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, ms, false
		}
		ke, esc, ok := scanString(b, i)
		if !ok || esc {
			return 0, ms, false
		}
		m := member{k0: int32(i + 1), k1: int32(ke - 1)}
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return 0, ms, false
		}
		i = skipWS(b, i+1)
		if i >= len(b) {
			return 0, ms, false
		}
		ve := 0
		switch c := b[i]; c {
		case '"':
			if ve, m.esc, ok = scanString(b, i); !ok {
				return 0, ms, false
			}
		case 't', 'f', 'n':
			var err error
			if ve, err = skipValue(b, i, depth+1); err != nil {
				return 0, ms, false
			}
		case '{', '[':
			var err error
			if ve, err = skipValue(b, i, depth+1); err != nil {
				return 0, ms, false
			}
		default:
			n := typing.NumberLen(b[i:])
			if n == 0 {
				return 0, ms, false
			}
			ve = i + n
		}
		m.v0, m.v1 = int32(i), int32(ve)
		ms = append(ms, m)
		i = skipWS(b, ve)
		if i >= len(b) {
			return 0, ms, false
		}
		if b[i] == '}' {
			return i + 1, ms, true
		}
		if b[i] != ',' {
			return 0, ms, false
		}
		i = skipWS(b, i+1)
	}
}

// directImage tells an image present (an object) from an absent or null
// one; ok is false for any other value (an error).
func directImage(v []byte) (present, ok bool) {
	switch {
	case len(v) == 0 || v[0] == 'n':
		return false, true
	case v[0] == '{':
		return true, true
	}
	return false, false
}

// directShape finds how an image with members ms decodes: by its Connect
// struct (the schema's before or after struct) when the members are the
// struct's fields in order, or by the schema-less layout of their names
// (created as resolveLayout does when new). ok is false otherwise (the
// general path matches fields by name and reports errors).
func (d *Decoder) directShape(env *envSchema, before bool, pl []byte, ms []member) (*structSpec, *layout, bool) {
	if env != nil {
		ss := env.after
		if before {
			ss = env.before
		}
		if ss == nil || len(ss.fields) != len(ms) {
			return nil, nil, false
		}
		for i := range ms {
			if ss.fields[i].name != string(ms[i].key(pl)) {
				return nil, nil, false
			}
		}
		return ss, nil, true
	}
	if l := d.lastLayout; l != nil && sameNames(l, pl, ms) {
		return nil, l, true
	}
	d.raw = d.raw[:0]
	for i := range ms {
		k := ms[i].key(pl)
		d.raw = binary.AppendUvarint(d.raw, uint64(len(k)))
		d.raw = append(d.raw, k...)
	}
	if l, ok := d.layouts[string(d.raw)]; ok {
		d.lastLayout = l
		return nil, l, true
	}
	names := make([]string, len(ms))
	for i := range ms {
		names[i] = string(ms[i].key(pl))
		for _, n := range names[:i] {
			if n == names[i] {
				return nil, nil, false // a duplicate field: an error
			}
		}
	}
	return nil, d.addLayout(d.raw, names), true
}

// sameNames reports whether the members' keys are l's names, in order.
func sameNames(l *layout, pl []byte, ms []member) bool {
	if len(l.cols.Names) != len(ms) {
		return false
	}
	for i, n := range l.cols.Names {
		if n != string(ms[i].key(pl)) {
			return false
		}
	}
	return true
}

// directRow decodes the members ms of an image into vals by ss (Connect
// struct) or l (schema-less layout); false on any error.
func (d *Decoder) directRow(pl []byte, ms []member, ss *structSpec, l *layout, vals []cdc.Value) bool {
	for i := range ms {
		var fs *fieldSpec
		if ss != nil {
			fs = &ss.fields[i]
		} else {
			fs = l.specs[i]
		}
		if !d.directValue(pl, &ms[i], fs, &vals[i]) {
			return false
		}
	}
	return true
}

// directValue decodes one image value m for column fs (nil: inferred) as
// decodeValue does; the common tokens here, the rest through fieldRaw.
// false on any error.
func (d *Decoder) directValue(pl []byte, m *member, fs *fieldSpec, out *cdc.Value) bool {
	v := m.val(pl)
	c := v[0]
	if fs == nil || fs.dec == decInfer {
		switch c {
		case 'n':
			*out = cdc.Value{}
			return true
		case 't':
			*out = cdc.Bool(true)
			return true
		case 'f':
			*out = cdc.Bool(false)
			return true
		case '"':
			return d.directText(v, m.esc, out)
		case '{', '[':
			return d.fieldRaw(v, fs, out)
		}
		if n, ok, overflow := parseJSONInt(v); ok {
			if overflow { // beyond int64: a scale-0 decimal, exact from the text
				d.putValue(out, cdc.Value{Kind: cdc.KindDecimal}, v)
			} else {
				*out = cdc.Int(n)
			}
			return true
		}
		f, err := parseFloatText(v, 64)
		if err != nil {
			return false
		}
		*out = cdc.Float(f)
		return true
	}
	if c == 'n' {
		*out = cdc.Null()
		return true
	}
	switch fs.dec {
	case decBool:
		switch c {
		case 't':
			*out = cdc.Bool(true)
			return true
		case 'f':
			*out = cdc.Bool(false)
			return true
		}
	case decInt:
		if c == '-' || c >= '0' && c <= '9' {
			if n, ok, overflow := parseJSONInt(v); ok && !overflow && n >= fs.min && n <= fs.max {
				*out = cdc.Int(n)
				return true
			}
		}
	case decFloat64, decFloat32:
		if c == '-' || c >= '0' && c <= '9' {
			bits := 64
			if fs.dec == decFloat32 {
				bits = 32
			}
			f, err := parseFloatText(v, bits)
			if err != nil {
				return false
			}
			*out = cdc.Float(f)
			return true
		}
	case decString:
		if c == '"' {
			return d.directText(v, m.esc, out)
		}
	case decBytes:
		if c == '"' && !m.esc {
			val, b, err := d.bytesValue(v[1 : len(v)-1])
			if val, b, err = d.bitsOrder(fs, val, b, err); err != nil {
				return false
			}
			d.putValue(out, val, b)
			return true
		}
	case decDate, decTimeMs, decTimeUs, decTimeNs, decTsMs, decTsUs, decTsNs:
		if c == '-' || c >= '0' && c <= '9' {
			lo, hi := temporalRange(fs)
			if n, ok, overflow := parseJSONInt(v); ok && !overflow && n >= lo && n <= hi {
				val, err := temporalFromInt(n, fs)
				if err != nil {
					return false
				}
				*out = val
				return true
			}
		}
	case decDecimal:
		switch {
		case c == '"' && !m.esc:
			val, b, err := d.decimalString(v[1:len(v)-1], fs)
			if err != nil {
				return false
			}
			d.putValue(out, val, b)
			return true
		case c == '-' || c >= '0' && c <= '9':
			val, b, err := d.decimalFromText(v, fs)
			if err != nil {
				return false
			}
			d.putValue(out, val, b)
			return true
		}
	case decZonedTs:
		if c == '"' && !m.esc {
			us, err := parseZonedTimestamp(v[1 : len(v)-1])
			if err != nil {
				return false
			}
			*out = cdc.TimestampTZ(us)
			return true
		}
	case decUUID:
		if c == '"' && !m.esc {
			val, b, err := d.uuidValue(v[1 : len(v)-1])
			if err != nil {
				return false
			}
			d.putValue(out, val, b)
			return true
		}
	}
	return d.fieldRaw(v, fs, out)
}

// directText decodes a string value of a text (or inferred) column as
// textValue does.
func (d *Decoder) directText(v []byte, esc bool, out *cdc.Value) bool {
	s := v[1 : len(v)-1]
	if esc {
		d.esc = unescapeJSON(d.esc[:0], s)
		s = d.esc
	}
	val, p, err := d.textValue(s)
	if err != nil {
		return false
	}
	d.putValue(out, val, p)
	return true
}

// fieldRaw decodes the value text raw for column fs with the general
// path's Decoder.field, parsing raw alone; false on any error.
func (d *Decoder) fieldRaw(raw []byte, fs *fieldSpec, out *cdc.Value) bool {
	v, err := d.fp.ParseBytes(raw)
	if err != nil {
		return false
	}
	return d.field(v, fs, out) == nil
}

// unescapeJSON appends the text of the string body s (between the
// quotes; its escapes already checked by checkEscapes) to dst, decoding
// escapes as fastjson does for valid ones.
func unescapeJSON(dst, s []byte) []byte {
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		s = s[i:]
		if len(s) < 2 {
			return append(dst, s...)
		}
		switch s[1] {
		case '"', '\\', '/':
			dst = append(dst, s[1])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(s, 2)
			if !ok {
				return append(dst, s...)
			}
			if utf16.IsSurrogate(r) {
				lo, ok := hex4(s, 8)
				if !ok || len(s) < 12 {
					return append(dst, s...)
				}
				dst = utf8.AppendRune(dst, utf16.DecodeRune(r, lo))
				s = s[12:]
				continue
			}
			dst = utf8.AppendRune(dst, r)
			s = s[6:]
			continue
		default:
			return append(dst, s...)
		}
		s = s[2:]
	}
	return dst
}

// readDirectSource fills sv as readJSONSource does from the payload's
// source object, transaction block and ts_ms/ts_us (members in d.sm and
// d.tm, scanned by scanPayload).
func (d *Decoder) readDirectSource(sv *sourceVals, pl []byte, f *payloadSpans) {
	sv.reset(&envelopeNames)
	for i := range d.sm {
		m := &d.sm[i]
		if k := sourceFieldIndex(m.key(pl)); k >= 0 {
			d.setRaw(&sv.v[k], m.val(pl))
		}
	}
	if len(f.transaction) > 0 && f.transaction[0] == '{' {
		var total, dc bool // fastjson's Get: the first of a repeated key
		for i := range d.tm {
			m := &d.tm[i]
			switch string(m.key(pl)) {
			case "total_order":
				if !total {
					d.setRaw(&sv.v[sfTxOrder], m.val(pl))
					total = true
				}
			case "data_collection_order":
				if !dc {
					d.setRaw(&sv.v[sfTxDCOrder], m.val(pl))
					dc = true
				}
			}
		}
	}
	if f.tsMs != nil {
		d.setRaw(&sv.v[sfEnvTsMs], f.tsMs)
	}
	if f.tsUs != nil {
		d.setRaw(&sv.v[sfEnvTsUs], f.tsUs)
	}
}

// setRaw stores the validated JSON value v in s as setJSON does: string
// text unescaped (into the source arena when it has escapes, else
// aliasing the record), number text as received.
func (d *Decoder) setRaw(s *sval, v []byte) {
	switch v[0] {
	case 'n':
		s.t = svNull
	case '"':
		s.t = svString
		body := v[1 : len(v)-1]
		if bytes.IndexByte(body, '\\') >= 0 {
			start := len(d.sarena)
			d.sarena = unescapeJSON(d.sarena, body)
			body = d.sarena[start:len(d.sarena):len(d.sarena)]
		}
		s.text = body
	case 't':
		s.t = svTrue
	case 'f':
		s.t = svFalse
	case '{', '[':
		s.t = svOther
	default:
		s.t = svNumber
		s.text = v
	}
}
