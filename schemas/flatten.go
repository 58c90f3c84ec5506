package schemas

import (
	"errors"
	"fmt"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Flattened records: the output of Debezium's ExtractNewRecordState SMT
// ("unwrap"; Debezium docs, "New record state extraction"). The value is
// the row's columns at the top level plus the add.fields, each named
// <prefix><field> with the prefix "__" by default: __op, __table, __db,
// __lsn, __source_ts_ms, ... A field of the source block is named either
// __<field> (add.fields=lsn) or __source_<field> (add.fields=source.lsn);
// both are read. add.headers put the same names into Kafka headers, read
// when the value lacks them. delete.handling.mode /
// delete.tombstone.handling.mode=rewrite turns a delete into the row's
// last state with __deleted "true" (a string, or a boolean);
// rewrite-with-tombstone adds a Kafka tombstone after it, which decodes
// as KindTombstone like every null value.

// flatMeta holds the add.fields that are not source fields.
type flatMeta struct {
	op, deleted sval
}

// flatSlot returns where a prefixed field (name without the prefix)
// goes: a source value, or m's op/deleted; nil for other add.fields.
func (d *Decoder) flatSlot(name []byte, m *flatMeta) *sval {
	switch string(name) {
	case "op":
		return &m.op
	case "deleted":
		return &m.deleted
	case "transaction_total_order":
		return &d.src.v[sfTxOrder]
	case "transaction_data_collection_order":
		return &d.src.v[sfTxDCOrder]
	}
	if rest, ok := strings.CutPrefix(string(name), "source_"); ok {
		if i := sourceFieldIndex([]byte(rest)); i >= 0 {
			return &d.src.v[i]
		}
		return nil
	}
	switch string(name) {
	case "ts_ms": // the envelope's processing time: only a fallback for an unknown commit time
		return &d.src.v[sfEnvTsMs]
	case "ts_us":
		return &d.src.v[sfEnvTsUs]
	case "ts_ns":
		return nil
	}
	if i := sourceFieldIndex(name); i >= 0 {
		return &d.src.v[i]
	}
	return nil
}

// beginFlat resets the source values for a flattened record, naming them
// by their add.fields names.
func (d *Decoder) beginFlat(m *flatMeta) {
	d.sarena = d.sarena[:0]
	d.src.reset(&d.flatNames)
	m.op = sval{name: d.prefix + "op"}
	m.deleted = sval{name: d.prefix + "deleted"}
}

// flatHeaders fills fields still missing from add.headers (Kafka headers
// named like the add.fields; their values are text).
func (d *Decoder) flatHeaders(rec *Record, m *flatMeta) {
	for _, h := range rec.Headers {
		if !strings.HasPrefix(h.Key, d.prefix) {
			continue
		}
		s := d.flatSlot([]byte(h.Key[len(d.prefix):]), m)
		if s == nil || !s.missing() || h.Value == nil {
			continue
		}
		d.setText(s, svText, h.Value)
	}
}

// flatPosition decides a flattened record's op and reads its position.
// Without any position field it is an error naming the add.fields to
// configure, never a zero Seq.
func (d *Decoder) flatPosition(m *flatMeta) (cdc.Op, position, error) {
	var op cdc.Op
	if !m.op.missing() {
		if !m.op.isString() {
			return 0, position{}, fmt.Errorf("%s: want a string, got %s", m.op.name, m.op.typeName())
		}
		var err error
		if op, err = cdc.ParseOp(string(m.op.text)); err != nil {
			return 0, position{}, fmt.Errorf("%s: %s", m.op.name, strings.TrimPrefix(err.Error(), "cdc: "))
		}
	}
	deleted := false
	switch m.deleted.t {
	case svAbsent, svNull:
	case svTrue:
		deleted = true
	case svFalse:
	case svString, svText:
		switch string(m.deleted.text) {
		case "true":
			deleted = true
		case "false":
		default:
			return 0, position{}, fmt.Errorf("%s %q: want \"true\" or \"false\"", m.deleted.name, m.deleted.text)
		}
	default:
		return 0, position{}, fmt.Errorf("%s: want a string or boolean, got %s", m.deleted.name, m.deleted.typeName())
	}
	conn, err := d.flatConnector()
	if err != nil {
		return 0, position{}, err
	}
	pos, err := sourcePosition(&d.src, conn, false)
	if err != nil {
		return 0, position{}, fmt.Errorf("flattened record: %v (ExtractNewRecordState add.fields for %s must include %s)", err, conn, flatPositionFields(conn))
	}
	switch {
	case deleted:
		op = cdc.OpDelete
	case op == 0 && pos.snap != cdc.SnapshotNone:
		op = cdc.OpRead
	case op == 0:
		op = cdc.OpUpdate // no add.fields op: an upsert
	case op == cdc.OpRead && pos.snap == cdc.SnapshotNone:
		pos.snap = cdc.SnapshotRow // __op "r" is a snapshot read even without source.snapshot
	}
	return op, pos, nil
}

// flatPositionFields names the add.fields that carry a connector's
// position.
func flatPositionFields(conn string) string {
	switch conn {
	case connPostgres:
		return "source.lsn (and source.sequence)"
	case connMySQL, connMariaDB:
		return "source.file,source.pos,source.row"
	case connSQLServer:
		return "source.commit_lsn,source.change_lsn,source.event_serial_no"
	case connOracle:
		return "source.scn,source.commit_scn,source.rs_id,source.ssn (XStream: source.lcr_position)"
	}
	return "the source position fields"
}

// flatConnector is the source connector of a flattened record: its
// source.connector add.field, else DecoderOptions.Connector, else the one
// whose position fields are present.
func (d *Decoder) flatConnector() (string, error) {
	if c := &d.src.v[sfConnector]; !c.missing() {
		if !c.isString() {
			return "", fmt.Errorf("%s: want a string, got %s", c.name, c.typeName())
		}
		return connectorName(c.text), nil
	}
	if d.connector != "" {
		return d.connector, nil
	}
	has := func(i int) bool { return !d.src.v[i].missing() }
	switch {
	case has(sfLsn):
		return connPostgres, nil
	case has(sfFile) || has(sfPos):
		return connMySQL, nil
	case has(sfCommitLSN) || has(sfChangeLSN):
		return connSQLServer, nil
	case has(sfScn) || has(sfCommitScn):
		return connOracle, nil
	}
	return "", fmt.Errorf("flattened record has no position: none of %slsn, %[1]ssource_lsn, %[1]sfile, %[1]spos, %[1]scommit_lsn, %[1]sscn is present; "+
		"set ExtractNewRecordState add.fields to include the source position (PostgreSQL: %s; MySQL: %s; SQL Server: %s; Oracle: %s)",
		d.prefix, flatPositionFields(connPostgres), flatPositionFields(connMySQL), flatPositionFields(connSQLServer), flatPositionFields(connOracle))
}

// decodeFlatJSON decodes a flattened JSON record (po: the value, or the
// envelope's payload; env: its schema, nil without one).
func (d *Decoder) decodeFlatJSON(rec *Record, po *fastjson.Object, env *envSchema) (Decoded, error) {
	var m flatMeta
	d.beginFlat(&m)
	var meta []string
	po.Visit(func(k []byte, v *fastjson.Value) {
		if len(k) < len(d.prefix) || string(k[:len(d.prefix)]) != d.prefix {
			return
		}
		meta = append(meta, string(k))
		if s := d.flatSlot(k[len(d.prefix):], &m); s != nil {
			d.setJSON(s, v)
		}
	})
	for _, k := range meta {
		po.Del(k)
	}
	d.flatHeaders(rec, &m)
	op, pos, err := d.flatPosition(&m)
	if err != nil {
		return Decoded{}, err
	}
	box, txLen, truncate := d.openEvent(rec, op, &pos)
	if truncate != nil {
		return *truncate, nil
	}
	ev := &box.ev
	var ss *structSpec
	if env != nil {
		if env.flat == nil {
			if env.flatErr != nil {
				return Decoded{}, env.flatErr
			}
			return Decoded{}, errors.New("flattened record: the schema is not a struct of columns")
		}
		ss = env.flat
	}
	n := po.Len()
	if ss != nil {
		n = len(ss.fields)
	}
	vals := make([]cdc.Value, n)
	r := &box.rows[0]
	if r.Cols, err = d.decodeImage(po, ss, vals); err != nil {
		return Decoded{}, err
	}
	r.Vals = vals
	if op == cdc.OpDelete {
		ev.Before = r
	} else {
		ev.After = r
	}
	ev.Schema = d.declared
	if ss != nil {
		ev.Schema = ss.columns
	}
	if err := d.finishChange(rec, ev, &pos, 0, txLen, ss); err != nil {
		return Decoded{}, err
	}
	return Decoded{Kind: KindChange, Event: ev, RawOp: opNames[op]}, nil
}
