package schemas

import (
	"errors"
	"fmt"
	"math"

	"github.com/valyala/fastjson"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// The "source" block: where the event sits in the source log (the `_seq`
// of design.md, rule 1), when it was committed, whether it is a snapshot
// read, and its transaction. Field names and meanings follow the Debezium
// connector docs, "Change event values" → source metadata, for the
// PostgreSQL and MySQL connectors.

// position is what the decoder takes from the source block.
type position struct {
	words [3]uint64 // Seq words, most significant first
	n     int       // number of words used
	ts    int64     // source commit time, µs since the epoch
	snap  cdc.SnapshotMark
	txInt int64 // PostgreSQL txId
	hasTx bool
	gtid  []byte // MySQL GTID (aliases parser memory)
}

// sourceFields are the source block fields the decoder reads.
type sourceFields struct {
	connector, tsMs, tsUs, snapshot, txID, lsn, sequence, file, pos, row, gtid *fastjson.Value
}

// readSource decodes the source block. Every change and truncate needs a
// position: a missing or mistyped position field is an error, never a
// zero Seq.
func (d *Decoder) readSource(src *fastjson.Object) (position, error) {
	var f sourceFields
	src.Visit(func(k []byte, v *fastjson.Value) {
		switch string(k) {
		case "connector":
			f.connector = v
		case "ts_ms":
			f.tsMs = v
		case "ts_us":
			f.tsUs = v
		case "snapshot":
			f.snapshot = v
		case "txId":
			f.txID = v
		case "lsn":
			f.lsn = v
		case "sequence":
			f.sequence = v
		case "file":
			f.file = v
		case "pos":
			f.pos = v
		case "row":
			f.row = v
		case "gtid":
			f.gtid = v
		}
	})
	var p position
	if isNull(f.connector) {
		return p, errors.New("source.connector is missing: cannot tell how to read the position")
	}
	if f.connector.Type() != fastjson.TypeString {
		return p, fmt.Errorf("source.connector: want a string, got %s", jsonTypeName(f.connector))
	}
	conn, _ := f.connector.StringBytes()
	var err error
	switch string(conn) {
	case "postgresql":
		err = d.postgresPosition(&f, &p)
	case "mysql", "mariadb":
		err = d.mysqlPosition(&f, &p)
	default:
		return p, fmt.Errorf("source.connector %q is not supported (supported: postgresql, mysql, mariadb); its position cannot be ordered", conn)
	}
	if err != nil {
		return p, err
	}
	if p.ts, err = d.sourceTs(&f); err != nil {
		return p, err
	}
	if p.snap, err = snapshotMark(f.snapshot); err != nil {
		return p, err
	}
	return p, nil
}

// postgresPosition: Seq = (commit LSN, lsn). lsn is source.lsn; the commit
// LSN is the first element of source.sequence, a JSON-encoded string
// holding [lastCommitLsn, lsn] as strings or nulls (Debezium ≥ 1.5); it is
// 0 when null or absent (snapshot reads, older connectors). TxID is
// source.txId in decimal.
func (d *Decoder) postgresPosition(f *sourceFields, p *position) error {
	lsn, err := d.uintField(f.lsn, "source.lsn")
	if err != nil {
		return err
	}
	var commit uint64
	if !isNull(f.sequence) {
		if f.sequence.Type() != fastjson.TypeString {
			return fmt.Errorf("source.sequence: want a JSON-encoded string, got %s", jsonTypeName(f.sequence))
		}
		s, _ := f.sequence.StringBytes()
		if commit, err = parsePGSequence(s); err != nil {
			return fmt.Errorf("source.sequence %q: %v", s, err)
		}
	}
	p.words[0], p.words[1], p.n = commit, lsn, 2
	if !isNull(f.txID) {
		tx, err := d.uintField(f.txID, "source.txId")
		if err != nil {
			return err
		}
		p.txInt, p.hasTx = int64(tx), true
	}
	return nil
}

// mysqlPosition: Seq = (binlog file index, pos, row), the index being the
// numeric suffix of source.file ("mysql-bin.000003" → 3). TxID is the GTID
// when the server uses GTIDs.
func (d *Decoder) mysqlPosition(f *sourceFields, p *position) error {
	if isNull(f.file) {
		return errors.New("source.file is missing: the event has no binlog position")
	}
	if f.file.Type() != fastjson.TypeString {
		return fmt.Errorf("source.file: want a string, got %s", jsonTypeName(f.file))
	}
	file, _ := f.file.StringBytes()
	idx, ok := binlogIndex(file)
	if !ok {
		return fmt.Errorf("source.file %q has no numeric suffix (want e.g. mysql-bin.000003)", file)
	}
	pos, err := d.uintField(f.pos, "source.pos")
	if err != nil {
		return err
	}
	row, err := d.uintField(f.row, "source.row")
	if err != nil {
		return err
	}
	p.words, p.n = [3]uint64{idx, pos, row}, 3
	if !isNull(f.gtid) {
		if f.gtid.Type() != fastjson.TypeString {
			return fmt.Errorf("source.gtid: want a string, got %s", jsonTypeName(f.gtid))
		}
		p.gtid, _ = f.gtid.StringBytes()
	}
	return nil
}

// binlogIndex returns the trailing decimal digits of a binlog file name.
func binlogIndex(file []byte) (uint64, bool) {
	i := len(file)
	for i > 0 && file[i-1] >= '0' && file[i-1] <= '9' {
		i--
	}
	if i == len(file) || len(file)-i > 19 {
		return 0, false
	}
	var n uint64
	for _, c := range file[i:] {
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// uintField reads a required non-negative JSON integer.
func (d *Decoder) uintField(v *fastjson.Value, name string) (uint64, error) {
	if isNull(v) {
		return 0, fmt.Errorf("%s is missing: the event has no position", name)
	}
	if v.Type() != fastjson.TypeNumber {
		return 0, fmt.Errorf("%s: want an integer, got %s", name, jsonTypeName(v))
	}
	d.num = v.MarshalTo(d.num[:0])
	i, ok, overflow := parseJSONInt(d.num)
	if !ok || overflow || i < 0 {
		return 0, fmt.Errorf("%s: %s is not a non-negative 64-bit integer", name, d.num)
	}
	return uint64(i), nil
}

// intField reads a JSON integer.
func (d *Decoder) intField(v *fastjson.Value, name string) (int64, error) {
	if v.Type() != fastjson.TypeNumber {
		return 0, fmt.Errorf("%s: want an integer, got %s", name, jsonTypeName(v))
	}
	d.num = v.MarshalTo(d.num[:0])
	i, ok, overflow := parseJSONInt(d.num)
	if !ok || overflow {
		return 0, fmt.Errorf("%s: %s is not a 64-bit integer", name, d.num)
	}
	return i, nil
}

// sourceTs is source.ts_us when present (Debezium ≥ 2.6), else
// source.ts_ms × 1000: the source commit time in µs since the epoch.
func (d *Decoder) sourceTs(f *sourceFields) (int64, error) {
	if !isNull(f.tsUs) {
		return d.intField(f.tsUs, "source.ts_us")
	}
	if isNull(f.tsMs) {
		return 0, errors.New("source.ts_ms is missing")
	}
	ms, err := d.intField(f.tsMs, "source.ts_ms")
	if err != nil {
		return 0, err
	}
	us, ok := mulChecked(ms, 1000)
	if !ok {
		return 0, fmt.Errorf("source.ts_ms %d overflows µs", ms)
	}
	return us, nil
}

// parsePGSequence reads the PostgreSQL connector's source.sequence, the
// JSON text of a two-element array of decimal strings or nulls
// ("[\"23911600\",\"23911624\"]", "[null,\"23911624\"]"), and returns the
// first element (the last commit LSN), 0 when null.
func parsePGSequence(s []byte) (uint64, error) {
	var elems [2]uint64
	i := skipWS(s, 0)
	if i >= len(s) || s[i] != '[' {
		return 0, errors.New("want a JSON array")
	}
	i++
	for k := 0; k < 2; k++ {
		i = skipWS(s, i)
		if i >= len(s) {
			return 0, errors.New("truncated array")
		}
		switch {
		case s[i] == 'n':
			if len(s)-i < 4 || string(s[i:i+4]) != "null" {
				return 0, errors.New("invalid element")
			}
			i += 4
		case s[i] == '"':
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j == i+1 || j >= len(s) || s[j] != '"' {
				return 0, errors.New("element is not a decimal string")
			}
			n, ok := decimalUint(s[i+1 : j])
			if !ok {
				return 0, errors.New("element out of range")
			}
			elems[k] = n
			i = j + 1
		case s[i] >= '0' && s[i] <= '9':
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			n, ok := decimalUint(s[i:j])
			if !ok {
				return 0, errors.New("element out of range")
			}
			elems[k] = n
			i = j
		default:
			return 0, errors.New("element is not a string or null")
		}
		i = skipWS(s, i)
		if k == 0 {
			if i >= len(s) || s[i] != ',' {
				return 0, errors.New("want two elements")
			}
			i++
		}
	}
	if i >= len(s) || s[i] != ']' {
		return 0, errors.New("want exactly two elements")
	}
	if skipWS(s, i+1) != len(s) {
		return 0, errors.New("trailing data after the array")
	}
	return elems[0], nil
}

// decimalUint parses ASCII digits (at least one) as a uint64.
func decimalUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// snapshotMark maps source.snapshot (a string, or a boolean in some
// captures) to a cdc.SnapshotMark per its documentation. Unknown strings
// are an error rather than a guess.
func snapshotMark(v *fastjson.Value) (cdc.SnapshotMark, error) {
	if isNull(v) {
		return cdc.SnapshotNone, nil
	}
	switch v.Type() {
	case fastjson.TypeTrue:
		return cdc.SnapshotRow, nil
	case fastjson.TypeFalse:
		return cdc.SnapshotNone, nil
	case fastjson.TypeString:
		s, _ := v.StringBytes()
		switch string(s) {
		case "false", "":
			return cdc.SnapshotNone, nil
		case "true", "first", "first_in_data_collection", "last_in_data_collection":
			return cdc.SnapshotRow, nil
		case "last":
			return cdc.SnapshotLast, nil
		case "incremental":
			return cdc.SnapshotIncremental, nil
		}
		return 0, fmt.Errorf("source.snapshot %q is not a known snapshot marker", s)
	}
	return 0, fmt.Errorf("source.snapshot: want a string or boolean, got %s", jsonTypeName(v))
}
