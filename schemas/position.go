package schemas

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/cdc/typing"
)

// The "source" block, read by plain functions (no decoder state): where the event sits in the source log (the `_seq`
// of docs/design.md, rule 1), when it was committed, whether it is a snapshot
// read, and its transaction. Field names and meanings follow the Debezium
// connector docs, "Change event values" → source metadata, for the
// PostgreSQL, MySQL/MariaDB, SQL Server and Oracle connectors; the word
// layouts and why they order changes are documented on cdc.PostgresSeq,
// cdc.MySQLSeq, cdc.SQLServerSeq and cdc.OracleSeq.

// position is what the decoder takes from the source block.
// maxSeqWords is the most words a position has: an Oracle XStream
// position's six and its LCR position's (cdc.OracleLCRSeq).
const maxSeqWords = 6 + cdc.MaxOracleLCRBytes/8

type position struct {
	words [maxSeqWords]uint64 // Seq words, most significant first
	n     int                 // number of words used
	ts    int64               // source commit time, µs since the epoch
	snap  cdc.SnapshotMark
	tx    []byte // transaction id text (aliases the source values)
	// pg: a PostgreSQL position, words (lastCommitLsn or 0, lsn);
	// seqBytes applies cdc.PostgresEventWords.
	pg bool
	// server: MySQL and MariaDB source.server_id (0: absent, or a snapshot
	// read)
	server uint64
	// order: the transaction block's data_collection_order (0: absent or
	// null; cdc.Event.TxOrder)
	order int64
	// conn is the connector (connectorName); db, schema and table the
	// source block's, when strings (alias the source values): the event's
	// data collection (Decoder.collection)
	conn              string
	db, schema, table []byte
}

// Connector names as in source.connector.
const (
	connPostgres  = "postgresql"
	connMySQL     = "mysql"
	connMariaDB   = "mariadb"
	connSQLServer = "sqlserver"
	connOracle    = "oracle"
)

// readSource decodes an envelope's source block values. Every change and
// truncate needs a position: a missing or mistyped position field is an
// error, never a zero Seq.
func readSource(sv *sourceVals) (position, error) {
	c := &sv.v[sfConnector]
	if c.missing() {
		return position{}, errors.New("source.connector is missing: cannot tell how to read the position")
	}
	if c.t != svString {
		return position{}, fmt.Errorf("source.connector: want a string, got %s", c.typeName())
	}
	return sourcePosition(sv, connectorName(c.text), true)
}

// connectorName returns the connector constant for b without allocating.
func connectorName(b []byte) string {
	switch string(b) {
	case connPostgres:
		return connPostgres
	case connMySQL:
		return connMySQL
	case connMariaDB:
		return connMariaDB
	case connSQLServer:
		return connSQLServer
	case connOracle:
		return connOracle
	}
	return string(b)
}

// sourcePosition reads the position of connector conn, the commit time
// (required when requireTs) and the snapshot mark.
func sourcePosition(sv *sourceVals, conn string, requireTs bool) (position, error) {
	var p position
	var err error
	switch conn {
	case connPostgres:
		err = postgresPosition(sv, &p)
	case connMySQL, connMariaDB:
		err = mysqlPosition(sv, &p)
	case connSQLServer:
		err = sqlServerPosition(sv, &p)
	case connOracle:
		err = oraclePosition(sv, &p)
	default:
		return p, fmt.Errorf("source.connector %q is not supported (supported: postgresql, mysql, mariadb, sqlserver, oracle); its position cannot be ordered", conn)
	}
	if err != nil {
		return p, err
	}
	if p.ts, err = sourceTs(sv, requireTs); err != nil {
		return p, err
	}
	if p.snap, err = snapshotMark(&sv.v[sfSnapshot]); err != nil {
		return p, err
	}
	if p.order, err = orderField(&sv.v[sfTxDCOrder]); err != nil {
		return p, err
	}
	p.conn = conn
	if v := &sv.v[sfDB]; v.isString() {
		p.db = v.text
	}
	if v := &sv.v[sfSchema]; v.isString() {
		p.schema = v.text
	}
	if v := &sv.v[sfTable]; v.isString() {
		p.table = v.text
	}
	return p, nil
}

// orderField reads the transaction block's data_collection_order
// (Debezium docs, "Transaction metadata": int64, from 1, the event's
// place among its transaction's events of its data collection): 0 when
// absent or null; a JSON number, header text or a decimal string (the
// docs' examples quote it) otherwise. Errors: another type, a value not a
// positive 63-bit integer.
func orderField(v *sval) (int64, error) {
	if v.missing() {
		return 0, nil
	}
	if v.t != svNumber && v.t != svText && v.t != svString {
		return 0, fmt.Errorf("%s: want an integer, got %s", v.name, v.typeName())
	}
	i, ok, overflow := parseJSONInt(v.text)
	if !ok || overflow || i < 1 {
		return 0, fmt.Errorf("%s: %s is not a positive 64-bit integer", v.name, v.text)
	}
	return i, nil
}

