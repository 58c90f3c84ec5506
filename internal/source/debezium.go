package source

import (
	"fmt"
	"strconv"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// SourceVersion is the source.version of rendered events. Debezium writes
// its own version there; this value tells direct-load records apart from
// the connector's in bronze.
const SourceVersion = "lakemirror-direct-load"

// Renderer renders rows of one table as Debezium PostgreSQL change events
// (JsonConverter with schemas.enable=true), so that direct-load rows can
// be stored in bronze and decoded like real Debezium records. It renders
// the table's Connect schema once. It is safe for concurrent use.
type Renderer struct {
	info       TableInfo
	serverName string
	keyIdx     []int
	schema     []cdc.Column // info.ColumnList(), shared by the events Event returns
	collection string       // the data collection the decoder names
	prefix     []byte       // {"schema":…,"payload":{"before":null,"after":
	keySchema  []byte       // {"schema":…,"payload":
}

// NewRenderer returns the renderer for info's rows as written by a
// connector with topic.prefix serverName. It fails when info has no valid
// key columns.
func NewRenderer(info TableInfo, serverName string) (*Renderer, error) {
	keyIdx, err := info.keyIndexes()
	if err != nil {
		return nil, err
	}
	r := &Renderer{info: info, serverName: serverName, keyIdx: keyIdx, schema: info.ColumnList(),
		collection: cdc.DataCollection("postgresql", info.Database, info.Schema, info.Table)}
	r.prefix = append(r.prefix, `{"schema":`...)
	r.prefix = appendEnvelopeSchema(r.prefix, &r.info, serverName)
	r.prefix = append(r.prefix, `,"payload":{"before":null,"after":`...)
	r.keySchema = append(r.keySchema, `{"schema":`...)
	r.keySchema = appendKeySchema(r.keySchema, &r.info, keyIdx, serverName)
	r.keySchema = append(r.keySchema, `,"payload":`...)
	return r, nil
}

// RowToDebeziumJSON renders row (every column of info, as ReadChunk
// returns it) as the value of a Debezium PostgreSQL snapshot read: the
// {schema, payload} envelope with the Connect schema of every column (see
// the package doc for the encodings: Decimal as base64 unscaled bytes
// with scale and precision parameters, VariableScaleDecimal {scale,
// value}, ZonedTimestamp ISO strings in UTC, Date days, MicroTime/Time and
// MicroTimestamp/Timestamp as µs/ms integers, Uuid canonical strings,
// bytes base64, arrays as JSON arrays), op "r", before null, and a source
// block with connector "postgresql", name serverName, db, schema, table,
// snapshot "true" ("last" when last), lsn = lsn, sequence
// "[null,\"<lsn>\"]", txId and xmin null, and ts_ms/ts_us/ts_ns (also at
// the top level) from tsMicros (µs since the epoch, the read time).
//
// The schemas decoder reads it back to exactly the row's values, with
// Seq cdc.PostgresSeq(0, lsn), SourceTs tsMicros and Snapshot
// cdc.SnapshotRow (cdc.SnapshotLast when last). It fails when a value
// does not fit its column.
func RowToDebeziumJSON(info TableInfo, row *cdc.Row, lsn uint64, serverName string, tsMicros int64, last bool) ([]byte, error) {
	r, err := NewRenderer(info, serverName)
	if err != nil {
		return nil, err
	}
	return r.Value(row, lsn, tsMicros, last)
}

// KeyToDebeziumJSON renders the Kafka key Debezium writes with row's
// event: {schema, payload} with the key columns.
func KeyToDebeziumJSON(info TableInfo, row *cdc.Row, serverName string) ([]byte, error) {
	r, err := NewRenderer(info, serverName)
	if err != nil {
		return nil, err
	}
	return r.Key(row)
}

// Value renders row as RowToDebeziumJSON does.
func (r *Renderer) Value(row *cdc.Row, lsn uint64, tsMicros int64, last bool) ([]byte, error) {
	return r.ValueAt(row, 0, lsn, tsMicros, last)
}

// ValueAt renders row with an explicit position: source.sequence
// [commitLSN, lsn] (null for a 0 commitLSN) and source.lsn. Rendered as
// a blocking snapshot read, it decodes to cdc.PostgresSeq(0, lsn) when
// lsn is not 0 and to cdc.PostgresSeq(commitLSN, 0) otherwise
// (cdc.PostgresEventWords). A re-snapshot of a table that has
// been streamed before uses commitLSN P, lsn 0 for a snapshot at P: (P, 0)
// sorts after every change committed before the snapshot (their first
// word is below their commit LSN, below P), which (0, P) does not, so the
// re-snapshot repairs rows whose changes were lost; and below every
// change written after P (their first word is at least their own lsn).
// Changes written before P by transactions the snapshot did not see sort
// below (P, 0) too: the mirror lifts them (cdc.PostgresSnapshot.Lift).
func (r *Renderer) ValueAt(row *cdc.Row, commitLSN, lsn uint64, tsMicros int64, last bool) ([]byte, error) {
	b := make([]byte, 0, len(r.prefix)+512)
	b = append(b, r.prefix...)
	b = append(b, '{')
	for i := range r.info.Columns {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = r.appendField(b, row, i); err != nil {
			return nil, err
		}
	}
	b = append(b, `},"source":{"version":`...)
	b = appendJSONString(b, SourceVersion)
	b = append(b, `,"connector":"postgresql","name":`...)
	b = appendJSONString(b, r.serverName)
	b = append(b, `,"ts_ms":`...)
	b = strconv.AppendInt(b, floorDiv(tsMicros, 1000), 10)
	if last {
		b = append(b, `,"snapshot":"last","db":`...)
	} else {
		b = append(b, `,"snapshot":"true","db":`...)
	}
	b = appendJSONString(b, r.info.Database)
	lsnText := strconv.FormatUint(lsn, 10)
	b = append(b, `,"sequence":`...)
	if commitLSN == 0 {
		b = appendJSONString(b, `[null,"`+lsnText+`"]`)
	} else {
		b = appendJSONString(b, `["`+strconv.FormatUint(commitLSN, 10)+`","`+lsnText+`"]`)
	}
	b = appendTs(b, tsMicros)
	b = append(b, `,"schema":`...)
	b = appendJSONString(b, r.info.Schema)
	b = append(b, `,"table":`...)
	b = appendJSONString(b, r.info.Table)
	b = append(b, `,"txId":null,"lsn":`...)
	b = append(b, lsnText...)
	b = append(b, `,"xmin":null},"transaction":null,"op":"r","ts_ms":`...)
	b = strconv.AppendInt(b, floorDiv(tsMicros, 1000), 10)
	b = appendTs(b, tsMicros)
	return append(b, "}}"...), nil
}

// Event returns, without rendering it, the row change event the schemas
// decoder gives for the record ValueAt(row, commitLSN, lsn, tsMicros,
// last) renders, read from topic at offset (partition 0): op r (read),
// After row (the table's columns in order, as ReadChunk returns them;
// the event shares it), Key of the key columns, Seq as ValueAt states,
// SourceTs tsMicros, Snapshot cdc.SnapshotRow (cdc.SnapshotLast when
// last), Schema the table's columns (shared by every event of r), the
// data collection of the PostgreSQL table, no transaction and no server.
// A direct load that keeps no bronze needs no record, so it takes this
// instead of rendering and decoding (TestRendererEventMatchesDecoder
// checks the two equal on every supported type).
//
// Errors, as ValueAt's: a row that is not in the table's column order, or
// a value whose kind is not its column's (a decimal of another scale).
func (r *Renderer) Event(row *cdc.Row, commitLSN, lsn uint64, tsMicros int64, last bool, topic string, offset int64) (*cdc.Event, error) {
	if row == nil || row.Cols == nil || len(row.Vals) != len(r.info.Columns) || len(row.Cols.Names) != len(r.info.Columns) {
		return nil, fmt.Errorf("source: the row does not have the %d columns of %s", len(r.info.Columns), r.info.qualified())
	}
	for i := range r.info.Columns {
		ci := &r.info.Columns[i]
		if row.Cols.Names[i] != ci.Name {
			return nil, fmt.Errorf("source: the row's column %d is %q, want %q", i+1, row.Cols.Names[i], ci.Name)
		}
		if v := row.Vals[i]; v.Kind != cdc.KindNull && (v.Kind != ci.Type.Kind || v.Kind == cdc.KindDecimal && int(v.Scale) != int(ci.Type.Scale)) {
			return nil, fmt.Errorf("source: rendering column %q: a %s value (%s) holds a value of kind %d (scale %d), want %s", ci.Name, ci.Read, ci.PGType, v.Kind, v.Scale, ci.Type)
		}
	}
	k, err := cdc.KeyOf(row, r.info.Key)
	if err != nil {
		return nil, err
	}
	first, second := cdc.PostgresEventWords(commitLSN, lsn, true)
	mark := cdc.SnapshotRow
	if last {
		mark = cdc.SnapshotLast
	}
	return &cdc.Event{Op: cdc.OpRead, Seq: cdc.PostgresSeq(first, second), Key: k, After: row, SourceTs: tsMicros, Snapshot: mark,
		Collection: r.collection, Origin: cdc.Origin{Topic: topic, Offset: offset}, Schema: r.schema}, nil
}

// appendTs appends ,"ts_us":…,"ts_ns":… (ts_ns left out when it would
// overflow int64).
func appendTs(b []byte, us int64) []byte {
	b = append(b, `,"ts_us":`...)
	b = strconv.AppendInt(b, us, 10)
	if us <= 1<<63/1000-1 && us >= -(1<<63)/1000 {
		b = append(b, `,"ts_ns":`...)
		b = strconv.AppendInt(b, us*1000, 10)
	}
	return b
}

// Key renders the Kafka key of row's event.
func (r *Renderer) Key(row *cdc.Row) ([]byte, error) {
	b := make([]byte, 0, len(r.keySchema)+64)
	b = append(b, r.keySchema...)
	b = append(b, '{')
	for n, i := range r.keyIdx {
		if n > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = r.appendField(b, row, i); err != nil {
			return nil, err
		}
	}
	return append(b, "}}"...), nil
}

// appendField appends "name":value for column i of row.
func (r *Renderer) appendField(b []byte, row *cdc.Row, i int) ([]byte, error) {
	ci := &r.info.Columns[i]
	v, err := columnValue(row, i, ci.Name)
	if err != nil {
		return nil, err
	}
	b = appendJSONString(b, ci.Name)
	b = append(b, ':')
	if b, err = appendColumnValue(b, ci, v); err != nil {
		return nil, fmt.Errorf("source: rendering column %q: %w", ci.Name, err)
	}
	return b, nil
}

// columnValue finds column name in row: at position i when the row has
// the table's column order (as ReadChunk returns it), else by name.
func columnValue(row *cdc.Row, i int, name string) (cdc.Value, error) {
	if row == nil || row.Cols == nil {
		return cdc.Value{}, fmt.Errorf("source: no row to render")
	}
	if i < len(row.Vals) && i < len(row.Cols.Names) && row.Cols.Names[i] == name {
		return row.Vals[i], nil
	}
	if j := row.Cols.Index(name); j >= 0 && j < len(row.Vals) {
		return row.Vals[j], nil
	}
	return cdc.Value{}, fmt.Errorf("source: the row has no column %q", name)
}
