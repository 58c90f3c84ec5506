package activities

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/schemas"
)

// captureEvents decodes a line-per-record capture of testdata/debezium
// (the team's shared captures; a RisingWave line is "KEY^VALUE") as
// partition 0 of a topic.
func captureEvents(t *testing.T, rel string) []*cdc.Event {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "debezium", rel))
	if err != nil {
		t.Fatal(err)
	}
	d := schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: []string{"id"}})
	var out []*cdc.Event
	for i, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		rec := schemas.Record{Topic: rel, Offset: int64(i), Value: line}
		if j := bytes.IndexByte(line, '^'); j >= 0 {
			rec.Key, rec.Value = line[:j], line[j+1:]
		}
		got, err := d.Decode(rec)
		if err != nil || got.Event == nil {
			t.Fatalf("%s line %d: %v", rel, i+1, err)
		}
		out = append(out, got.Event)
	}
	return out
}

// The partition marks every mirror commit keeps (lakemirror.fetched-past,
// lakemirror.newest-tx), on real captures: Debezium 1.2's PostgreSQL
// snapshot reads (all marked "true", none "last") show partition 0
// complete only up to just below their shared position (0, 34078720);
// with the streamed changes, up to the last one's (the delete at LSN
// 34133800). Their transaction blocks are null, so no newest
// transaction. MySQL (RisingWave's capture): the four reads at
// mysql-bin.000003:157 claim just below it; with the streamed changes,
// the highest position. Neither capture has transaction metadata.
func TestPartitionMarksOnCaptures(t *testing.T) {
	pg := captureEvents(t, "flink/debezium-postgres-data-schema-include.txt")
	if len(pg) != 16 {
		t.Fatalf("%d PostgreSQL events, want 16", len(pg))
	}
	fetched, newest := partitionMarks(pg[:9])
	if got, want := fetched[0], cdc.PostgresSeq(0, 34078719).Hex(); len(fetched) != 1 || got != want || newest != nil {
		t.Fatalf("PostgreSQL reads: fetched %v (want partition 0 at %s), newest %v", fetched, want, newest)
	}
	fetched, newest = partitionMarks(pg)
	if got, want := fetched[0], cdc.PostgresSeq(34133800, 34133800).Hex(); len(fetched) != 1 || got != want || newest != nil {
		t.Fatalf("PostgreSQL capture: fetched %v (want partition 0 at %s), newest %v", fetched, want, newest)
	}

	my := captureEvents(t, "risingwave/debezium_log.1")
	if len(my) != 10 || my[3].Snapshot != cdc.SnapshotRow || my[4].Snapshot != cdc.SnapshotNone {
		t.Fatalf("MySQL capture: %d events, the 4th and 5th not the last read and the first streamed change", len(my))
	}
	fetched, _ = partitionMarks(my[:4])
	reads, err := cdc.ParseSeqHex(fetched[0])
	if err != nil || reads >= my[0].Seq || reads != cdc.FetchedPast(my[3]) {
		t.Fatalf("MySQL reads: fetched %v, the reads at %s", fetched, my[0].Seq.Hex())
	}
	high := my[0].Seq
	for _, ev := range my {
		high = max(high, ev.Seq)
	}
	fetched, newest = partitionMarks(my)
	if fetched[0] != high.Hex() || newest != nil {
		t.Fatalf("MySQL capture: fetched %v, want %s; newest %v", fetched, high.Hex(), newest)
	}
}
