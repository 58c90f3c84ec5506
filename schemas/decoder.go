package schemas

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// DecoderOptions configures a Decoder.
type DecoderOptions struct {
	// KeyColumns are the primary-key column names, in order. If empty,
	// they are taken from the Kafka key's fields (a JSON object, with or
	// without the {schema,payload} envelope) in the key's field order, on
	// the first record that has such a key; a change event with neither
	// is a DecodeError. With KeyColumns set, an unusable Kafka key (not
	// JSON) is ignored.
	KeyColumns []string
	// Columns optionally declares the table's columns. Records without a
	// Connect schema then decode these columns to their declared type
	// instead of guessing from the JSON token, and Event.Schema is this
	// list. nil: infer every column (see the package doc).
	Columns []cdc.Column
}

// Decoder turns Debezium JSON records into events. It is not safe for
// concurrent use: use one Decoder per goroutine (per partition consumer).
// It caches parsed Connect schemas by their raw bytes, so a repeated schema
// is parsed once and its events share one []cdc.Column, and it interns row
// layouts so that images of the same layout share one *cdc.Columns.
type Decoder struct {
	keyCols   []string
	declared  []cdc.Column
	declSpecs map[string]*fieldSpec

	vp, kp, sp fastjson.Parser // value payload, Kafka key, schema

	schemaCache   map[string]*envSchema
	structCanon   map[string]*structSpec
	lastSchemaRaw []byte
	lastSchema    *envSchema

	layouts    map[string]*layout
	lastLayout *layout

	blob []byte // text of the event being decoded (see finishText)
	fix  []fixup

	num, dig, tmp, raw []byte // scratch
	seen               []bool
	keyBuf             []byte
	keyVals            []cdc.Value
}

// NewDecoder returns a Decoder for one topic (one source table).
func NewDecoder(opts DecoderOptions) *Decoder {
	d := &Decoder{
		keyCols:     append([]string(nil), opts.KeyColumns...),
		declSpecs:   make(map[string]*fieldSpec, len(opts.Columns)),
		schemaCache: make(map[string]*envSchema),
		structCanon: make(map[string]*structSpec),
		layouts:     make(map[string]*layout),
	}
	if opts.Columns != nil {
		d.declared = append([]cdc.Column(nil), opts.Columns...)
		for _, c := range d.declared {
			fs := declaredSpec(c)
			d.declSpecs[c.Name] = &fs
		}
	}
	return d
}

// eventBox allocates an event and its two row headers together.
type eventBox struct {
	ev   cdc.Event
	rows [2]cdc.Row
}

var opNames = [256]string{'c': "c", 'u': "u", 'd': "d", 'r': "r", 't': "t"}

// Decode decodes one Kafka record value (and, when needed, its key).
//
//   - nil, empty or JSON null value: KindTombstone.
//   - a transaction metadata event: KindTxMetadata.
//   - op c/u/d/r: KindChange, op t: KindTruncate, with Event set.
//
// Event.Seq is the source position (PostgreSQL: cdc.PostgresSeq(commit LSN
// from source.sequence, source.lsn); MySQL/MariaDB: cdc.MySQLSeq(binlog file
// index, source.pos, source.row)), SourceTs is source.ts_us or
// source.ts_ms×1000 (µs since the epoch), Snapshot maps source.snapshot,
// TxID is source.txId (PostgreSQL) or source.gtid (MySQL) or "". The key is
// taken from the after image (c/u/r) or the before image (d; from the Kafka
// key when a delete has no before image).
//
// Anything that cannot be decoded (malformed JSON, wrong JSON types, an
// unknown op or connector, a missing position, a value that does not fit
// its column) returns a *DecodeError; Decode never panics.
func (d *Decoder) Decode(rec Record) (out Decoded, err error) {
	if isTombstoneValue(rec.Value) {
		return Decoded{Kind: KindTombstone}, nil
	}
	defer func() {
		if r := recover(); r != nil { // a bug, but never take the pipeline down on one record
			d.reset()
			out, err = Decoded{}, decodeErr(&rec, fmt.Errorf("internal error: panic: %v", r))
		}
	}()
	out, err = d.decode(&rec)
	if err != nil {
		clear(d.fix) // drop pointers into the failed event
		d.beginText()
		return Decoded{}, decodeErr(&rec, err)
	}
	return out, nil
}

// reset drops scratch state after a panic.
func (d *Decoder) reset() {
	d.blob, d.fix, d.lastLayout, d.lastSchema, d.lastSchemaRaw = nil, nil, nil, nil, nil
}

// decodeImage decodes one image, typed by ss when the record has a schema.
func (d *Decoder) decodeImage(o *fastjson.Object, ss *structSpec, vals []cdc.Value) (*cdc.Columns, error) {
	if ss != nil {
		return ss.cols, d.decodeStructRow(o, ss, vals)
	}
	l, err := d.decodeLooseRow(o, vals)
	if err != nil {
		return nil, err
	}
	return l.cols, nil
}

// isTombstoneValue: nil, empty, or the JSON literal null.
func isTombstoneValue(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	i := skipWS(b, 0)
	if len(b)-i < 4 || string(b[i:i+4]) != "null" {
		return false
	}
	return skipWS(b, i+4) == len(b)
}

