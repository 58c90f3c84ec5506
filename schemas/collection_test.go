package schemas

import (
	"errors"
	"fmt"
	"testing"
)

// SourceCollection on the real captures: every change event of each
// file names the data collection of its source table, with and without
// the schema envelope; a tombstone, an event without a source block and a
// value that is not JSON do not.
func TestSourceCollectionOnRealCaptures(t *testing.T) {
	for _, c := range []struct {
		file string
		want map[string]int // collection → events
	}{
		// PostgreSQL (source.schema "inventory", db "postgres"): schema.table
		{"flink/debezium-postgres-data-schema-include.txt", map[string]int{"inventory.products": 16}},
		{"flink/debezium-postgres-data-schema-exclude.txt", map[string]int{"inventory.products": 16}},
		// MySQL (source.db "inventory", no schema): db.table
		{"flink/debezium-data-schema-include.txt", map[string]int{"inventory.products": 16}},
		{"risingwave/debezium_log.1", map[string]int{"inventory.customers": 10}},
	} {
		got := map[string]int{}
		for _, r := range fixtureLines(t, c.file) {
			coll, err := SourceCollection(r.value)
			if err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			got[coll]++
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: collections %v, want %v", c.file, got, c.want)
		}
	}
}

func TestSourceCollectionForms(t *testing.T) {
	for _, c := range []struct {
		name, value, want string
		err               error
	}{
		{"sqlserver", `{"before":null,"after":{"id":1},"source":{"connector":"sqlserver","db":"testDB","schema":"dbo","table":"tablea"},"op":"c"}`, "testDB.dbo.tablea", nil},
		{"enveloped mysql", `{"schema":{"type":"struct"},"payload":{"source":{"connector":"mysql","db":"inventory","table":"orders"},"op":"u"}}`, "inventory.orders", nil},
		{"tombstone", ``, "", nil},
		{"flattened", `{"id":1,"__table":"orders","__deleted":"false"}`, "", nil},
		{"unknown connector", `{"source":{"connector":"mongodb","db":"rs0","table":"orders"}}`, "", nil},
		{"avro", "\x00\x00\x00\x00\x01\x02", "", ErrNotJSON},
		{"broken", `{"source":`, "", ErrNotJSON},
	} {
		got, err := SourceCollection([]byte(c.value))
		if got != c.want || !errors.Is(err, c.err) {
			t.Errorf("%s: %q, %v; want %q, %v", c.name, got, err, c.want, c.err)
		}
	}
}