// postgresPosition reads source.lsn (or, when it is null, the second
// element of source.sequence), the first element of source.sequence
// (lastCommitLsn, a JSON-encoded string holding [lastCommitLsn, lsn] as
// strings or nulls, Debezium ≥ 1.5) and source.txId (decimal). seqBytes
// turns them into the Seq by cdc.PostgresEventWords once the op is known.
// Errors: no lsn in either field, a malformed sequence, a non-integer lsn
// or txId.
func postgresPosition(sv *sourceVals, p *position) error {
	var commit, seqLsn uint64
	var hasSeqLsn bool
	if seq := &sv.v[sfSequence]; !seq.missing() {
		if !seq.isString() {
			return fmt.Errorf("%s: want a JSON-encoded string, got %s", seq.name, seq.typeName())
		}
		var err error
		if commit, _, seqLsn, hasSeqLsn, err = parsePGSequence(seq.text); err != nil {
			return fmt.Errorf("%s %q: %v", seq.name, seq.text, err)
		}
	}
	var lsn uint64
	if l := &sv.v[sfLsn]; !l.missing() || !hasSeqLsn {
		var err error
		if lsn, err = uintField(l); err != nil {
			return err
		}
	} else {
		lsn = seqLsn
	}
	p.words[0], p.words[1], p.n, p.pg = commit, lsn, 2, true
	if tx := &sv.v[sfTxID]; !tx.missing() {
		if _, err := uintField(tx); err != nil {
			return err
		}
		p.tx = tx.text
	}
	return nil
}

// mysqlPosition: Seq = (binlog file index, pos, row), the index being the
// numeric suffix of source.file ("mysql-bin.000003" → 3). TxID is the GTID
// when the server uses GTIDs; source.server_id is kept for
// cdc.Event.SourceServer.
func mysqlPosition(sv *sourceVals, p *position) error {
	f := &sv.v[sfFile]
	if f.missing() {
		return fmt.Errorf("%s is missing: the event has no binlog position", f.name)
	}
	if !f.isString() {
		return fmt.Errorf("%s: want a string, got %s", f.name, f.typeName())
	}
	idx, ok := binlogIndex(f.text)
	if !ok {
		return fmt.Errorf("%s %q has no numeric suffix (want e.g. mysql-bin.000003)", f.name, f.text)
	}
	pos, err := uintField(&sv.v[sfPos])
	if err != nil {
		return err
	}
	row, err := uintField(&sv.v[sfRow])
	if err != nil {
		return err
	}
	p.words[0], p.words[1], p.words[2], p.n = idx, pos, row, 3
	if s := &sv.v[sfServerID]; !s.missing() {
		if p.server, err = uintField(s); err != nil {
			return err
		}
	}
	if g := &sv.v[sfGtid]; !g.missing() {
		if !g.isString() {
			return fmt.Errorf("%s: want a string, got %s", g.name, g.typeName())
		}
		p.tx = g.text
	}
	return nil
}

// sqlServerPosition: Seq = (commit_lsn, change_lsn, event_serial_no), each
// LSN as two words (cdc.SQLServerSeq). Snapshot reads carry only
// commit_lsn; a streamed change without change_lsn is an error.
func sqlServerPosition(sv *sourceVals, p *position) error {
	commit, err := lsnField(&sv.v[sfCommitLSN])
	if err != nil {
		return err
	}
	var change cdc.SQLServerLSN
	var serial uint64
	snap, _ := snapshotMark(&sv.v[sfSnapshot])
	if c := &sv.v[sfChangeLSN]; !c.missing() || snap == cdc.SnapshotNone {
		if change, err = lsnField(c); err != nil {
			return err
		}
	}
	if s := &sv.v[sfSerialNo]; !s.missing() {
		if serial, err = uintField(s); err != nil {
			return err
		}
	}
	w := cdc.SQLServerSeq(commit, change, serial).Words()
	copy(p.words[:], w)
	p.n = len(w)
	return nil
}

