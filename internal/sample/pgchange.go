package sample

import "fmt"

// PostgresChange is a hand-written Debezium PostgreSQL change event of an
// orders table, for tests that need exact sequences: op ("c", "u", "d",
// "r"), the before and after images as JSON objects (or "null"), at WAL
// position lsn, committed alone (source.sequence [null, lsn], so its
// `_seq` is (lsn, lsn)) at 2026-01-01T09:00:00Z + lsn ms. The Message has
// no Kafka key: give the decoder the key columns.
func PostgresChange(op, before, after string, lsn int) Message {
	v := fmt.Sprintf(`{"before":%s,"after":%s,"source":{"version":"2.7.0.Final","connector":"postgresql","name":"pg","ts_ms":%d,"snapshot":"false","db":"db","sequence":"[null, \"%d\"]","schema":"public","table":"orders","txId":%d,"lsn":%d},"op":%q,"ts_ms":%d}`,
		before, after, 1767258000000+lsn, lsn, lsn, lsn, op, 1767258000000+lsn)
	return Message{Value: []byte(v), Op: op[0]}
}
