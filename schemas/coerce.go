package schemas

import (
	"fmt"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/cdc/typing"
)

// Coerce converts a decoded value to column type t exactly, or returns an
// error saying why it does not fit: typing.Coerce (which states the
// accepted conversions) with its error prefixed "schemas: ", e.g.
// `schemas: cannot convert integer 4294967295 to int: out of int range`.
// The rules live in internal/cdc/typing so that internal/lake can apply
// them without importing this package.
func Coerce(v cdc.Value, t cdc.Type) (cdc.Value, error) {
	out, err := typing.Coerce(v, t)
	if err != nil {
		return cdc.Value{}, fmt.Errorf("schemas: %w", err)
	}
	return out, nil
}

// InferColumns returns the column list for events that carried no Connect
// schema: typing.InferColumns, which states the rules (the union of the
// images' columns in first-seen order, each typed from the values seen,
// every one Optional).
func InferColumns(events []*cdc.Event) []cdc.Column { return typing.InferColumns(events) }
