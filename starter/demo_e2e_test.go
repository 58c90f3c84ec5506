//go:build e2e && !nodev

package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each real capture, streamed through Kafka, the workflow and Iceberg in
// small batches, ends with the exact mirror in testdata/golden, including
// the soft-deleted row that keeps its last values.
// runDemo runs `starter demo` in-process and returns the mirror it prints
// (runDemoLog).
func runDemo(t *testing.T, args ...string) string {
	t.Helper()
	out, _ := runDemoLog(t, args...)
	return out
}

func TestDemoOnRealCaptures(t *testing.T) {
	if _, err := os.Stat(fixtures); err != nil {
		t.Fatal("the captures under testdata/debezium are missing:", err)
	}
	cases := []struct{ file, key, batch, deletedLine string }{
		{"flink/debezium-data-schema-include.txt", "id", "4", `{"id":111,"name":"scooter","description":"Big 2-wheel scooter ","weight":5.170000076293945,"_seq":"0000000000000003000000000000098b0000000000000000","_is_deleted":true,"_source_ts":"2020-05-13T09:32:24.000000Z"}`},
		{"flink/debezium-data-schema-exclude.txt", "id", "3", `{"id":111,"name":"scooter","description":"Big 2-wheel scooter ","weight":5.170000076293945,"_seq":"0000000000000003000000000000098b0000000000000000","_is_deleted":true,"_source_ts":"2020-05-13T09:32:24.000000Z"}`},
		{"flink/debezium-postgres-data-schema-include.txt", "id", "5", `{"id":111,"name":"scooter","description":"Big 2-wheel scooter ","weight":5.17,"_seq":"000000000208d728000000000208d728","_is_deleted":true,"_source_ts":"2020-07-29T08:23:08.168000Z"}`},
		{"flink/debezium-postgres-data-schema-exclude.txt", "id", "16", `{"id":111,"name":"scooter","description":"Big 2-wheel scooter ","weight":5.17,"_seq":"000000000208d728000000000208d728","_is_deleted":true,"_source_ts":"2020-07-29T08:23:08.168000Z"}`},
		{"risingwave/debezium_log.1", "id", "2", `{"id":1006,"first_name":"add1","last_name":"add2","email":"add1","_seq":"000000000000000300000000000007270000000000000000","_is_deleted":true,"_source_ts":"2022-08-24T08:09:10.000000Z"}`},
		{"risingwave/debezium_log_no_schema_field.1", "id", "1", `{"id":1006,"first_name":"add1","last_name":"add2","email":"add1","_seq":"000000000000000300000000000007270000000000000000","_is_deleted":true,"_source_ts":"2022-08-24T08:09:10.000000Z"}`},
		{"risingwave/debezium_mess_key.1", "order_id", "2", ""},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			got := runDemo(t, "--events", filepath.Join(fixtures, c.file), "--key", c.key, "--batch-size", c.batch)
			golden(t, strings.TrimSuffix(filepath.Base(c.file), filepath.Ext(c.file))+"-"+filepath.Dir(c.file), got)
			if c.deletedLine != "" && !strings.Contains(got, c.deletedLine+"\n") {
				t.Fatalf("the soft-deleted row is not\n%s\nin\n%s", c.deletedLine, got)
			}
		})
	}
}

// Hand-built streams that once broke the pipeline, with the mirror every
// batch size must end with.
func TestDemoAdversarialStreams(t *testing.T) {
	cases := []struct{ file, key, want string }{
		// c@100, u@300, d@400 and its tombstone, then a late u@200: the late
		// update rebuilds the key from bronze, whose row groups hold as many
		// tombstones (NULL _key) as keyed rows; the delete must survive.
		{"late-update-after-delete.jsonl", "id",
			`{"id":1,"q":3,"_seq":"00000000000001900000000000000190","_is_deleted":true,"_source_ts":"2026-01-01T09:00:00.400000Z"}` + "\n"},
		// a NULL key goes to the quarantine; it does not become key 0
		{"null-key.jsonl", "id",
			`{"id":0,"v":"zero-id","_seq":"000000000000006e000000000000006e","_is_deleted":false,"_source_ts":"2026-01-01T09:00:00.110000Z"}` + "\n"},
	}
	for _, c := range cases {
		for _, batch := range []string{"1", "2", "3", "100"} {
			t.Run(c.file+"/"+batch, func(t *testing.T) {
				got := runDemo(t, "--events", filepath.Join("testdata", "streams", c.file), "--key", c.key, "--batch-size", batch)
				if got != c.want {
					t.Fatalf("mirror:\n%s\nwant:\n%s", got, c.want)
				}
			})
		}
	}
}

var update = flag.Bool("update", false, "rewrite the golden files")

// fixtures is the real Debezium captures (testdata/debezium at the repository root, see
// its PROVENANCE.md) relative to this package.
var fixtures = filepath.Join("..", "testdata", "debezium")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".jsonl")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("mirror differs from %s:\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
