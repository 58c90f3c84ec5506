package lake

import (
	"fmt"

	"github.com/lakemirror/lakemirror/internal/sample"
)

// pgChange is a Debezium PostgreSQL change event of the orders table with
// the given images (JSON objects or "null") at WAL position lsn.
func pgChange(op, before, after string, lsn int) sample.Message {
	v := fmt.Sprintf(`{"before":%s,"after":%s,"source":{"version":"2.7.0.Final","connector":"postgresql","name":"pg","ts_ms":%d,"snapshot":"false","db":"db","sequence":"[null, \"%d\"]","schema":"public","table":"orders","txId":%d,"lsn":%d},"op":%q,"ts_ms":%d}`,
		before, after, 1767258000000+lsn, lsn, lsn, lsn, op, 1767258000000+lsn)
	return sample.Message{Value: []byte(v)}
}
