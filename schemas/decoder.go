package schemas

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"github.com/valyala/fastjson"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// DecoderOptions configures a Decoder.
type DecoderOptions struct {
	// KeyColumns are the primary-key column names, in order. If empty,
	// they are taken from the Kafka key's fields (a JSON object, with or
	// without the {schema,payload} envelope, or an Avro record) in the
	// key's field order, on the first record that has such a key; a
	// change event with neither is a DecodeError. With KeyColumns set, an
	// unusable Kafka key (not JSON) is ignored.
	KeyColumns []string
	// Columns optionally declares the table's columns (see also
	// LoadTableDefinition). Records without a Connect schema then decode
	// these columns to their declared type instead of guessing from the
	// JSON token, and Event.Schema is this list (a decimal wider than 38
	// digits reported as string, see the package doc). With a schema, a
	// declared decimal(p,s) also types a VariableScaleDecimal field.
	// nil: infer every column (see the package doc).
	Columns []cdc.Column
	// TableColumns are the columns of the table the records go to, as it
	// exists (its mirror's types), for records without a Connect schema
	// and columns Columns does not declare: those of a type whose JSON
	// encoding needs the type to be read (decimal(p,s): base64 unscaled
	// bytes at scale s, or numeric text, a string that is both being an
	// error; uuid; date: days since epoch) decode by the declared rules,
	// while the event stays schemaless (Event.Schema is not set from
	// them, so new columns are still inferred and added). Records with a
	// Connect schema never use them. Other types are left to inference:
	// their JSON tokens read the same either way, or the encoding is the
	// connector's choice and not in the table (the unit of times and
	// timestamps; binary as base64 or hex). nil: none.
	TableColumns []cdc.Column
	// UnavailablePlaceholder is the connector's
	// unavailable.value.placeholder; "" means Debezium's default
	// "__debezium_unavailable_value". A "hex:" prefix gives the
	// placeholder's bytes in hex, as in the connector config. Text, JSON,
	// enum and uuid columns holding it, bytes columns holding its bytes
	// (base64 in JSON), and arrays holding it as their only element
	// decode to cdc.Unavailable().
	UnavailablePlaceholder string
	// Registry is the Confluent-compatible schema registry of Avro
	// records (Confluent wire format: magic byte 0, 4-byte big-endian
	// schema id, Avro body). Schemas are fetched by id once and cached.
	// nil: Avro records are a DecodeError.
	Registry *sr.Client
	// RegistryTimeout bounds one schema fetch (default 30s).
	RegistryTimeout time.Duration
	// Flattened selects how records flattened by Debezium's
	// ExtractNewRecordState SMT are recognised (FlattenAuto: a value
	// without op/before/after/source that has an add.fields __op or
	// __deleted field).
	Flattened FlattenMode
	// AddFieldsPrefix is ExtractNewRecordState's add.fields.prefix
	// (default "__"). Fields starting with it are metadata, not columns.
	AddFieldsPrefix string
	// Connector names the source connector (postgresql, mysql, mariadb,
	// sqlserver, oracle) of flattened records whose add.fields do not
	// include source.connector; "" infers it from the position fields
	// present.
	Connector string
	// DropUpsertBefore leaves Event.Before nil for creates, updates and
	// source snapshot reads (Debezium sends an update's before image with
	// REPLICA IDENTITY FULL): their before image is still checked to be an
	// object (or null) but its values are not decoded. Deletes keep theirs.
	// For a sink whose merge rules read before images of deletes only
	// (lakemirror's: docs/design.md rules 3 and 4); the raw record keeps
	// the image.
	DropUpsertBefore bool
	// BitsLeastSignificantFirst keeps the values of io.debezium.data.Bits
	// columns (MySQL BIT(n), PostgreSQL bit(n) and varbit, n > 1) in the
	// byte order Debezium sends: least significant byte first. It is for
	// tables whose stored rows and key index hold that order (written
	// before lakemirror reversed it; lake.PropBitsOrder). false: the bytes
	// are reversed to the database's own order, most significant byte
	// first, so MySQL b'0000000100000010' (0x0102, which Debezium sends as
	// 02 01) is stored as 01 02. Either way the length is Debezium's
	// ceil(n/8) bytes, so a value's bits are right-aligned (PostgreSQL's
	// B'101' in bit(10) reads 00 05).
	BitsLeastSignificantFirst bool
}

// FlattenMode says how flattened (ExtractNewRecordState) records are
// recognised.
type FlattenMode uint8

