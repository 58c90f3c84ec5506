package source

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrDefinition is matched (errors.Is) by every error that says the source
// table cannot be read as asked: it does not exist or is not a table, a
// column type is not supported, there is no usable key, the DSN is
// malformed, or PostgreSQL refused the statement for a reason that stays
// until someone changes the database or the table spec (SQLSTATE class 28,
// invalid authorization, or 42, syntax error or access rule violation: a
// dropped table or column, a missing privilege). Retrying cannot help.
//
// Errors of Open, Describe and ReadChunk that do not match it are failures
// to talk to the database (connection refused or lost, a timeout, the
// server restarting or in recovery, a serialization failure): retrying can
// succeed, and callers should.
var ErrDefinition = errors.New("source: the table cannot be read as asked")

// definitionError is an error whose text is its message and that matches
// ErrDefinition.
type definitionError struct{ msg string }

func (e *definitionError) Error() string        { return e.msg }
func (e *definitionError) Is(target error) bool { return target == ErrDefinition }

// definition returns a definition error with a formatted message (no
// wrapped cause: the message says everything).
func definition(format string, args ...any) error {
	return &definitionError{msg: fmt.Sprintf(format, args...)}
}

// IsDefinition reports whether err says the source cannot be read as
// asked (see ErrDefinition): it matches ErrDefinition, or it wraps a
// PostgreSQL error of SQLSTATE class 28 or 42.
func IsDefinition(err error) bool {
	if errors.Is(err, ErrDefinition) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && len(pe.Code) == 5 {
		switch pe.Code[:2] {
		case "28", "42":
			return true
		}
	}
	return false
}
