package payload

import "testing"

// TestLoadChunkRows: a direct load's chunk is LoadChunk when set, else
// larger for a table that keeps no bronze.
func TestLoadChunkRows(t *testing.T) {
	for _, tc := range []struct {
		spec TableSpec
		want int
	}{
		{TableSpec{}, 10_000},
		{TableSpec{WithoutBronze: true}, 50_000},
		{TableSpec{WithoutBronze: true, WithoutHistory: true}, 50_000},
		{TableSpec{LoadChunk: 7}, 7},
		{TableSpec{LoadChunk: 7, WithoutBronze: true}, 7},
		{TableSpec{LoadChunk: -1}, 10_000},
	} {
		if got := tc.spec.LoadChunkRows(); got != tc.want {
			t.Errorf("%+v: %d rows, want %d", tc.spec, got, tc.want)
		}
	}
}
