package source

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// keyArg returns the query argument for a key value and the SQL type the
// parameter is sent as (the value's own wire type; the query then casts it
// to the column's type). Every kind a key column can hold round-trips
// exactly: strings (text, enum labels, jsonb text, a numeric's exact text)
// go as text and are cast by PostgreSQL's input function.
func keyArg(v cdc.Value) (any, string, error) {
	switch v.Kind {
	case cdc.KindBool:
		return v.I != 0, "bool", nil
	case cdc.KindInt:
		return v.I, "int8", nil
	case cdc.KindFloat:
		return v.Float64(), "float8", nil
	case cdc.KindString:
		return v.S, "text", nil
	case cdc.KindBytes:
		return []byte(v.S), "bytea", nil
	case cdc.KindDecimal:
		u, err := unscaledOf(v)
		if err != nil {
			return nil, "", err
		}
		return pgtype.Numeric{Int: u, Exp: -int32(v.Scale), Valid: true}, "numeric", nil
	case cdc.KindUUID:
		if len(v.S) != 16 {
			return nil, "", fmt.Errorf("uuid of %d bytes", len(v.S))
		}
		var u pgtype.UUID
		copy(u.Bytes[:], v.S)
		u.Valid = true
		return u, "uuid", nil
	case cdc.KindDate:
		return pgtype.Date{Time: time.Unix(v.I*86400, 0).UTC(), Valid: true}, "date", nil
	case cdc.KindTime:
		return pgtype.Time{Microseconds: v.I, Valid: true}, "time", nil
	case cdc.KindTimestamp:
		return pgtype.Timestamp{Time: time.UnixMicro(v.I).UTC(), Valid: true}, "timestamp", nil
	case cdc.KindTimestampTZ:
		return pgtype.Timestamptz{Time: time.UnixMicro(v.I).UTC(), Valid: true}, "timestamptz", nil
	}
	return nil, "", fmt.Errorf("a key value of kind %d cannot be a query argument", v.Kind)
}
