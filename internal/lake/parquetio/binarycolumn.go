package parquetio

import (
	"fmt"
	"math"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A bronze file's raw Kafka values are most of the bytes a batch writes
// (about 570 bytes a record in the benchmark, 28 MB a batch of 50,000).
// Through an Arrow BinaryBuilder that column's buffer is allocated anew
// each batch and zeroed twice (by Go's allocator, then by the builder)
// before the values are copied over it. BinaryColumn copies the values
// once into a buffer kept between files instead (docs/design.md, "Write
// path").

// binaryScratch holds the value buffers of finished columns for reuse.
var binaryScratch sync.Pool // of *[]byte

// BinaryColumn is an Arrow binary array over a reused buffer: the values
// of n rows, value(i) nil for a NULL. release must be called once the
// array is no longer used (after the file is written); it hands the
// buffer back for the next column. Errors: more than 2 GiB of values (the
// int32 offsets of Arrow's binary type).
func BinaryColumn(n int, value func(i int) []byte) (arr arrow.Array, release func(), err error) {
	total := 0
	nulls := 0
	for i := 0; i < n; i++ {
		v := value(i)
		if v == nil {
			nulls++
		}
		total += len(v)
	}
	if total > math.MaxInt32 {
		return nil, nil, fmt.Errorf("lake: %d bytes of values in one column (at most %d)", total, math.MaxInt32)
	}
	bp, _ := binaryScratch.Get().(*[]byte)
	if bp == nil || cap(*bp) < total {
		b := make([]byte, 0, total+total/8)
		bp = &b
	}
	data := (*bp)[:0]
	offsets := make([]int32, n+1)
	var validity []byte
	if nulls > 0 {
		validity = make([]byte, bitutil.BytesForBits(int64(n)))
	}
	for i := 0; i < n; i++ {
		v := value(i)
		if v != nil && validity != nil {
			bitutil.SetBit(validity, i)
		}
		data = append(data, v...)
		offsets[i+1] = int32(len(data))
	}
	var vbuf *memory.Buffer
	if validity != nil {
		vbuf = memory.NewBufferBytes(validity)
	}
	d := array.NewData(arrow.BinaryTypes.Binary, n,
		[]*memory.Buffer{vbuf, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), memory.NewBufferBytes(data)}, nil, nulls, 0)
	arr = array.NewBinaryData(d)
	d.Release()
	*bp = data
	return arr, func() {
		arr.Release()
		binaryScratch.Put(bp)
	}, nil
}