// lsnField reads a SQL Server LSN string ("0000002b:00000588:0003").
func lsnField(v *sval) (cdc.SQLServerLSN, error) {
	if v.missing() {
		return cdc.SQLServerLSN{}, fmt.Errorf("%s is missing: the event has no position", v.name)
	}
	if !v.isString() {
		return cdc.SQLServerLSN{}, fmt.Errorf("%s: want an LSN string, got %s", v.name, v.typeName())
	}
	l, err := cdc.ParseSQLServerLSN(string(v.text))
	if err != nil {
		return cdc.SQLServerLSN{}, fmt.Errorf("%s: %v", v.name, strings.TrimPrefix(err.Error(), "cdc: "))
	}
	return l, nil
}

// oraclePosition: Seq = (commit_scn, scn, rs_id, ssn, transaction
// total_order) (cdc.OracleSeq), followed by source.lcr_position's bytes
// when the XStream adapter sets it (cdc.OracleLCRSeq). scn is required;
// commit_scn defaults to scn (snapshot reads have none); rs_id, ssn and
// total_order to 0. TxID is source.txId.
func oraclePosition(sv *sourceVals, p *position) error {
	scn, err := scnField(&sv.v[sfScn])
	if err != nil {
		return err
	}
	commit := scn
	if c := &sv.v[sfCommitScn]; !c.missing() {
		if commit, err = scnField(c); err != nil {
			return err
		}
	}
	var rs cdc.OracleRSID
	if r := &sv.v[sfRsID]; !r.missing() {
		if !r.isString() {
			return fmt.Errorf("%s: want a string, got %s", r.name, r.typeName())
		}
		if rs, err = cdc.ParseOracleRSID(string(r.text)); err != nil {
			return fmt.Errorf("%s: %v", r.name, strings.TrimPrefix(err.Error(), "cdc: "))
		}
	}
	var ssn, order uint64
	if s := &sv.v[sfSsn]; !s.missing() {
		if ssn, err = uintField(s); err != nil {
			return err
		}
	}
	if o := &sv.v[sfTxOrder]; !o.missing() {
		if order, err = uintField(o); err != nil {
			return err
		}
	}
	seq := cdc.OracleSeq(commit, scn, rs, ssn, order)
	if l := &sv.v[sfLcrPos]; !l.missing() {
		if !l.isString() {
			return fmt.Errorf("%s: want a hex string, got %s", l.name, l.typeName())
		}
		raw, err := hex.DecodeString(string(l.text))
		if err == nil {
			seq, err = cdc.OracleLCRSeq(commit, scn, order, raw)
		}
		if err != nil {
			return fmt.Errorf("%s %q: %v", l.name, l.text, strings.TrimPrefix(err.Error(), "cdc: "))
		}
	}
	w := seq.Words()
	copy(p.words[:], w)
	p.n = len(w)
	if tx := &sv.v[sfTxID]; !tx.missing() && tx.isString() {
		p.tx = tx.text
	}
	return nil
}

