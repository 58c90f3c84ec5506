package parquetio

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Timestamp converts µs since the epoch to an Arrow timestamp[us].
func Timestamp(micros int64) arrow.Timestamp { return arrow.Timestamp(micros) }

// AppendSourceTs appends a source commit time, µs since the epoch; 0 means
// the source gave none (Debezium MySQL source snapshot reads carry
// source.ts_ms 0) and is stored as NULL.
func AppendSourceTs(b *array.TimestampBuilder, micros int64) {
	if micros == 0 {
		b.AppendNull()
		return
	}
	b.Append(arrow.Timestamp(micros))
}
