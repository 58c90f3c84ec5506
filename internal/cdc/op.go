package cdc

import "fmt"

// Op is a Debezium change operation code, as found in the envelope's "op"
// field (Debezium connector docs, "Change event values": c, u, d, r, t).
type Op byte

// The Debezium operation codes.
const (
	OpCreate   Op = 'c' // insert
	OpUpdate   Op = 'u' // update
	OpDelete   Op = 'd' // delete
	OpRead     Op = 'r' // source snapshot read
	OpTruncate Op = 't' // table truncate (no row image)
)

// ParseOp maps the envelope's op string to an Op. It returns an error for
// anything but "c", "u", "d", "r" and "t".
func ParseOp(s string) (Op, error) {
	if len(s) == 1 {
		switch op := Op(s[0]); op {
		case OpCreate, OpUpdate, OpDelete, OpRead, OpTruncate:
			return op, nil
		}
	}
	return 0, fmt.Errorf("cdc: unknown op %q (want c, u, d, r or t)", s)
}

// String returns the one-letter Debezium code.
func (o Op) String() string {
	if o == 0 {
		return ""
	}
	return string(rune(o))
}

// IsUpsert reports whether the op carries an after image that becomes the
// row's new state (create, update, source snapshot read).
func (o Op) IsUpsert() bool { return o == OpCreate || o == OpUpdate || o == OpRead }
