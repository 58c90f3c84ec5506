package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/cdc/typing"
)

// TableDefinition declares a source table's columns for records that
// carry no schema (JsonConverter schemas.enable=false), so that decimals,
// times and other typed columns are decoded exactly instead of inferred
// from JSON tokens. It is read from a JSON file (see LoadTableDefinition
// and schemas/examples/orders.table.json):
//
//	{
//	  "table": "inventory.orders",            // optional, informational
//	  "key": ["order_id"],                    // optional: primary-key columns, in order
//	  "columns": [
//	    {"name": "order_id", "type": "long", "nullable": false},
//	    {"name": "amount", "type": "decimal(10,2)"},
//	    {"name": "placed_at", "type": "timestamp", "source": "io.debezium.time.MicroTimestamp"},
//	    {"name": "tags", "type": "list<string>"}
//	  ]
//	}
//
// "type" is an Iceberg type name (Iceberg spec, "Primitive Types" and
// list): boolean, int, long, float, double, string, binary, decimal(P,S),
// date, time, timestamp, timestamptz, uuid, list<T> with a primitive T. A
// decimal with P > 38 is accepted and decodes to a string column holding
// the exact text (Iceberg decimals stop at 38 digits). "source" is
// optional: a Debezium/Connect logical type name (e.g.
// io.debezium.time.Timestamp: integers are ms; NanoTimestamp: ns;
// org.apache.kafka.connect.data.Decimal for a decimal column: strings are
// base64 unscaled bytes only, decimal.handling.mode=precise; "string":
// numeric text only, =string; without it a string that is both, such as
// "1234", is an error;
// io.debezium.data.geometry.Geometry for a binary column: {wkb,srid}
// objects; io.debezium.time.ZonedTime for a time column). "nullable"
// defaults to true. Unknown fields are an error.
type TableDefinition struct {
	Table      string
	KeyColumns []string
	Columns    []cdc.Column
}

// Options returns decoder options declaring the table's columns and key.
func (t *TableDefinition) Options() DecoderOptions {
	return DecoderOptions{KeyColumns: t.KeyColumns, Columns: t.Columns}
}

type tableDefFile struct {
	Table   string         `json:"table"`
	Key     []string       `json:"key"`
	Columns []tableDefColm `json:"columns"`
}

type tableDefColm struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Nullable *bool  `json:"nullable"`
	Source   string `json:"source"`
}

// LoadTableDefinition reads a table definition file. Errors name the file
// and the offending column.
func LoadTableDefinition(path string) (*TableDefinition, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("schemas: table definition: %w", err)
	}
	t, err := ParseTableDefinition(data)
	if err != nil {
		return nil, fmt.Errorf("schemas: table definition %s: %v", path, strings.TrimPrefix(err.Error(), "schemas: "))
	}
	return t, nil
}

// ParseTableDefinition parses the JSON form described on TableDefinition.
func ParseTableDefinition(data []byte) (*TableDefinition, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f tableDefFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("schemas: %v", err)
	}
	if len(f.Columns) == 0 {
		return nil, errors.New("schemas: no columns")
	}
	t := &TableDefinition{Table: f.Table, KeyColumns: f.Key}
	seen := map[string]bool{}
	for i, c := range f.Columns {
		if c.Name == "" {
			return nil, fmt.Errorf("schemas: column %d has no name", i+1)
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("schemas: duplicate column %q", c.Name)
		}
		seen[c.Name] = true
		typ, err := ParseType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("schemas: column %q: %v", c.Name, strings.TrimPrefix(err.Error(), "schemas: "))
		}
		optional := c.Nullable == nil || *c.Nullable
		t.Columns = append(t.Columns, cdc.Column{Name: c.Name, Type: typ, Optional: optional, Source: c.Source})
	}
	for _, k := range t.KeyColumns {
		if !seen[k] {
			return nil, fmt.Errorf("schemas: key column %q is not among the columns", k)
		}
	}
	return t, nil
}

// ParseType reads an Iceberg type name (as cdc.Type.String writes it):
// boolean, int, long, float, double, string, binary, decimal(P,S), date,
// time, timestamp, timestamptz, uuid, list<T>. Decimal precision may
// exceed 38 (see TableDefinition).
func ParseType(s string) (cdc.Type, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "boolean":
		return cdc.TypeBool, nil
	case "int":
		return cdc.TypeInt, nil
	case "long":
		return cdc.TypeLong, nil
	case "float":
		return cdc.TypeFloat, nil
	case "double":
		return cdc.TypeDouble, nil
	case "string":
		return cdc.TypeString, nil
	case "binary":
		return cdc.TypeBinary, nil
	case "date":
		return cdc.TypeDate, nil
	case "time":
		return cdc.TypeTime, nil
	case "timestamp":
		return cdc.TypeTimestamp, nil
	case "timestamptz":
		return cdc.TypeTimestampTZ, nil
	case "uuid":
		return cdc.TypeUUID, nil
	}
	if inner, ok := strings.CutPrefix(s, "decimal("); ok {
		inner, ok = strings.CutSuffix(inner, ")")
		p, sc, ok2 := strings.Cut(inner, ",")
		prec, err1 := strconv.Atoi(strings.TrimSpace(p))
		scale, err2 := strconv.Atoi(strings.TrimSpace(sc))
		if !ok || !ok2 || err1 != nil || err2 != nil || prec < 1 || prec > typing.MaxDecimalDigits || scale < 0 || scale > prec {
			return cdc.Type{}, fmt.Errorf("schemas: %q is not decimal(P,S) with 1 <= P <= %d and 0 <= S <= P", s, typing.MaxDecimalDigits)
		}
		return cdc.DecimalType(int16(prec), int16(scale)), nil
	}
	if inner, ok := strings.CutPrefix(s, "list<"); ok {
		if inner, ok = strings.CutSuffix(inner, ">"); ok {
			elem, err := ParseType(inner)
			if err != nil {
				return cdc.Type{}, err
			}
			if elem.Kind == cdc.KindList {
				return cdc.Type{}, fmt.Errorf("schemas: %q: lists of lists are not supported", s)
			}
			return cdc.ListType(elem), nil
		}
	}
	return cdc.Type{}, fmt.Errorf("schemas: unknown type %q (want boolean, int, long, float, double, string, binary, decimal(P,S), date, time, timestamp, timestamptz, uuid or list<T>)", s)
}