func (d *Decoder) decode(rec *Record) (Decoded, error) {
	pv, env, err := d.parseValue(rec.Value)
	if err != nil {
		return Decoded{}, err
	}
	switch pv.Type() {
	case fastjson.TypeNull:
		return Decoded{Kind: KindTombstone}, nil // {"schema":…,"payload":null}
	case fastjson.TypeObject:
	default:
		return Decoded{}, fmt.Errorf("value is %s, want a JSON object", jsonTypeName(pv))
	}
	po, _ := pv.Object()
	f := readPayload(po)
	if isNull(f.op) {
		kind, err := classifyNoOp(&f)
		return Decoded{Kind: kind}, err
	}
	if f.op.Type() != fastjson.TypeString {
		return Decoded{}, fmt.Errorf("op: want a string, got %s", jsonTypeName(f.op))
	}
	opText, _ := f.op.StringBytes()
	op, err := cdc.ParseOp(string(opText))
	if err != nil {
		return Decoded{}, errors.New(strings.TrimPrefix(err.Error(), "cdc: "))
	}
	if isNull(f.source) {
		return Decoded{}, errors.New("no source block: the event has no position")
	}
	if f.source.Type() != fastjson.TypeObject {
		return Decoded{}, fmt.Errorf("source: want an object, got %s", jsonTypeName(f.source))
	}
	so, _ := f.source.Object()
	pos, err := d.readSource(so)
	if err != nil {
		return Decoded{}, err
	}

	box := &eventBox{}
	ev := &box.ev
	ev.Op, ev.SourceTs, ev.Snapshot = op, pos.ts, pos.snap
	ev.Origin = cdc.Origin{Topic: rec.Topic, Partition: rec.Partition, Offset: rec.Offset}
	var seq [24]byte
	for i := range pos.n {
		binary.BigEndian.PutUint64(seq[8*i:], pos.words[i])
	}
	seqBytes := seq[:8*pos.n]

	d.beginText()
	switch {
	case pos.hasTx:
		d.blob = strconv.AppendInt(d.blob, pos.txInt, 10)
	case len(pos.gtid) > 0:
		d.blob = append(d.blob, pos.gtid...)
	}
	txLen := len(d.blob)

	if op == cdc.OpTruncate {
		ev.TxID = d.finishText()[:txLen]
		ev.Seq = cdc.Seq(seqBytes)
		return Decoded{Kind: KindTruncate, Event: ev, RawOp: opNames[op]}, nil
	}

	bo, err := imageObject(f.before, "before")
	if err != nil {
		return Decoded{}, err
	}
	ao, err := imageObject(f.after, "after")
	if err != nil {
		return Decoded{}, err
	}
	if op == cdc.OpDelete {
		if ao != nil {
			return Decoded{}, errors.New("op d with a non-null after image")
		}
	} else if ao == nil {
		return Decoded{}, fmt.Errorf("op %s without an after image", opText)
	}

	// Shapes first, then one allocation for all values.
	var bs, as *structSpec
	nb, na := 0, 0
	if bo != nil {
		nb = bo.Len()
		if env != nil {
			if bs = env.before; bs == nil {
				return Decoded{}, errors.New(`the schema has no "before" struct`)
			}
			nb = len(bs.fields)
		}
	}
	if ao != nil {
		na = ao.Len()
		if env != nil {
			if as = env.after; as == nil {
				return Decoded{}, errors.New(`the schema has no "after" struct`)
			}
			na = len(as.fields)
		}
	}
	vals := make([]cdc.Value, nb+na)
	if bo != nil {
		r := &box.rows[0]
		if r.Cols, err = d.decodeImage(bo, bs, vals[:nb:nb]); err != nil {
			return Decoded{}, fmt.Errorf("before.%v", err)
		}
		r.Vals = vals[:nb:nb]
		ev.Before = r
	}
	if ao != nil {
		r := &box.rows[1]
		if r.Cols, err = d.decodeImage(ao, as, vals[nb:]); err != nil {
			return Decoded{}, fmt.Errorf("after.%v", err)
		}
		r.Vals = vals[nb:]
		ev.After = r
	}

	keyCols, err := d.keyColumns(rec.Key)
	if err != nil {
		return Decoded{}, err
	}
	keyRow, image := ev.After, "after"
	if op == cdc.OpDelete {
		keyRow, image = ev.Before, "before"
		if keyRow == nil {
			if keyRow, err = d.kafkaKeyRow(rec.Key, env); err != nil {
				return Decoded{}, fmt.Errorf("delete without a before image: %v", err)
			}
			image = "Kafka key"
		}
	}
	ev.TxID = d.finishText()[:txLen]
	if ev.Key, ev.Seq, err = d.eventKey(keyRow, keyCols, image, seqBytes); err != nil {
		return Decoded{}, err
	}
	switch {
	case env == nil:
		ev.Schema = d.declared
	case env.after != nil:
		ev.Schema = env.after.columns
	case env.before != nil:
		ev.Schema = env.before.columns
	}
	return Decoded{Kind: KindChange, Event: ev, RawOp: opNames[op]}, nil
}
