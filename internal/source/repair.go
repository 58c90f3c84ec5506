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
	b = appendJSONString(b, RepairVersion)
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
