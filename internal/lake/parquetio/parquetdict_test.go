package parquetio

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
)

// A file's free-text columns lose their dictionary; categorical ones and
// one of a few thousand values repeated keep it; small files keep the
// default.
func TestDistinctTextProps(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "status", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "blob", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "sparse", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "words", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	build := func(rows int) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		for i := 0; i < rows; i++ {
			b.Field(0).(*array.StringBuilder).Append([]string{"paid", "shipped", "delivered"}[i%3])
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("note %d", i))
			b.Field(2).(*array.BinaryBuilder).Append([]byte(fmt.Sprintf("%08d", i)))
			if i%10 == 0 { // one value in ten, all alike
				b.Field(3).(*array.StringBuilder).Append("x")
			} else {
				b.Field(3).(*array.StringBuilder).AppendNull()
			}
			b.Field(4).(*array.StringBuilder).Append(fmt.Sprintf("words %d", (i*7919)%4096)) // 4,096 distinct, repeated
			b.Field(5).(*array.Int64Builder).Append(int64(i))
		}
		return b.NewRecordBatch()
	}
	dict := func(rec arrow.RecordBatch) map[string]bool {
		props := parquet.NewWriterProperties(append([]parquet.WriterProperty{parquet.WithDictionaryDefault(true)}, distinctTextProps(rec)...)...)
		out := map[string]bool{}
		for _, c := range []string{"status", "note", "blob", "sparse", "words"} {
			out[c] = props.DictionaryEnabledFor(c)
		}
		return out
	}
	big := build(50000)
	defer big.Release()
	if got, want := dict(big), map[string]bool{"status": true, "note": false, "blob": false, "sparse": true, "words": true}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("50,000 rows: dictionary %v, want %v", got, want)
	}
	small := build(dictMinRows - 1)
	defer small.Release()
	if got := distinctTextProps(small); len(got) != 0 {
		t.Fatalf("%d rows: %d properties, want none", dictMinRows-1, len(got))
	}
}
