package rowdelta

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
)

// TestFastPartitionValue checks that the fast partition values (bucket of
// long and int, day of timestamp, identity of long and int) equal what
// partitionValue computes through Iceberg literals, value for value,
// nulls and extremes included, and that the other transforms and a
// column of another type take the literal path.
func TestFastPartitionValue(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 20_000
	mem := memory.DefaultAllocator
	lb := array.NewInt64Builder(mem)
	ib := array.NewInt32Builder(mem)
	tb := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})
	edges64 := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 86_400_000_000, -86_400_000_000, -1_000_001, 1_793_491_200_000_000}
	edges32 := []int32{0, 1, -1, math.MaxInt32, math.MinInt32}
	for i := 0; i < n; i++ {
		switch {
		case i%97 == 0:
			lb.AppendNull()
			ib.AppendNull()
			tb.AppendNull()
		case i < len(edges64):
			lb.Append(edges64[i])
			ib.Append(edges32[i%len(edges32)])
			tb.Append(arrow.Timestamp(edges64[i] / 1000)) // keep timestamps in the Date range
		default:
			lb.Append(r.Int64())
			ib.Append(r.Int32() - math.MaxInt32/2)
			tb.Append(arrow.Timestamp(r.Int64N(200*365*86_400_000_000) - 100*365*86_400_000_000))
		}
	}
	longs, ints, stamps := lb.NewArray(), ib.NewArray(), tb.NewArray()
	defer longs.Release()
	defer ints.Release()
	defer stamps.Release()
	cases := []struct {
		name string
		col  arrow.Array
		src  iceberg.Type
		tr   iceberg.Transform
	}{
		{"bucket16 long", longs, iceberg.PrimitiveTypes.Int64, iceberg.BucketTransform{NumBuckets: 16}},
		{"bucket7 long", longs, iceberg.PrimitiveTypes.Int64, iceberg.BucketTransform{NumBuckets: 7}},
		{"bucket16 int", ints, iceberg.PrimitiveTypes.Int32, iceberg.BucketTransform{NumBuckets: 16}},
		{"day timestamp", stamps, iceberg.PrimitiveTypes.Timestamp, iceberg.DayTransform{}},
		{"day timestamptz", stamps, iceberg.PrimitiveTypes.TimestampTz, iceberg.DayTransform{}},
		{"identity long", longs, iceberg.PrimitiveTypes.Int64, iceberg.IdentityTransform{}},
		{"identity int", ints, iceberg.PrimitiveTypes.Int32, iceberg.IdentityTransform{}},
	}
	for _, c := range cases {
		f := fastPartitionValue(c.src, c.tr)
		if f == nil {
			t.Fatalf("%s: no fast path", c.name)
		}
		nulls := 0
		for i := 0; i < n; i++ {
			got, ok := f(c.col, i)
			if !ok {
				t.Fatalf("%s: row %d took the slow path", c.name, i)
			}
			want, err := partitionValue(c.col, i, c.src, c.tr)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("%s: row %d: fast %#v, literal path %#v", c.name, i, got, want)
			}
			if got == nil {
				nulls++
			}
		}
		if want := (n + 96) / 97; nulls != want {
			t.Fatalf("%s: %d nulls, want %d", c.name, nulls, want)
		}
	}
	// other transforms have no fast path; a column of another type falls back
	for _, c := range []struct {
		src iceberg.Type
		tr  iceberg.Transform
	}{
		{iceberg.PrimitiveTypes.String, iceberg.BucketTransform{NumBuckets: 4}},
		{iceberg.PrimitiveTypes.Int64, iceberg.TruncateTransform{Width: 10}},
		{iceberg.PrimitiveTypes.Timestamp, iceberg.HourTransform{}},
		{iceberg.PrimitiveTypes.Date, iceberg.DayTransform{}},
	} {
		if fastPartitionValue(c.src, c.tr) != nil {
			t.Fatalf("%s of %s: a fast path, want none", c.tr, c.src)
		}
	}
	if _, ok := fastPartitionValue(iceberg.PrimitiveTypes.Int64, iceberg.BucketTransform{NumBuckets: 16})(ints, 1); ok {
		t.Fatal("bucket of a long read an int column")
	}
}
