package schemas

import (
	"errors"
	"fmt"
	"math"

	"github.com/hamba/avro/v2"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Decoding Avro bodies by a compiled plan with hamba/avro's Reader. Values
// go through the same finishing steps as JSON (placeholders, decimals,
// temporal units), so a record decodes to the same cdc values whichever
// converter wrote it.

// decodeAvro decodes a Confluent-framed Avro record value.
func (d *Decoder) decodeAvro(rec *Record) (Decoded, error) {
	id, body, err := splitConfluent(rec.Value)
	if err != nil {
		return Decoded{}, err
	}
	plan, err := d.avroValuePlan(id)
	if err != nil {
		return Decoded{}, err
	}
	r := d.avro.readerFor(body)
	var out Decoded
	switch plan.kind {
	case avroEnvelope:
		out, err = d.avroEnvelope(rec, plan, r)
	case avroFlat:
		out, err = d.avroFlat(rec, plan, r)
	case avroTxMeta:
		err = d.avroTxMeta(plan.root, r)
		out = Decoded{Kind: KindTxMetadata}
	default:
		if plan.root.t == avro.Record && plan.root.field("status") != nil {
			return Decoded{}, fmt.Errorf("schema id %d: transaction metadata in a flattened-only decoder", id)
		}
		if plan.root.t == avro.Record && d.flatMode == FlattenNever && len(plan.root.fields) > 0 {
			return Decoded{}, fmt.Errorf("schema id %d (%s) has no op, before or after: this looks like ExtractNewRecordState (unwrap) output, which this decoder is configured to reject", id, plan.root.name)
		}
		return Decoded{}, fmt.Errorf("schema id %d (%s %s) is not a Debezium change event envelope", id, plan.root.t, plan.root.name)
	}
	if err != nil {
		if r.Error != nil {
			return Decoded{}, avroErr(r.Error)
		}
		return Decoded{}, err
	}
	if err := readerEnd(r); err != nil {
		return Decoded{}, err
	}
	return out, nil
}

// avroEnvelope decodes a Debezium Envelope record.
func (d *Decoder) avroEnvelope(rec *Record, plan *avroValuePlan, r *avro.Reader) (Decoded, error) {
	d.sarena = d.sarena[:0]
	d.src.reset(&envelopeNames)
	d.beginText()
	box := &eventBox{}
	ev := &box.ev
	var opSval sval
	opSval.name = "op"
	hasSource := false
	for _, f := range plan.root.fields {
		var err error
		switch f.name {
		case "before":
			ev.Before, err = d.avroImage(r, f.node, plan.before, &box.rows[0])
			if err != nil {
				err = fmt.Errorf("before.%v", err)
			}
		case "after":
			ev.After, err = d.avroImage(r, f.node, plan.after, &box.rows[1])
			if err != nil {
				err = fmt.Errorf("after.%v", err)
			}
		case "source":
			hasSource, err = d.avroSource(r, f.node)
		case "op":
			err = d.avroSval(r, f.node, &opSval, 0)
		case "transaction":
			err = d.avroTransaction(r, f.node)
		case "ts_ms":
			err = d.avroSval(r, f.node, &d.src.v[sfEnvTsMs], 0)
		case "ts_us":
			err = d.avroSval(r, f.node, &d.src.v[sfEnvTsUs], 0)
		default:
			err = avroSkip(r, f.node, 0)
		}
		if err != nil {
			return Decoded{}, err
		}
		if r.Error != nil {
			return Decoded{}, avroErr(r.Error)
		}
	}
	if opSval.missing() {
		return Decoded{}, errors.New(`no "op" field: not a Debezium change event`)
	}
	if !opSval.isString() {
		return Decoded{}, fmt.Errorf("op: want a string, got %s", opSval.typeName())
	}
	op, err := cdc.ParseOp(string(opSval.text))
	if err != nil {
		return Decoded{}, fmt.Errorf("unknown op %q (want c, u, d, r or t)", opSval.text)
	}
	if !hasSource {
		return Decoded{}, errors.New("no source block: the event has no position")
	}
	pos, err := readSource(&d.src)
	if err != nil {
		return Decoded{}, err
	}
	// The images' text is already in the blob: the transaction id goes
	// after it.
	blobStart := len(d.blob)
	d.startEvent(rec, ev, op, &pos)
	if op == cdc.OpTruncate {
		ev.Before, ev.After = nil, nil
		ev.TxID = d.finishText()[blobStart:]
		ev.Seq = seqOf(&pos, op)
		return Decoded{Kind: KindTruncate, Event: ev, RawOp: opNames[op]}, nil
	}
	if err := checkImages(op, ev.Before != nil, ev.After != nil, string(opSval.text)); err != nil {
		return Decoded{}, err
	}
	if d.dropBefore && op != cdc.OpDelete {
		ev.Before = nil // DropUpsertBefore (Avro is read in order: the image was decoded to get past it)
	}
	switch {
	case ev.After != nil && plan.after != nil:
		ev.Schema = plan.after.ss.columns
	case plan.before != nil:
		ev.Schema = plan.before.ss.columns
	}
	var keySpec *structSpec
	if plan.before != nil {
		keySpec = plan.before.ss
	}
	if err := d.finishChange(rec, ev, &pos, blobStart, len(d.blob), keySpec); err != nil {
		return Decoded{}, err
	}
	return Decoded{Kind: KindChange, Event: ev, RawOp: opNames[op]}, nil
}

// avroFlat decodes a flattened (ExtractNewRecordState) Avro value.
func (d *Decoder) avroFlat(rec *Record, plan *avroValuePlan, r *avro.Reader) (Decoded, error) {
	var m flatMeta
	d.beginFlat(&m)
	d.beginText()
	box := &eventBox{}
	ev := &box.ev
	row := plan.flat
	vals := make([]cdc.Value, len(row.ss.fields))
	for i, f := range row.node.fields {
		var err error
		if c := row.col[i]; c >= 0 {
			fs := &row.ss.fields[c]
			var val cdc.Value
			var payload []byte
			if val, payload, err = d.avroValue(r, f.node, fs, 0); err == nil {
				d.putValue(&vals[c], val, payload)
			} else {
				err = fmt.Errorf("%s: %w", f.name, err)
			}
		} else if s := d.flatSlot([]byte(f.name[len(d.prefix):]), &m); s != nil {
			err = d.avroSval(r, f.node, s, 0)
		} else {
			err = avroSkip(r, f.node, 0)
		}
		if err != nil {
			return Decoded{}, err
		}
		if r.Error != nil {
			return Decoded{}, avroErr(r.Error)
		}
	}
	d.flatHeaders(rec, &m)
	op, pos, err := d.flatPosition(&m)
	if err != nil {
		return Decoded{}, err
	}
	blobStart := len(d.blob)
	d.startEvent(rec, ev, op, &pos)
	if op == cdc.OpTruncate {
		ev.TxID = d.finishText()[blobStart:]
		ev.Seq = seqOf(&pos, op)
		return Decoded{Kind: KindTruncate, Event: ev, RawOp: opNames[op]}, nil
	}
	rr := &box.rows[0]
	rr.Cols, rr.Vals = row.ss.cols, vals
	if op == cdc.OpDelete {
		ev.Before = rr
	} else {
		ev.After = rr
	}
	ev.Schema = row.ss.columns
	if err := d.finishChange(rec, ev, &pos, blobStart, len(d.blob), row.ss); err != nil {
		return Decoded{}, err
	}
	return Decoded{Kind: KindChange, Event: ev, RawOp: opNames[op]}, nil
}

// avroTxMeta reads a transaction metadata record and checks its status.
func (d *Decoder) avroTxMeta(root *anode, r *avro.Reader) error {
	status := sval{name: "status"}
	for _, f := range root.fields {
		var err error
		if f.name == "status" {
			err = d.avroSval(r, f.node, &status, 0)
		} else {
			err = avroSkip(r, f.node, 0)
		}
		if err != nil {
			return err
		}
	}
	if !status.isString() || (string(status.text) != "BEGIN" && string(status.text) != "END") {
		return fmt.Errorf("transaction metadata status %q: want BEGIN or END", status.text)
	}
	return nil
}

// avroImage reads a before/after field (["null", Value]) into row; nil
// for null.
func (d *Decoder) avroImage(r *avro.Reader, n *anode, plan *avroRow, row *cdc.Row) (*cdc.Row, error) {
	n, err := avroBranch(r, n)
	if err != nil || n.t == avro.Null {
		return nil, err
	}
	if plan == nil || n != plan.node {
		return nil, errors.New("the image is not the schema's row record")
	}
	vals := make([]cdc.Value, len(plan.ss.fields))
	if err := d.avroRowValues(r, plan, vals); err != nil {
		return nil, err
	}
	row.Cols, row.Vals = plan.ss.cols, vals
	return row, nil
}

// avroRowValues reads a row record's columns into vals.
func (d *Decoder) avroRowValues(r *avro.Reader, plan *avroRow, vals []cdc.Value) error {
	for i, f := range plan.node.fields {
		c := plan.col[i]
		if c < 0 {
			if err := avroSkip(r, f.node, 0); err != nil {
				return err
			}
			continue
		}
		val, payload, err := d.avroValue(r, f.node, &plan.ss.fields[c], 0)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		if r.Error != nil {
			return avroErr(r.Error)
		}
		d.putValue(&vals[c], val, payload)
	}
	return nil
}

// avroKeyRow decodes a Confluent-framed Avro Kafka key as a row.
func (d *Decoder) avroKeyRow(key []byte) (*cdc.Row, error) {
	id, body, err := splitConfluent(key)
	if err != nil {
		return nil, fmt.Errorf("the Kafka key: %v", err)
	}
	plan, err := d.avroKeyPlan(id)
	if err != nil {
		return nil, err
	}
	r := d.avro.readerFor(body)
	vals := make([]cdc.Value, len(plan.ss.fields))
	if err := d.avroRowValues(r, plan, vals); err != nil {
		return nil, fmt.Errorf("the Kafka key field %v", err)
	}
	if err := readerEnd(r); err != nil {
		return nil, fmt.Errorf("the Kafka key: %v", err)
	}
	return &cdc.Row{Cols: plan.ss.cols, Vals: vals}, nil
}

// avroSource reads the source record into d.src; it reports whether the
// block was present (not null).
func (d *Decoder) avroSource(r *avro.Reader, n *anode) (bool, error) {
	n, err := avroBranch(r, n)
	if err != nil || n.t == avro.Null {
		return false, err
	}
	if n.t != avro.Record {
		return false, fmt.Errorf("source: want a record, got %s", n.t)
	}
	for _, f := range n.fields {
		if i := sourceFieldIndex([]byte(f.name)); i >= 0 {
			err = d.avroSval(r, f.node, &d.src.v[i], 0)
		} else {
			err = avroSkip(r, f.node, 0)
		}
		if err != nil {
			return false, err
		}
	}
	return true, nil
}

// avroTransaction reads the transaction block's total_order and
// data_collection_order.
func (d *Decoder) avroTransaction(r *avro.Reader, n *anode) error {
	n, err := avroBranch(r, n)
	if err != nil || n.t != avro.Record {
		if err == nil && n.t != avro.Null {
			err = avroSkip(r, n, 0)
		}
		return err
	}
	for _, f := range n.fields {
		switch f.name {
		case "total_order":
			err = d.avroSval(r, f.node, &d.src.v[sfTxOrder], 0)
		case "data_collection_order":
			err = d.avroSval(r, f.node, &d.src.v[sfTxDCOrder], 0)
		default:
			err = avroSkip(r, f.node, 0)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// avroBranch resolves a union: it reads the branch index and returns the
// branch's node (n itself for non-unions).
func avroBranch(r *avro.Reader, n *anode) (*anode, error) {
	if n.t != avro.Union {
		return n, nil
	}
	i := r.ReadLong()
	if r.Error != nil {
		return nil, avroErr(r.Error)
	}
	if i < 0 || i >= int64(len(n.branches)) {
		return nil, fmt.Errorf("malformed Avro: union branch %d of %d", i, len(n.branches))
	}
	return n.branches[i], nil
}

// avroSval reads a scalar into a source value (records, arrays and maps
// are skipped and marked svOther).
func (d *Decoder) avroSval(r *avro.Reader, n *anode, s *sval, depth int) error {
	n, err := avroBranch(r, n)
	if err != nil {
		return err
	}
	switch n.t {
	case avro.Null:
		s.t = svNull
	case avro.Boolean:
		if r.ReadBool() {
			s.t = svTrue
		} else {
			s.t = svFalse
		}
	case avro.Int:
		d.setInt(s, int64(r.ReadInt()))
	case avro.Long:
		d.setInt(s, r.ReadLong())
	case avro.String:
		d.setText(s, svString, r.ReadBytes())
	case avro.Enum:
		sym, err := avroEnum(r, n)
		if err != nil {
			return err
		}
		d.setText(s, svString, []byte(sym))
	default:
		s.t = svOther
		return avroSkip(r, n, depth)
	}
	return nil
}

func avroEnum(r *avro.Reader, n *anode) (string, error) {
	i := r.ReadInt()
	if r.Error != nil {
		return "", avroErr(r.Error)
	}
	if i < 0 || int(i) >= len(n.symbols) {
		return "", fmt.Errorf("malformed Avro: enum index %d of %d", i, len(n.symbols))
	}
	return n.symbols[i], nil
}

// avroFixed reads a fixed value's bytes.
func avroFixed(r *avro.Reader, n *anode) []byte {
	b := make([]byte, n.size)
	r.Read(b)
	return b
}

// avroBlocks reads the block headers of an array or map and calls fn for
// each item, stopping at the first error; it bounds the item count.
func avroBlocks(r *avro.Reader, fn func() error) error {
	total := 0
	for {
		n := r.ReadLong()
		if r.Error != nil {
			return avroErr(r.Error)
		}
		if n == 0 {
			return nil
		}
		if n < 0 {
			if n == math.MinInt64 {
				return errors.New("malformed Avro: block count out of range")
			}
			n = -n
			r.ReadLong() // block size in bytes
		}
		if n > maxListElems || total+int(n) > maxListElems {
			return fmt.Errorf("malformed Avro: more than %d items", maxListElems)
		}
		total += int(n)
		for range n {
			if err := fn(); err != nil {
				return err
			}
			if r.Error != nil {
				return avroErr(r.Error)
			}
		}
	}
}

// avroSkip reads past one value.
func avroSkip(r *avro.Reader, n *anode, depth int) error {
	if depth > maxAvroDepth {
		return errors.New("the Avro value is nested too deeply")
	}
	n, err := avroBranch(r, n)
	if err != nil {
		return err
	}
	switch n.t {
	case avro.Null:
	case avro.Boolean:
		r.ReadBool()
	case avro.Int:
		r.ReadInt()
	case avro.Long:
		r.ReadLong()
	case avro.Float:
		r.ReadFloat()
	case avro.Double:
		r.ReadDouble()
	case avro.String, avro.Bytes:
		r.ReadBytes()
	case avro.Enum:
		_, err = avroEnum(r, n)
	case avro.Fixed:
		r.SkipNBytes(n.size)
	case avro.Record:
		for _, f := range n.fields {
			if err = avroSkip(r, f.node, depth+1); err != nil {
				break
			}
		}
	case avro.Array:
		err = avroBlocks(r, func() error { return avroSkip(r, n.items, depth+1) })
	case avro.Map:
		err = avroBlocks(r, func() error {
			r.ReadBytes()
			return avroSkip(r, n.values, depth+1)
		})
	default:
		err = fmt.Errorf("unsupported Avro type %s", n.t)
	}
	if err == nil && r.Error != nil {
		err = avroErr(r.Error)
	}
	return err
}
