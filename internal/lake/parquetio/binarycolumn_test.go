package parquetio

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestBinaryColumn: the array holds exactly the values (NULL for nil, an
// empty value for a non-nil empty slice), also when its buffer is one a
// released column left behind, smaller or larger than needed.
func TestBinaryColumn(t *testing.T) {
	for round, n := range []int{0, 1, 5, 1000, 3, 2000} {
		vals := make([][]byte, n)
		for i := range vals {
			switch {
			case i%7 == 3:
				vals[i] = nil
			case i%7 == 5:
				vals[i] = []byte{}
			default:
				vals[i] = fmt.Appendf(nil, `{"round":%d,"row":%d,"pad":"%s"}`, round, i, bytes.Repeat([]byte{'x'}, i%50))
			}
		}
		arr, release, err := BinaryColumn(n, func(i int) []byte { return vals[i] })
		if err != nil {
			t.Fatal(err)
		}
		b := arr.(*array.Binary)
		if b.Len() != n {
			t.Fatalf("round %d: %d rows, want %d", round, b.Len(), n)
		}
		nulls := 0
		for i, v := range vals {
			if v == nil {
				nulls++
				if !b.IsNull(i) {
					t.Fatalf("round %d row %d: not NULL", round, i)
				}
				continue
			}
			if b.IsNull(i) || !bytes.Equal(b.Value(i), v) {
				t.Fatalf("round %d row %d: %q (null %v), want %q", round, i, b.Value(i), b.IsNull(i), v)
			}
		}
		if b.NullN() != nulls {
			t.Fatalf("round %d: %d NULLs, want %d", round, b.NullN(), nulls)
		}
		release()
	}
}