const (
	// FlattenAuto treats a record value as flattened when it has no op,
	// before, after or source field but has the add.fields op or
	// deleted field (__op, __deleted).
	FlattenAuto FlattenMode = iota
	// FlattenAlways treats every record value as flattened.
	FlattenAlways
	// FlattenNever rejects flattened records with a DecodeError.
	FlattenNever
)

// Decoder turns Debezium records (JSON or Avro) into events. It is not
// safe for concurrent use: use one Decoder per goroutine (per partition
// consumer). It caches parsed Connect and Avro schemas, so a repeated
// schema is parsed once and its events share one []cdc.Column, and it
// interns row layouts so that images of the same layout share one
// *cdc.Columns.
type Decoder struct {
	keyCols   []string
	declared  []cdc.Column
	declSpecs map[string]*fieldSpec
	// tableSpecs: DecoderOptions.TableColumns' decoders, for schemaless
	// values only (looseSpec), never applied to Connect schemas
	tableSpecs map[string]*fieldSpec

	phText, phBase64 string // TOAST placeholder as text and as base64 of its bytes
	phBytes          []byte

	flatMode  FlattenMode
	prefix    string
	flatNames [sfCount]string // add.fields names of the source fields, for messages
	connector string
	// dropBefore: DecoderOptions.DropUpsertBefore
	dropBefore bool
	// bitsLSB: DecoderOptions.BitsLeastSignificantFirst
	bitsLSB bool

	vp, kp, sp fastjson.Parser // value payload, Kafka key, schema
	fp         fastjson.Parser // one image value of the direct path (direct.go)

	// the direct path (direct.go): members of the images and of the
	// source block, unescaped text; noDirect turns it off (tests)
	bm, am, sm, tm []member
	esc            []byte
	noDirect       bool
	directHits     int // records decoded by the direct path

	schemaCache   map[string]*envSchema
	structCanon   map[string]*structSpec
	lastSchemaRaw []byte
	lastSchema    *envSchema

	layouts    map[string]*layout
	lastLayout *layout

	avro avroState // Avro records (avro_decode.go)

	blob []byte // text of the event being decoded (see finishText)
	fix  []fixup

	src    sourceVals // source fields of the event being decoded
	sarena []byte     // their number texts

	num, dig, tmp, raw []byte // scratch
	bitsBuf            []byte // scratch: a Bits value in the database's byte order
	seen               []bool
	keyBuf             []byte
	keyVals            []cdc.Value

	serverID   uint64 // the last event's MySQL source.server_id and its text
	serverText string
	// the last event's data collection and what it was made of
	// (collection)
	coll                          string
	collConn                      string
	collDB, collSchema, collTable []byte
}

// NewDecoder returns a Decoder for one topic (one source table).
func NewDecoder(opts DecoderOptions) *Decoder {
	d := &Decoder{
		keyCols:     append([]string(nil), opts.KeyColumns...),
		declSpecs:   make(map[string]*fieldSpec, len(opts.Columns)),
		schemaCache: make(map[string]*envSchema),
		structCanon: make(map[string]*structSpec),
		layouts:     make(map[string]*layout),
		flatMode:    opts.Flattened,
		prefix:      opts.AddFieldsPrefix,
		connector:   opts.Connector,
		dropBefore:  opts.DropUpsertBefore,
		bitsLSB:     opts.BitsLeastSignificantFirst,
	}
	d.setPlaceholder(opts.UnavailablePlaceholder)
	if d.prefix == "" {
		d.prefix = "__"
	}
	for i, n := range sourceFieldNames {
		d.flatNames[i] = d.prefix + "source_" + n + " (or " + d.prefix + n + ")"
	}
	d.flatNames[sfTxOrder] = d.prefix + "transaction_total_order"
	d.flatNames[sfTxDCOrder] = d.prefix + "transaction_data_collection_order"
	d.flatNames[sfEnvTsMs], d.flatNames[sfEnvTsUs] = d.prefix+"ts_ms", d.prefix+"ts_us"
	if opts.Columns != nil {
		d.declared = make([]cdc.Column, 0, len(opts.Columns))
		for _, c := range opts.Columns {
			fs := declaredSpec(c)
			d.declSpecs[c.Name] = &fs
			col := c
			col.Type = fs.typ // decimals beyond 38 digits: string
			d.declared = append(d.declared, col)
		}
	}
	for _, c := range opts.TableColumns {
		if d.declSpecs[c.Name] == nil && typedByTable(c.Type) {
			if d.tableSpecs == nil {
				d.tableSpecs = make(map[string]*fieldSpec)
			}
			c.Optional = true // NULLs are the table's business (a delete's before image)
			fs := declaredSpec(c)
			d.tableSpecs[c.Name] = &fs
		}
	}
	d.avro.init(opts.Registry, opts.RegistryTimeout)
	return d
}

