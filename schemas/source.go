package schemas

import (
	"strconv"

	"github.com/valyala/fastjson"
)

// The source block of a change event, read into a wire-neutral form so
// that JSON envelopes, Avro envelopes and flattened records (whose
// ExtractNewRecordState add.fields carry the same fields as __lsn,
// __source_ts_ms, ...) share one position reader (position.go).

// svType is the type of one source field as received.
type svType uint8

const (
	svAbsent svType = iota
	svNull
	svString
	svNumber
	svTrue
	svFalse
	svOther // object or array
	svText  // header text: read as a string or as a number
)

// sval is one source field: its type, its text (the string's bytes, or
// the number's JSON text) and its name for error messages
// ("source.lsn", "__lsn").
type sval struct {
	t    svType
	text []byte
	name string
}

func (v *sval) missing() bool { return v.t == svAbsent || v.t == svNull }

func (v *sval) isString() bool { return v.t == svString || v.t == svText }

// typeName names the type like jsonTypeName.
func (v *sval) typeName() string {
	switch v.t {
	case svString:
		return "a string"
	case svNumber:
		return "a number"
	case svTrue, svFalse:
		return "a boolean"
	case svOther:
		return "an object or array"
	case svText:
		return "text"
	}
	return "null"
}

// The source fields the decoder reads (Debezium connector docs, "Change
// event values" → source metadata, per connector; total_order comes from
// the envelope's transaction block).
const (
	sfConnector = iota
	sfTsMs
	sfTsUs
	sfSnapshot
	sfTxID
	sfLsn       // PostgreSQL
	sfSequence  // PostgreSQL
	sfFile      // MySQL
	sfPos       // MySQL
	sfRow       // MySQL
	sfGtid      // MySQL
	sfServerID  // MySQL
	sfCommitLSN // SQL Server
	sfChangeLSN // SQL Server
	sfSerialNo  // SQL Server
	sfScn       // Oracle
	sfCommitScn // Oracle
	sfRsID      // Oracle
	sfSsn       // Oracle
	sfLcrPos    // Oracle, XStream adapter
	sfDB        // the source table's database (data collection, cdc.DataCollection)
	sfSchema    // its schema
	sfTable     // its name
	sfTxOrder   // transaction.total_order
	sfTxDCOrder // transaction.data_collection_order
	sfEnvTsMs   // the envelope's ts_ms: when the connector processed the event
	sfEnvTsUs   // the envelope's ts_us
	sfCount
)

var sourceFieldNames = [sfCount]string{
	"connector", "ts_ms", "ts_us", "snapshot", "txId", "lsn", "sequence", "file", "pos", "row", "gtid", "server_id",
	"commit_lsn", "change_lsn", "event_serial_no", "scn", "commit_scn", "rs_id", "ssn", "lcr_position", "db", "schema", "table", "total_order",
	"data_collection_order", "ts_ms", "ts_us",
}

// envelopeNames are the fields' names in an envelope's source block.
var envelopeNames = func() (n [sfCount]string) {
	for i, f := range sourceFieldNames {
		n[i] = "source." + f
	}
	n[sfTxOrder] = "transaction.total_order"
	n[sfTxDCOrder] = "transaction.data_collection_order"
	n[sfEnvTsMs], n[sfEnvTsUs] = "ts_ms", "ts_us"
	return n
}()

// sourceFieldIndex maps a source block field name to its slot, or -1.
func sourceFieldIndex(name []byte) int {
	switch string(name) {
	case "connector":
		return sfConnector
	case "ts_ms":
		return sfTsMs
	case "ts_us":
		return sfTsUs
	case "snapshot":
		return sfSnapshot
	case "txId":
		return sfTxID
	case "lsn":
		return sfLsn
	case "sequence":
		return sfSequence
	case "file":
		return sfFile
	case "pos":
		return sfPos
	case "row":
		return sfRow
	case "gtid":
		return sfGtid
	case "server_id":
		return sfServerID
	case "commit_lsn":
		return sfCommitLSN
	case "change_lsn":
		return sfChangeLSN
	case "event_serial_no":
		return sfSerialNo
	case "scn":
		return sfScn
	case "commit_scn":
		return sfCommitScn
	case "rs_id":
		return sfRsID
	case "ssn":
		return sfSsn
	case "lcr_position":
		return sfLcrPos
	case "db":
		return sfDB
	case "schema":
		return sfSchema
	case "table":
		return sfTable
	}
	return -1
}

// sourceVals holds the source fields of one event.
type sourceVals struct {
	v     [sfCount]sval
	named *[sfCount]string // the names the fields carry
}

// reset marks every field absent and names them. Only the types are
// written per event (text is meaningful only when the type says so), so
// resetting writes no pointers.
func (sv *sourceVals) reset(names *[sfCount]string) {
	if sv.named != names {
		for i := range sv.v {
			sv.v[i].name = names[i]
		}
		sv.named = names
	}
	for i := range sv.v {
		sv.v[i].t = svAbsent
	}
}

// setJSON stores a JSON value in s (keeping its name); text is copied
// into the decoder's source arena for numbers and aliases parser memory
// for strings (both valid until the next record).
func (d *Decoder) setJSON(s *sval, v *fastjson.Value) {
	switch v.Type() {
	case fastjson.TypeNull:
		s.t = svNull
	case fastjson.TypeString:
		s.t = svString
		s.text, _ = v.StringBytes()
	case fastjson.TypeNumber:
		s.t = svNumber
		start := len(d.sarena)
		d.sarena = v.MarshalTo(d.sarena)
		s.text = d.sarena[start:len(d.sarena):len(d.sarena)]
	case fastjson.TypeTrue:
		s.t = svTrue
	case fastjson.TypeFalse:
		s.t = svFalse
	default:
		s.t = svOther
	}
}

// setInt stores an integer (Avro int/long) in s.
func (d *Decoder) setInt(s *sval, n int64) {
	start := len(d.sarena)
	d.sarena = strconv.AppendInt(d.sarena, n, 10)
	s.t, s.text = svNumber, d.sarena[start:len(d.sarena):len(d.sarena)]
}

// setText stores text of the given type in s (copied).
func (d *Decoder) setText(s *sval, t svType, b []byte) {
	start := len(d.sarena)
	d.sarena = append(d.sarena, b...)
	s.t, s.text = t, d.sarena[start:len(d.sarena):len(d.sarena)]
}

// readJSONSource fills sv from an envelope's source object and its
// transaction block (may be nil).
func (d *Decoder) readJSONSource(sv *sourceVals, src *fastjson.Object, tx, tsMs, tsUs *fastjson.Value) {
	sv.reset(&envelopeNames)
	src.Visit(func(k []byte, v *fastjson.Value) {
		if i := sourceFieldIndex(k); i >= 0 {
			d.setJSON(&sv.v[i], v)
		}
	})
	if tx != nil && tx.Type() == fastjson.TypeObject {
		if o := tx.Get("total_order"); o != nil {
			d.setJSON(&sv.v[sfTxOrder], o)
		}
		if o := tx.Get("data_collection_order"); o != nil {
			d.setJSON(&sv.v[sfTxDCOrder], o)
		}
	}
	if tsMs != nil {
		d.setJSON(&sv.v[sfEnvTsMs], tsMs)
	}
	if tsUs != nil {
		d.setJSON(&sv.v[sfEnvTsUs], tsUs)
	}
}