// scnField reads an Oracle SCN: a decimal string (Debezium writes SCNs as
// strings), or a number.
func scnField(v *sval) (uint64, error) {
	if v.missing() {
		return 0, fmt.Errorf("%s is missing: the event has no position", v.name)
	}
	if v.t != svString && v.t != svNumber && v.t != svText {
		return 0, fmt.Errorf("%s: want a decimal string, got %s", v.name, v.typeName())
	}
	n, ok := decimalUint(v.text)
	if !ok {
		return 0, fmt.Errorf("%s: %q is not a non-negative 64-bit integer", v.name, v.text)
	}
	return n, nil
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

// uintField reads a required non-negative integer (a JSON number, or
// header text).
func uintField(v *sval) (uint64, error) {
	if v.missing() {
		return 0, fmt.Errorf("%s is missing: the event has no position", v.name)
	}
	if v.t != svNumber && v.t != svText {
		return 0, fmt.Errorf("%s: want an integer, got %s", v.name, v.typeName())
	}
	i, ok, overflow := parseJSONInt(v.text)
	if !ok || overflow || i < 0 {
		return 0, fmt.Errorf("%s: %s is not a non-negative 64-bit integer", v.name, v.text)
	}
	return uint64(i), nil
}

// intField reads an integer.
func intField(v *sval) (int64, error) {
	if v.t != svNumber && v.t != svText {
		return 0, fmt.Errorf("%s: want an integer, got %s", v.name, v.typeName())
	}
	i, ok, overflow := parseJSONInt(v.text)
	if !ok || overflow {
		return 0, fmt.Errorf("%s: %s is not a 64-bit integer", v.name, v.text)
	}
	return i, nil
}

// sourceTs is source.ts_us when present (Debezium ≥ 2.6), else
// source.ts_ms × 1000: the source commit time in µs since the epoch. A
// source time of 0 means unknown (MySQL connectors before 2.x send ts_ms 0
// for source snapshot reads): it, and a missing one in an envelope that
// has its own time, falls back to the envelope's ts_us or ts_ms (when the
// connector processed the event), so history versions still get a
// _valid_from. When no time is present it is an error if required, else 0
// (unknown).
func sourceTs(sv *sourceVals, required bool) (int64, error) {
	ts, found, err := timeField(&sv.v[sfTsUs], &sv.v[sfTsMs])
	if err != nil {
		return 0, err
	}
	if ts == 0 {
		if env, envFound, err := timeField(&sv.v[sfEnvTsUs], &sv.v[sfEnvTsMs]); err == nil && envFound {
			return env, nil
		}
	}
	if !found && required {
		return 0, fmt.Errorf("%s is missing", sv.v[sfTsMs].name)
	}
	return ts, nil
}

// timeField reads a time given in µs (us) or, when us is missing, in ms:
// µs since the epoch, and whether either was present.
func timeField(us, ms *sval) (int64, bool, error) {
	if !us.missing() {
		v, err := intField(us)
		return v, err == nil, err
	}
	if ms.missing() {
		return 0, false, nil
	}
	v, err := intField(ms)
	if err != nil {
		return 0, false, err
	}
	out, ok := typing.MulChecked(v, 1000)
	if !ok {
		return 0, false, fmt.Errorf("%s %d overflows µs", ms.name, v)
	}
	return out, true, nil
}

// parsePGSequence reads the PostgreSQL connector's source.sequence, the
// JSON text of a two-element array of decimal strings or nulls
// ("[\"23911600\",\"23911624\"]", "[null,\"23911624\"]"), and returns the
// first element (the last commit LSN) and the second (the lsn), each with
// whether it was present (false for null).
func parsePGSequence(s []byte) (commit uint64, hasCommit bool, lsn uint64, hasLsn bool, err error) {
	var elems [2]uint64
	var has [2]bool
	i := skipWS(s, 0)
	if i >= len(s) || s[i] != '[' {
		return 0, false, 0, false, errors.New("want a JSON array")
	}
	i++
	for k := 0; k < 2; k++ {
		i = skipWS(s, i)
		if i >= len(s) {
			return 0, false, 0, false, errors.New("truncated array")
		}
		switch {
		case s[i] == 'n':
			if len(s)-i < 4 || string(s[i:i+4]) != "null" {
				return 0, false, 0, false, errors.New("invalid element")
			}
			i += 4
		case s[i] == '"':
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j == i+1 || j >= len(s) || s[j] != '"' {
				return 0, false, 0, false, errors.New("element is not a decimal string")
			}
			n, ok := decimalUint(s[i+1 : j])
			if !ok {
				return 0, false, 0, false, errors.New("element out of range")
			}
			elems[k], has[k] = n, true
			i = j + 1
		case s[i] >= '0' && s[i] <= '9':
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			n, ok := decimalUint(s[i:j])
			if !ok {
				return 0, false, 0, false, errors.New("element out of range")
			}
			elems[k], has[k] = n, true
			i = j
		default:
			return 0, false, 0, false, errors.New("element is not a string or null")
		}
		i = skipWS(s, i)
		if k == 0 {
			if i >= len(s) || s[i] != ',' {
				return 0, false, 0, false, errors.New("want two elements")
			}
			i++
		}
	}
	if i >= len(s) || s[i] != ']' {
		return 0, false, 0, false, errors.New("want exactly two elements")
	}
	if skipWS(s, i+1) != len(s) {
		return 0, false, 0, false, errors.New("trailing data after the array")
	}
	return elems[0], has[0], elems[1], has[1], nil
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
func snapshotMark(v *sval) (cdc.SnapshotMark, error) {
	switch v.t {
	case svAbsent, svNull:
		return cdc.SnapshotNone, nil
	case svTrue:
		return cdc.SnapshotRow, nil
	case svFalse:
		return cdc.SnapshotNone, nil
	case svString, svText:
		switch string(v.text) {
		case "false", "":
			return cdc.SnapshotNone, nil
		case "true", "first", "first_in_data_collection":
			return cdc.SnapshotRow, nil
		case "last", "last_in_data_collection":
			// "last" ends the connector's whole source snapshot;
			// "last_in_data_collection" ends this table's, when other
			// tables follow it (Debezium's SnapshotRecord): for the one
			// table a topic holds, both are its last read
			return cdc.SnapshotLast, nil
		case "incremental":
			return cdc.SnapshotIncremental, nil
		}
		return 0, fmt.Errorf("%s %q is not a known snapshot marker", v.name, v.text)
	}
	return 0, fmt.Errorf("%s: want a string or boolean, got %s", v.name, v.typeName())
}
