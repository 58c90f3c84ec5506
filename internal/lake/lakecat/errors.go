package lakecat

import (
	"fmt"
	"strings"
)

// LayoutError is a layout the table cannot take: a column it does not
// have, or a transform its type does not allow. The table stops until the
// setting is changed (non-retryable for the caller).
type LayoutError struct {
	Table string
	Err   error
}

func (e *LayoutError) Error() string {
	return fmt.Sprintf("lake: layout of %s: %v (change the table's partition_by/sort_by setting)", e.Table, e.Err)
}

func (e *LayoutError) Unwrap() error { return e.Err }

// ReservedColumnError is a source column named like a column the pipeline
// adds to mirror and history (compared case-insensitively, in ASCII:
// Spark and Trino resolve names so) that is a key column, or that reached
// table creation (Prepare settles other such names first, see
// evolve.SettleReserved). Retrying does not help.
type ReservedColumnError struct {
	Column   string // the source column
	Reserved string // the system column it collides with
	Key      bool   // the column is one of the table's key columns
}

func (e *ReservedColumnError) Error() string {
	if e.Key {
		return fmt.Sprintf("lake: key column %q has the name of the system column %s that lakemirror adds to mirror and history; a key column cannot be left out: rename it at the source and mirror the table under a new name",
			e.Column, e.Reserved)
	}
	return fmt.Sprintf("lake: source column %q has the name of the system column %s that lakemirror adds to mirror and history (reserved: %s); the table cannot hold both",
		e.Column, e.Reserved, strings.Join(systemColumns, ", "))
}