// typedByTable tells whether a table column of type t types schemaless
// values (see DecoderOptions.TableColumns). Not binary: base64 (the
// default binary.handling.mode) and hex text overlap ("cafe" is both).
func typedByTable(t cdc.Type) bool {
	switch t.Kind {
	case cdc.KindDecimal, cdc.KindUUID, cdc.KindDate:
		return true
	}
	return false
}

// TableTyped returns the columns of cols that DecoderOptions.TableColumns
// uses (decimal, uuid, date; see typedByTable), in order; nil when none.
func TableTyped(cols []cdc.Column) []cdc.Column {
	var out []cdc.Column
	for _, c := range cols {
		if typedByTable(c.Type) {
			out = append(out, c)
		}
	}
	return out
}

// looseSpec is the decoder of schemaless column name: declared
// (DecoderOptions.Columns), else typed by the table (TableColumns), else
// nil (inferred from the JSON token).
func (d *Decoder) looseSpec(name string) *fieldSpec {
	if fs := d.declSpecs[name]; fs != nil {
		return fs
	}
	return d.tableSpecs[name]
}

// setPlaceholder sets the TOAST placeholder (see
// DecoderOptions.UnavailablePlaceholder).
func (d *Decoder) setPlaceholder(ph string) {
	if ph == "" {
		ph = unavailablePlaceholder
	}
	b := []byte(ph)
	if h, ok := strings.CutPrefix(ph, "hex:"); ok {
		if raw, err := hex.DecodeString(h); err == nil {
			b = raw
		}
	}
	d.phBytes, d.phText = b, string(b)
	d.phBase64 = base64.StdEncoding.EncodeToString(b)
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
// The value is Avro in the Confluent wire format when it starts with the
// magic byte 0 (decoded with DecoderOptions.Registry), else JSON
// (JsonConverter, with or without the schema envelope). A flattened
// ExtractNewRecordState value is decoded as described on FlattenMode.
//
// Event.Seq is the source position (see the package doc and cdc.Seq),
// SourceTs is source.ts_us or source.ts_ms×1000 (µs since the epoch); when
// that is 0 or missing, the envelope's ts_us or ts_ms; when that is too,
// the Kafka record timestamp (Record.Timestamp, when positive; marked by
// Decoded.SourceTsFromKafka), else 0 (unknown);
// Snapshot maps source.snapshot, TxID is source.txId (PostgreSQL, Oracle)
// or source.gtid (MySQL) or "". The key is taken from the after image
// (c/u/r) or the before image (d; from the Kafka key when a delete has no
// before image). Decoded.OldKey/NewKey carry the __debezium.oldkey /
// __debezium.newkey headers of a primary-key change.
//
// Anything that cannot be decoded (malformed JSON or Avro, wrong types,
// an unknown op, connector or schema id, a missing position, a value that
// does not fit its column) returns a *DecodeError with the record's
// coordinates; Decode never panics. A schema registry that cannot be
// reached returns a *RegistryError instead (retry; the record is fine).
func (d *Decoder) Decode(rec Record) (out Decoded, err error) {
	if isTombstoneValue(rec.Value) {
		out = Decoded{Kind: KindTombstone}
		d.attachHeaders(&out, &rec)
		return out, nil
	}
	defer func() {
		if r := recover(); r != nil { // a bug, but never take the pipeline down on one record
			d.reset()
			out, err = Decoded{}, decodeErr(&rec, fmt.Errorf("internal error: panic: %v", r))
		}
	}()
	if rec.Value[0] == confluentMagic {
		out, err = d.decodeAvro(&rec)
	} else {
		out, err = d.decode(&rec)
	}
	if err != nil {
		clear(d.fix) // drop pointers into the failed event
		d.beginText()
		var re *RegistryError
		if errors.As(err, &re) {
			re.Topic, re.Partition, re.Offset = rec.Topic, rec.Partition, rec.Offset
			return Decoded{}, re
		}
		return Decoded{}, decodeErr(&rec, err)
	}
	d.attachHeaders(&out, &rec)
	if out.Event != nil && out.Event.SourceTs == 0 && rec.Timestamp > 0 {
		out.Event.SourceTs, out.SourceTsFromKafka = rec.Timestamp, true
	}
	return out, nil
}

// reset drops scratch state after a panic.
func (d *Decoder) reset() {
	d.blob, d.fix, d.lastLayout, d.lastSchema, d.lastSchemaRaw = nil, nil, nil, nil, nil
	d.sarena = nil
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
	if !d.noDirect {
		if out, ok := d.decodeDirect(rec); ok {
			d.directHits++
			return out, nil
		}
		clear(d.fix) // drop pointers into the abandoned event
		d.beginText()
	}
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
	f := d.readPayload(po)
	if d.isFlattened(&f) {
		return d.decodeFlatJSON(rec, po, env)
	}
	if isNull(f.op) {
		kind, err := d.classifyNoOp(&f)
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
	d.sarena = d.sarena[:0]
	d.readJSONSource(&d.src, so, f.transaction, f.tsMs, f.tsUs)
	pos, err := readSource(&d.src)
	if err != nil {
		return Decoded{}, err
	}

	box, txLen, truncate := d.openEvent(rec, op, &pos)
	if truncate != nil {
		return *truncate, nil
	}
	ev := &box.ev

	bo, err := imageObject(f.before, "before")
	if err != nil {
		return Decoded{}, err
	}
	ao, err := imageObject(f.after, "after")
	if err != nil {
		return Decoded{}, err
	}
	if err := checkImages(op, bo != nil, ao != nil, string(opText)); err != nil {
		return Decoded{}, err
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
		if d.dropBefore && op != cdc.OpDelete {
			bo, nb = nil, 0 // not decoded (DropUpsertBefore)
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
	if err := d.finishImages(rec, ev, env, &pos, txLen); err != nil {
		return Decoded{}, err
	}
	return Decoded{Kind: KindChange, Event: ev, RawOp: opNames[op]}, nil
}

// openEvent starts the event of a change of op at pos in a new eventBox
// (startEvent) and returns the box and the length of the transaction id
// in the text arena; a truncate is complete at once and comes back
// decoded (nil otherwise). Shared by the general, the direct and the
// flattened decode.
func (d *Decoder) openEvent(rec *Record, op cdc.Op, pos *position) (box *eventBox, txLen int, truncate *Decoded) {
	box = &eventBox{}
	ev := &box.ev
	d.beginText()
	txLen = d.startEvent(rec, ev, op, pos)
	if op == cdc.OpTruncate {
		ev.TxID = d.finishText()[:txLen]
		ev.Seq = seqOf(pos, op)
		return box, txLen, &Decoded{Kind: KindTruncate, Event: ev, RawOp: opNames[op]}
	}
	return box, txLen, nil
}

// finishImages sets the event's schema (the envelope's after, else
// before struct; the declared one without an envelope) and finishes the
// change (finishChange, with the before struct as the key's spec): the
// common end of decode and decodeDirect.
func (d *Decoder) finishImages(rec *Record, ev *cdc.Event, env *envSchema, pos *position, txLen int) error {
	switch {
	case env == nil:
		ev.Schema = d.declared
	case env.after != nil:
		ev.Schema = env.after.columns
	case env.before != nil:
		ev.Schema = env.before.columns
	}
	var keySpec *structSpec
	if env != nil {
		keySpec = env.before
	}
	return d.finishChange(rec, ev, pos, 0, txLen, keySpec)
}

// checkImages checks that op has the images Debezium sends with it.
func checkImages(op cdc.Op, before, after bool, opText string) error {
	if op == cdc.OpDelete {
		if after {
			return errors.New("op d with a non-null after image")
		}
	} else if !after {
		return fmt.Errorf("op %s without an after image", opText)
	}
	return nil
}

// startEvent fills the event's op, time, snapshot mark, transaction
// order, data collection and origin from pos and appends the transaction
// id to the event text; it returns where the id ends in the text (its
// length when the text was empty, as openEvent begins it). Shared by
// every decode path, Avro's included.
func (d *Decoder) startEvent(rec *Record, ev *cdc.Event, op cdc.Op, pos *position) int {
	ev.Op, ev.SourceTs, ev.Snapshot, ev.TxOrder = op, pos.ts, pos.snap, pos.order
	ev.Collection = d.collection(pos)
	ev.Origin = cdc.Origin{Topic: rec.Topic, Partition: rec.Partition, Offset: rec.Offset}
	d.blob = append(d.blob, pos.tx...)
	return len(d.blob)
}

// collection is the data collection of an event at pos
// (cdc.DataCollection of its source block's connector, db, schema and
// table): the last event's string when they are the same, so that a
// topic of one table allocates it once.
func (d *Decoder) collection(pos *position) string {
	if pos.conn == d.collConn && bytes.Equal(pos.table, d.collTable) && bytes.Equal(pos.schema, d.collSchema) && bytes.Equal(pos.db, d.collDB) {
		return d.coll
	}
	d.collConn = pos.conn
	d.collDB = append(d.collDB[:0], pos.db...)
	d.collSchema = append(d.collSchema[:0], pos.schema...)
	d.collTable = append(d.collTable[:0], pos.table...)
	d.coll = cdc.DataCollection(pos.conn, string(pos.db), string(pos.schema), string(pos.table))
	return d.coll
}

// seqOf is the Seq (a fresh string) of an event with op at pos.
func seqOf(pos *position, op cdc.Op) cdc.Seq {
	var seq [8 * maxSeqWords]byte
	return cdc.Seq(pos.seqBytes(op, &seq))
}

// seqBytes writes the Seq bytes of an event with op at p into buf and
// returns them (8 bytes per word); PostgreSQL words follow
// cdc.PostgresEventWords, for which the op tells a source snapshot read.
func (p *position) seqBytes(op cdc.Op, buf *[8 * maxSeqWords]byte) []byte {
	w := p.words
	if p.pg {
		blockingRead := (op == cdc.OpRead || p.snap != cdc.SnapshotNone) && p.snap != cdc.SnapshotIncremental
		w[0], w[1] = cdc.PostgresEventWords(w[0], w[1], blockingRead)
	}
	for i := range p.n {
		binary.BigEndian.PutUint64(buf[8*i:], w[i])
	}
	return buf[:8*p.n]
}

// finishChange completes a change event whose images are decoded: it
// turns the event text into strings (the transaction id is its bytes
// [txStart, txEnd)), and sets the key (from the after image for c/u/r,
// the before image for d, else the Kafka key typed by keySpec) and Seq.
func (d *Decoder) finishChange(rec *Record, ev *cdc.Event, pos *position, txStart, txEnd int, keySpec *structSpec) error {
	keyCols, err := d.keyColumns(rec.Key)
	if err != nil {
		return err
	}
	keyRow, image := ev.After, "after"
	if ev.Op == cdc.OpDelete {
		keyRow, image = ev.Before, "before"
		if keyRow == nil {
			if keyRow, err = d.kafkaKeyRow(rec.Key, keySpec); err != nil {
				return fmt.Errorf("delete without a before image: %w", err)
			}
			image = "Kafka key"
		}
	}
	ev.TxID = d.finishText()[txStart:txEnd]
	// after finishText: text values are set there
	if ev.Op == cdc.OpDelete && ev.Before != nil && keyOnlyImage(ev.Before, keySpec, keyCols) {
		for i, n := range ev.Before.Cols.Names {
			if !slices.Contains(keyCols, n) {
				ev.Before.Vals[i] = cdc.Null()
			}
		}
	}
	if pos.server != 0 {
		if pos.server != d.serverID {
			d.serverID, d.serverText = pos.server, strconv.FormatUint(pos.server, 10)
		}
		ev.SourceServer = d.serverText
	}
	var seq [8 * maxSeqWords]byte
	ev.Key, ev.Seq, err = d.eventKey(keyRow, keyCols, image, pos.seqBytes(ev.Op, &seq))
	return err
}

// keyOnlyImage reports whether r, a delete's before image decoded with
// ss, holds values for the key columns only, the rest being what
// Debezium puts in the columns a database left out: NULL for an optional
// column; for a required one its schema default, else its type's
// fallback (empty text or bytes, zero, false, the epoch) — the
// connectors' JdbcValueConverters.convertValue. PostgreSQL sends such
// images for the default replica identity (docs/design.md rule 4), MySQL
// for binlog_row_image=MINIMAL. A full image whose every non-key value
// looks so is taken for a key-only one: the soft delete then keeps the
// key's last known values, which are those when the key's past was seen.
// Defaults come from JsonConverter schemas (decoded as the column's
// values) and, for text, integer and boolean columns, from Avro schemas;
// another Avro default makes the image look full, as does a decimal sent
// as text (decimal.handling.mode=string).
func keyOnlyImage(r *cdc.Row, ss *structSpec, keyCols []string) bool {
	if ss == nil || len(ss.fields) != len(r.Vals) || len(keyCols) == 0 {
		return false
	}
	filler := false
	for i, v := range r.Vals {
		f := &ss.fields[i]
		if f.name != r.Cols.Names[i] {
			return false
		}
		if v.Kind == cdc.KindNull || slices.Contains(keyCols, f.name) {
			continue
		}
		if f.optional || !(v.IsEmpty() || f.def != nil && *f.def == v) {
			return false
		}
		filler = true
	}
	return filler
}
