package source

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// RepairVersion is the source.version of events rendered by a
// reconciliation repair (RepairValue): bronze tells them apart from the
// connector's and from direct loads.
const RepairVersion = "lakemirror-reconcile-repair"

// RepairValue renders a reconciliation repair of row at the source
// position pos as a Debezium event of the table's connector (PostgreSQL
// when pos has an LSN, MySQL when it has a binlog file): op "r" with the
// row as after image (the source's row read at pos), or op "d" with the
// row as before image (a ghost row: the mirror's last values of a key the
// source no longer has). The position decodes to pos.Seq: PostgreSQL
// source.sequence [P, 0] and lsn 0 (the re-snapshot position (P, 0));
// MySQL source.file, source.pos = pos − 1 and source.row 0. tsMicros is
// the read time (source.ts_ms/ts_us). Errors: a value that does not fit
// its column.
func (r *Renderer) RepairValue(row *cdc.Row, pos Position, op string, tsMicros int64) ([]byte, error) {
	if op != "r" && op != "d" {
		return nil, fmt.Errorf("source: repair op %q: want r or d", op)
	}
	return r.renderAt(row, pos, op, tsMicros, RepairVersion)
}

// GhostVersion is the source.version of the deletes a re-snapshot renders
// for its ghost rows (GhostDeleteValue).
const GhostVersion = "lakemirror-resnapshot-ghost"

// GhostDeleteValue renders the delete a PostgreSQL re-snapshot at LSN P
// makes of a ghost row (a live mirror row whose key the snapshot did not
// read): a Debezium delete, op "d", at source.sequence [P, 0] and lsn 0
// (it decodes to the re-snapshot position cdc.PostgresSeq(P, 0)), whose
// before image holds row's key columns and nulls elsewhere, as the
// connector sends a delete under REPLICA IDENTITY DEFAULT: the merge then
// keeps the row's last known values (docs/design.md rule 4), which may be
// newer than the mirror's if a late change arrives. row must hold the key
// columns (by name); its other columns are ignored. tsMicros is the
// re-snapshot's time (source.ts_ms/ts_us), µs since the epoch. Errors: a
// key column row lacks or whose value does not fit.
func (r *Renderer) GhostDeleteValue(row *cdc.Row, lsn uint64, tsMicros int64) ([]byte, error) {
	names := make([]string, len(r.info.Columns))
	vals := make([]cdc.Value, len(r.info.Columns))
	for i, c := range r.info.Columns {
		names[i], vals[i] = c.Name, cdc.Null()
	}
	for _, i := range r.keyIdx {
		v, err := columnValue(row, i, names[i])
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return r.renderAt(&cdc.Row{Cols: cdc.NewColumns(names), Vals: vals}, Position{LSN: lsn}, "d", tsMicros, GhostVersion)
}

// renderAt renders row as a Debezium event with op "r" (row as after
// image) or "d" (row as before image) at pos, with source.version
// version.
func (r *Renderer) renderAt(row *cdc.Row, pos Position, op string, tsMicros int64, version string) ([]byte, error) {
	head := bytes.TrimSuffix(r.prefix, []byte(`"before":null,"after":`))
	b := append([]byte(nil), head...)
	img := func(b []byte) ([]byte, error) {
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
		return append(b, '}'), nil
	}
	var err error
	if op == "r" {
		b = append(b, `"before":null,"after":`...)
		if b, err = img(b); err != nil {
			return nil, err
		}
	} else {
		b = append(b, `"before":`...)
		if b, err = img(b); err != nil {
			return nil, err
		}
		b = append(b, `,"after":null`...)
	}
	b = append(b, `,"source":{"version":`...)
	b = appendJSONString(b, version)
	if pos.File != "" {
		b = append(b, `,"connector":"mysql","name":`...)
	} else {
		b = append(b, `,"connector":"postgresql","name":`...)
	}
	b = appendJSONString(b, r.serverName)
	b = append(b, `,"ts_ms":`...)
	b = strconv.AppendInt(b, floorDiv(tsMicros, 1000), 10)
	b = appendTs(b, tsMicros)
	if op == "r" {
		b = append(b, `,"snapshot":"true","db":`...)
	} else {
		b = append(b, `,"snapshot":"false","db":`...)
	}
	b = appendJSONString(b, r.info.Database)
	b = append(b, `,"table":`...)
	b = appendJSONString(b, r.info.Table)
	if pos.File != "" {
		b = append(b, `,"file":`...)
		b = appendJSONString(b, pos.File)
		b = append(b, `,"pos":`...)
		b = strconv.AppendUint(b, pos.Pos-1, 10)
		b = append(b, `,"row":0,"server_id":0`...)
	} else {
		b = append(b, `,"schema":`...)
		b = appendJSONString(b, r.info.Schema)
		b = append(b, `,"sequence":`...)
		b = appendJSONString(b, `["`+strconv.FormatUint(pos.LSN, 10)+`","0"]`)
		b = append(b, `,"txId":null,"lsn":0,"xmin":null`...)
	}
	b = append(b, `},"transaction":null,"op":"`...)
	b = append(b, op...)
	b = append(b, `","ts_ms":`...)
	b = strconv.AppendInt(b, floorDiv(tsMicros, 1000), 10)
	b = appendTs(b, tsMicros)
	return append(b, "}}"...), nil
}
