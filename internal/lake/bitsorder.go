package lake

import "github.com/apache/iceberg-go/table"

// PropBitsOrder records on a mirror the byte order of its values of
// Debezium io.debezium.data.Bits columns (MySQL BIT(n), PostgreSQL bit(n)
// and varbit, n > 1; binary columns), which its history shares:
// BitsMostSignificantFirst, the database's own order, on every mirror
// created since lakemirror stores that order. A mirror without the
// property was created before: its rows, and the key index built from
// them, hold Debezium's order (least significant byte first), and its
// batches keep writing that order, for every Bits column it has or gains
// (schemas.DecoderOptions.BitsLeastSignificantFirst), so a BIT key still
// finds its rows. The property is set once, when the mirror is created;
// changing it by hand would mix both orders in one table.
const PropBitsOrder = "lakemirror.bits-order"

// BitsMostSignificantFirst is PropBitsOrder's value for the database's
// order: MySQL b'0000000100000010' (0x0102) is stored as the bytes 01 02.
const BitsMostSignificantFirst = "msb-first"

// BitsLeastSignificantFirst reports whether the mirror tbl stores Bits
// values in Debezium's byte order: it lacks PropBitsOrder (created before
// it existed) or records another value than BitsMostSignificantFirst.
// False when tbl is nil (the mirror does not exist yet: it will be created
// with BitsMostSignificantFirst).
func BitsLeastSignificantFirst(tbl *table.Table) bool {
	return tbl != nil && tbl.Properties()[PropBitsOrder] != BitsMostSignificantFirst
}
