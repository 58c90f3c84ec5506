package localstate

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// TestLogAppendsAcrossFlushes appends records of every size class to two
// logs in turn (batches flushed at their end, some records past flushAt,
// buffers going back to the shared pool and taken again by the other
// log) and reads every record back, buffered and flushed, exactly.
func TestLogAppendsAcrossFlushes(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(7, 8))
	type rec struct {
		ref  uint64
		data []byte
	}
	logs := make([]*Log, 2)
	recs := make([][]rec, 2)
	for i := range logs {
		l, err := OpenLog(filepath.Join(dir, fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		logs[i] = l
	}
	check := func(i, from int) {
		t.Helper()
		var buf []byte
		for j, rc := range recs[i][from:] {
			got, next, err := logs[i].Read(rc.ref, buf)
			if err != nil {
				t.Fatalf("log %d record %d: %v", i, j, err)
			}
			if !bytes.Equal(got, rc.data) {
				t.Fatalf("log %d record %d at %d: %d bytes read back differ from the %d appended", i, j, rc.ref, len(got), len(rc.data))
			}
			buf = next
		}
	}
	sizes := []int{0, 1, 200, 600, 5 << 10, 70 << 10, flushAt - 3, flushAt + 10, 5 << 20}
	for batch := range 8 {
		i := batch % 2
		n, from := 1+r.IntN(1000), len(recs[i])
		for range n {
			size := sizes[r.IntN(len(sizes))]
			if r.IntN(300) != 0 {
				size = r.IntN(700) // most records are chain records of a few hundred bytes
			}
			data := make([]byte, size)
			seed := byte(r.Uint32())
			for k := range data {
				data[k] = byte(k*31) + seed
			}
			ref, err := logs[i].Append(data)
			if err != nil {
				t.Fatal(err)
			}
			recs[i] = append(recs[i], rec{ref, data})
		}
		check(i, from) // the batch's records, some still buffered
		if err := logs[i].Flush(); err != nil {
			t.Fatal(err)
		}
		if cap(logs[i].buf) > keepBuf {
			t.Fatalf("batch %d: log %d keeps a buffer of %d bytes after its flush", batch, i, cap(logs[i].buf))
		}
		check(i, from)
	}
	check(0, 0)
	check(1, 0)
}
