package schemas

import (
	"bytes"
	"testing"
)

// The source commit time of a change (issue 34 item 9): source.ts_us or
// ts_ms; when that is 0 or missing, the envelope's ts_ms; when that is
// missing too, the Kafka record timestamp, marked by SourceTsFromKafka
// (before, _source_ts stayed empty). Input: the real MySQL 1.1.1 capture
// flink/debezium-data-schema-exclude.txt, whose snapshot rows carry
// source.ts_ms 0; its first line as captured, and with the envelope's
// ts_ms left out (a record with no time of its own).
func TestSourceTsFallsBackToKafkaTimestamp(t *testing.T) {
	line := fixtureLines(t, "flink/debezium-data-schema-exclude.txt")[0].value
	const envTs = `,"ts_ms":1589355606100,"transaction"`
	if !bytes.Contains(line, []byte(`"ts_ms":0,`)) || !bytes.Contains(line, []byte(envTs)) {
		t.Fatalf("the capture's first line changed: %s", line)
	}
	noEnvTs := bytes.Replace(line, []byte(envTs), []byte(`,"transaction"`), 1)
	const kafkaTs = 1767322245678000 // 2026-01-02T03:04:05.678Z, µs
	opts := DecoderOptions{KeyColumns: []string{"id"}}
	for _, c := range []struct {
		name      string
		value     []byte
		timestamp int64
		want      int64
		fromKafka bool
	}{
		{"as captured: the envelope's ts_ms", line, kafkaTs, 1589355606100000, false},
		{"no envelope ts_ms: the Kafka timestamp", noEnvTs, kafkaTs, kafkaTs, true},
		{"no time at all: unknown", noEnvTs, 0, 0, false},
	} {
		got, err := NewDecoder(opts).Decode(Record{Topic: "dbserver1.inventory.products", Offset: 7, Value: c.value, Timestamp: c.timestamp})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.Event.SourceTs != c.want || got.SourceTsFromKafka != c.fromKafka {
			t.Errorf("%s: source ts %d from Kafka %v, want %d %v", c.name, got.Event.SourceTs, got.SourceTsFromKafka, c.want, c.fromKafka)
		}
	}
	// a source time of its own is kept whatever the Kafka timestamp
	got, err := NewDecoder(idKey).Decode(Record{Topic: "db.t", Value: []byte(pgUpdate), Timestamp: kafkaTs})
	if err != nil || got.Event.SourceTs != 1700000000123000 || got.SourceTsFromKafka {
		t.Errorf("source ts_ms set: %v %d %v", err, got.Event.SourceTs, got.SourceTsFromKafka)
	}
}
