package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestStreamedWorkloadMatchesFiles: the streamed generator (benchctl
// lakemirror --stream) hands the producer byte for byte the values of
// snapshot.jsonl and changes.jsonl that `benchctl gen` writes for the same
// options, calls between once after the last snapshot value and before the
// first change, and writes the same expected.parquet and
// orders.table.json; meta.json differs only in gen_seconds and streamed.
func TestStreamedWorkloadMatchesFiles(t *testing.T) {
	o := genOpts{rows: 2_000, changes: 3_000, batches: []int{500}, lateLo: 2, lateHi: 4, dupFrac: 0.05, lateFrac: 0.05,
		seed: 42, parquetRowGroupMax: 1 << 20}
	files, streamed := t.TempDir(), t.TempDir()
	o.out = files
	if err := generate(o, genSink{}); err != nil {
		t.Fatal(err)
	}
	var snap, changes bytes.Buffer
	betweenAt, betweenCalls := -1, 0
	nSnap, nChanges := 0, 0
	o.out = streamed
	err := generate(o, genSink{
		snapshot: func(b []byte) error { nSnap++; snap.Write(b); snap.WriteByte('\n'); return nil },
		between:  func() error { betweenCalls++; betweenAt = nSnap + nChanges; return nil },
		changes:  func(b []byte) error { nChanges++; changes.Write(b); changes.WriteByte('\n'); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if nSnap != 2_000 || nChanges != 3_150 || betweenCalls != 1 || betweenAt != 2_000 {
		t.Fatalf("streamed %d snapshot values and %d changes, between called %d times after %d values; want 2000, 3150, once after 2000",
			nSnap, nChanges, betweenCalls, betweenAt)
	}
	for _, f := range []struct {
		name string
		got  []byte
	}{{"snapshot.jsonl", snap.Bytes()}, {"changes.jsonl", changes.Bytes()}} {
		want, err := os.ReadFile(filepath.Join(files, f.name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(f.got, want) {
			t.Errorf("streamed values differ from %s (%d bytes streamed, %d in the file)", f.name, len(f.got), len(want))
		}
	}
	for _, name := range []string{"expected.parquet", "orders.table.json"} {
		a, errA := os.ReadFile(filepath.Join(files, name))
		b, errB := os.ReadFile(filepath.Join(streamed, name))
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs: %d bytes from the files run, %d streamed", name, len(a), len(b))
		}
	}
	for _, name := range []string{"snapshot.jsonl", "changes.jsonl", "initial.parquet", "changes-b500"} {
		if _, err := os.Stat(filepath.Join(streamed, name)); err == nil {
			t.Errorf("the streamed run wrote %s", name)
		}
	}
	var mf, ms map[string]any
	if err := readJSON(filepath.Join(files, "meta.json"), &mf); err != nil {
		t.Fatal(err)
	}
	if err := readJSON(filepath.Join(streamed, "meta.json"), &ms); err != nil {
		t.Fatal(err)
	}
	if ms["streamed"] != true || mf["streamed"] != nil {
		t.Errorf("meta streamed: %v in the streamed run, %v in the files run; want true and absent", ms["streamed"], mf["streamed"])
	}
	for _, m := range []map[string]any{mf, ms} {
		delete(m, "gen_seconds")
		delete(m, "streamed")
	}
	if a, b := mustJSON(t, mf), mustJSON(t, ms); a != b {
		t.Errorf("meta.json differs:\n files    %s\n streamed %s", a, b)
	}
	if mf["delivered"] != 3_150.0 || mf["late"] != 150.0 || mf["redeliveries"] != 150.0 || mf["rows"] != 2_000.0 {
		t.Errorf("meta: delivered %v late %v redeliveries %v rows %v; want 3150, 150, 150, 2000", mf["delivered"], mf["late"], mf["redeliveries"], mf["rows"])
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
