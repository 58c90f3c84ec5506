package schemas

import (
	"strings"
	"testing"
)

func TestSplitValues(t *testing.T) {
	in := "{\"a\":1}\nnull\n\n  {\n  \"b\": [1, 2]\n}{\"c\":\"x}{\"}\r\n[1]\n\"s\" 5"
	got, err := SplitValues([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"a":1}`, "", "{\n  \"b\": [1, 2]\n}", `{"c":"x}{"}`, `[1]`, `"s"`, `5`}
	if len(got) != len(want) {
		t.Fatalf("%d values: %q", len(got), got)
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("value %d = %q, want %q", i, got[i], want[i])
		}
	}
	if got[1] != nil {
		t.Errorf("null must split to a nil tombstone, got %q", got[1])
	}
	for _, bad := range []string{"{\"a\":1}\n{\"b\":", "{\"a\":1}\n****\n", "{\"a\" 1}", "{\"a\":1}x", "{\"a\":01}"} {
		_, err := SplitValues([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), "line ") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if vals, err := SplitValues(nil); err != nil || len(vals) != 0 {
		t.Errorf("empty input: %v %v", vals, err)
	}
}

// Every line-per-record fixture splits into its lines, and the
// pretty-printed ones into one value each.
func TestSplitFixtures(t *testing.T) {
	for rel, n := range map[string]int{
		"flink/debezium-data-schema-include.txt":                           16,
		"flink/debezium-postgres-data-schema-exclude.txt":                  16,
		"risingwave/debezium_log.1":                                        10,
		"debezium-server-iceberg/serde-unnested-order-val-withschema.json": 1,
		"debezium-server-iceberg/unwrap-with-schema.json":                  1,
		"kafka-connect-iceberg-sink/debezium-metadata-schema.json":         1,
		"flink-cdc/debezium-data-schema-exclude.json":                      1,
	} {
		vals, err := SplitValues(readFixture(t, rel))
		if err != nil || len(vals) != n {
			t.Errorf("%s: %d values, %v", rel, len(vals), err)
		}
	}
	// Concatenated pretty-printed key+value files (no newline between).
	key := readFixture(t, "debezium-server-iceberg/serde-unnested-delete-key-withschema.json")
	val := readFixture(t, "debezium-server-iceberg/serde-unnested-delete-val-withschema.json")
	vals, err := SplitValues(append(append([]byte{}, key...), val...))
	if err != nil || len(vals) != 2 {
		t.Errorf("key+value: %d %v", len(vals), err)
	}
}
