package validate

import (
	"reflect"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

func TestPartitioning(t *testing.T) {
	recs := []Record{
		{Key: "01", Partition: 0, Offset: 0, Op: "c", Seq: "a1"},
		{Key: "02", Partition: 1, Offset: 0, Op: "c", Seq: "a2"},
		{Key: "01", Partition: 1, Offset: 1, Op: "u", Seq: "a3"},
		{Key: "01", Partition: 0, Offset: 1, Op: "u", Seq: "a4"},
		{Key: "02", Partition: 1, Offset: 2, Op: "d", Seq: "a5"},
	}
	r := Partitioning(recs)
	want := Result{Check: CheckPartitioning, Scope: "5 events of 2 keys", Expected: "every key in one partition",
		Observed: "1 keys in more than one partition", Verdict: Fail, Total: 1,
		Findings: []Finding{{Key: "01", What: "events in partitions 0 (2 events), 1 (1 event)"}}}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("got %+v\nwant %+v", r, want)
	}
	if got := r.Details(); got != "key 01: events in partitions 0 (2 events), 1 (1 event)" {
		t.Fatalf("details %q", got)
	}
	if r := Partitioning(recs[1:3:3][:1]); r.Verdict != Pass || r.Total != 0 {
		t.Fatalf("one key one partition: %+v", r)
	}
}

func TestTransitions(t *testing.T) {
	recs := []Record{
		// 01: c, u, d, c (legal), redelivered u (same seq) counts once
		{Key: "01", Op: "c", Seq: "10", Offset: 0}, {Key: "01", Op: "u", Seq: "11", Offset: 1}, {Key: "01", Op: "u", Seq: "11", Offset: 9},
		{Key: "01", Op: "d", Seq: "12", Offset: 2}, {Key: "01", Op: "c", Seq: "13", Offset: 3},
		// 02: c then c: a duplicate create
		{Key: "02", Op: "c", Seq: "20", Offset: 4}, {Key: "02", Op: "c", Seq: "21", Offset: 5},
		// 03: d then u
		{Key: "03", Op: "d", Seq: "30", Offset: 6}, {Key: "03", Op: "u", Seq: "31", Offset: 7},
		// 04: snapshot read after a create (incremental snapshot), then d, r (legal)
		{Key: "04", Op: "c", Seq: "40", Offset: 8}, {Key: "04", Op: "r", Seq: "41", Offset: 10}, {Key: "04", Op: "d", Seq: "42", Offset: 11}, {Key: "04", Op: "r", Seq: "43", Offset: 12},
		// 05: c, truncate at 51, c (legal); d, d is not
		{Key: "05", Op: "c", Seq: "50", Offset: 13}, {Key: "05", Op: "c", Seq: "52", Offset: 14},
		{Key: "05", Op: "d", Seq: "53", Offset: 15}, {Key: "05", Op: "d", Seq: "54", Offset: 16},
		// 06: arrives out of order in the log, legal by _seq
		{Key: "06", Op: "u", Seq: "61", Offset: 17}, {Key: "06", Op: "c", Seq: "60", Offset: 18},
	}
	r := Transitions(recs, []string{"51"})
	want := []Finding{
		{Key: "02", What: "create after a create without a delete between (c at 20, partition 0 offset 4; then c at 21, partition 0 offset 5)"},
		{Key: "03", What: "update after a delete without a create between (d at 30, partition 0 offset 6; then u at 31, partition 0 offset 7)"},
		{Key: "05", What: "delete after a delete without a create between (d at 53, partition 0 offset 15; then d at 54, partition 0 offset 16)"},
	}
	if !reflect.DeepEqual(r.Findings, want) || r.Verdict != Fail || r.Total != 3 ||
		r.Scope != "19 events of 6 keys, 1 truncate" || r.Observed != "3 keys with an illegal transition" {
		t.Fatalf("got %+v", r)
	}
	// without the truncate, 05's second create is illegal too (its first finding)
	r = Transitions(recs, nil)
	if r.Total != 3 || r.Findings[2].What != "create after a create without a delete between (c at 50, partition 0 offset 13; then c at 52, partition 0 offset 14)" {
		t.Fatalf("without truncate: %+v", r.Findings)
	}
}

// A PostgreSQL source snapshot read at (0, L) sorts below the streamed
// changes made before its snapshot: a create written below L and read by
// a later blocking snapshot comes after the read by position and is
// legal; a create written above L, or after anything but such a read,
// is not.
func TestTransitionsAfterPostgresSnapshotRead(t *testing.T) {
	pg := func(first, lsn uint64) string { return cdc.PostgresSeq(first, lsn).Hex() }
	recs := []Record{
		// 01: created at 100, read by a blocking snapshot at L = 300 (legal)
		{Key: "01", Op: "c", Seq: pg(100, 100), Offset: 0}, {Key: "01", Op: "r", Seq: pg(0, 300), Offset: 5},
		// 02: read at L = 300, then a create written at 400: the row existed
		{Key: "02", Op: "r", Seq: pg(0, 300), Offset: 1}, {Key: "02", Op: "c", Seq: pg(400, 400), Offset: 2},
		// 03: read at 300, created at 100 and created again at 200 (the second is not)
		{Key: "03", Op: "r", Seq: pg(0, 300), Offset: 3}, {Key: "03", Op: "c", Seq: pg(100, 100), Offset: 4}, {Key: "03", Op: "c", Seq: pg(200, 200), Offset: 6},
		// 04: lakemirror's own re-snapshot row at (P, 0) is no source snapshot read
		{Key: "04", Op: "r", Seq: pg(500, 0), Offset: 7}, {Key: "04", Op: "c", Seq: pg(600, 600), Offset: 8},
		// 05: a re-snapshot ghost delete at (P, 0) written at 250, below the read at 300, then re-created at 260 (legal)
		{Key: "05", Op: "r", Seq: pg(0, 300), Offset: 9}, {Key: "05", Op: "d", Seq: pg(250, 0), Offset: 10}, {Key: "05", Op: "c", Seq: pg(260, 260), Offset: 11},
	}
	r := Transitions(recs, nil)
	want := []Finding{
		{Key: "02", What: "create after a snapshot read without a delete between (r at " + pg(0, 300) + ", partition 0 offset 1; then c at " + pg(400, 400) + ", partition 0 offset 2)"},
		{Key: "03", What: "create after a create without a delete between (c at " + pg(100, 100) + ", partition 0 offset 4; then c at " + pg(200, 200) + ", partition 0 offset 6)"},
		{Key: "04", What: "create after a snapshot read without a delete between (r at " + pg(500, 0) + ", partition 0 offset 7; then c at " + pg(600, 600) + ", partition 0 offset 8)"},
	}
	if !reflect.DeepEqual(r.Findings, want) || r.Total != 3 {
		t.Fatalf("got %+v", r.Findings)
	}
}

func TestHoles(t *testing.T) {
	got := Holes([]Span{{0, 10}, {20, 25}}, []int64{9, 0, 1, 1, 4, 5, 20, 21, 22, 23, 24, 30})
	want := []Span{{2, 4}, {6, 9}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	if got := Holes([]Span{{5, 8}}, nil); !reflect.DeepEqual(got, []Span{{5, 8}}) {
		t.Fatalf("empty: %v", got)
	}
	if got := Holes([]Span{{0, 3}}, []int64{0, 1, 2}); got != nil {
		t.Fatalf("full: %v", got)
	}
}

func TestContinuity(t *testing.T) {
	clean := []PartitionOffsets{
		{Partition: 1, Covered: []Span{{0, 10}}, Position: 10, LogStart: 0, End: 10,
			Holes: []Hole{{Span: Span{4, 5}, Retained: true}}}, // a transaction marker
		{Partition: 0, Covered: []Span{{0, 10}}, Position: 10, LogStart: 6, End: 10,
			Holes: []Hole{{Span: Span{2, 3}}}}, // below the log start: unverified
	}
	r := Continuity(clean)
	if r.Verdict != Pass || r.Observed != "0 violations; 2 holes (1 below the log start, unverified; 0 records missing)" {
		t.Fatalf("clean: %+v", r)
	}
	bad := []PartitionOffsets{
		{Partition: 0, Covered: []Span{{0, 4}, {6, 10}}, Position: 12, LogStart: 14, End: 20,
			Holes: []Hole{{Span: Span{2, 4}, Retained: true, Found: []int64{2, 3}}}},
	}
	r = Continuity(bad)
	want := []string{
		"partition 0: offsets [4, 6) were never read: the batches before and after them do not join up",
		"partition 0: the table's position is 12 but bronze covers only up to 10",
		"partition 0: the table's position 12 is below the log start 14: records [12, 14) were deleted before they were read",
		"partition 0: offsets [2, 4) are missing from bronze but Kafka holds 2 records there (first 2)",
	}
	var got []string
	for _, f := range r.Findings {
		got = append(got, Result{Findings: []Finding{f}, Total: 1}.Details())
	}
	if r.Verdict != Fail || r.Total != 4 || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\n%q", r, got)
	}
}

// Positions a connector writes are shown in the source's own terms.
func TestWatermarksPostgres(t *testing.T) {
	a, b := cdc.PostgresSeq(0x16B3748, 0x16B3748).Hex(), cdc.PostgresSeq(0x16B3800, 0x16B37F0).Hex()
	pts := []Point{{Snapshot: 1, BatchSeq: 1, Applied: b}, {Snapshot: 2, BatchSeq: 2, Applied: a}}
	r := Watermarks(pts, b, a)
	if r.Observed != "applied position lsn 0/16B3748, mirror max _seq lsn 0/16B37F0 after commit 0/16B3800" {
		t.Fatalf("observed %q", r.Observed)
	}
	want := []Finding{
		{What: "snapshot 2 (batch 2) records applied position lsn 0/16B3748, below lsn 0/16B37F0 after commit 0/16B3800 of snapshot 1 (batch 1)"},
		{What: "a mirror row has _seq " + b + " (lsn 0/16B37F0 after commit 0/16B3800), above the recorded applied position lsn 0/16B3748"},
	}
	if !reflect.DeepEqual(r.Findings, want) {
		t.Fatalf("got %+v", r.Findings)
	}
}

func TestWatermarks(t *testing.T) {
	pts := []Point{
		{Snapshot: 1, BatchSeq: 1, Applied: "0a", EndOffsets: map[int32]int64{0: 5, 1: 3}},
		{Snapshot: 2}, // compaction
		{Snapshot: 3, BatchSeq: 2, Applied: "0c", EndOffsets: map[int32]int64{0: 9, 1: 3}},
	}
	// positions of a width no connector writes are shown as they are;
	// TestWatermarksPostgres has the source's terms
	if r := Watermarks(pts, "0c", "0c"); r.Verdict != Pass || r.Observed != "applied position 0c, mirror max _seq 0c" || r.Scope != "3 mirror snapshots" {
		t.Fatalf("clean: %+v", r)
	}
	pts = append(pts, Point{Snapshot: 4, BatchSeq: 3, Applied: "0b", EndOffsets: map[int32]int64{0: 7, 1: 4}})
	r := Watermarks(pts, "0d", "0c")
	want := []Finding{
		{What: "snapshot 4 (batch 3) records applied position 0b, below 0c of snapshot 3 (batch 2)"},
		{Partition: part(0), What: "snapshot 4 (batch 3) moved the position back from 9 (snapshot 3 (batch 2)) to 7: a consumer reset"},
		{What: `a mirror row has _seq 0d, above the recorded applied position 0c`},
	}
	if r.Verdict != Fail || !reflect.DeepEqual(r.Findings, want) {
		t.Fatalf("got %+v", r.Findings)
	}
	// a batch that changed no row moves only the table properties
	r = Watermarks(append(pts[:3:3], Point{BatchSeq: 3, Applied: "0c", EndOffsets: map[int32]int64{0: 8, 1: 3}}), "0c", "0c")
	if r.Total != 1 || r.Findings[0].What != "the table properties (batch 3) moved the position back from 9 (snapshot 3 (batch 2)) to 8: a consumer reset" {
		t.Fatalf("properties point: %+v", r.Findings)
	}
}

func TestFindingsCapped(t *testing.T) {
	var recs []Record
	for i := range 25 {
		k := string(rune('A' + i))
		recs = append(recs, Record{Key: k, Partition: 0, Op: "c", Seq: "1"}, Record{Key: k, Partition: 1, Op: "u", Seq: "2"})
	}
	r := Partitioning(recs)
	if r.Total != 25 || len(r.Findings) != MaxFindings {
		t.Fatalf("total %d findings %d", r.Total, len(r.Findings))
	}
	d := r.Details()
	if want := "\n... and 5 more"; d[len(d)-len(want):] != want {
		t.Fatalf("details end %q", d[len(d)-40:])
	}
}

func TestEventTimeWatermark(t *testing.T) {
	recs := []Record{
		{Partition: 0, Offset: 0, SourceTs: 100}, {Partition: 0, Offset: 1, SourceTs: 140},
		{Partition: 1, Offset: 0, SourceTs: 50}, {Partition: 1, Offset: 1, SourceTs: 125},
		{Partition: 2, Offset: 0, SourceTs: 0}, // time unknown
	}
	caught := func(p int32) PartitionOffsets { return PartitionOffsets{Partition: p, Position: 5, End: 5} }
	behind := func(p int32) PartitionOffsets { return PartitionOffsets{Partition: p, Position: 2, End: 5} }
	cases := []struct {
		name  string
		recs  []Record
		parts []PartitionOffsets
		want  int64
	}{
		{"every partition caught up: the newest applied", recs, []PartitionOffsets{caught(0), caught(1), caught(2)}, 140},
		{"partition 1 behind holds it at its newest", recs, []PartitionOffsets{caught(0), behind(1), caught(2)}, 125},
		{"the oldest of the partitions behind", recs, []PartitionOffsets{behind(0), behind(1)}, 125},
		{"partition 0 behind alone", recs, []PartitionOffsets{behind(0), caught(1)}, 140},
		{"a partition behind without a known time: nothing complete", recs, []PartitionOffsets{caught(0), behind(2)}, 0},
		{"a partition behind that applied nothing", recs, []PartitionOffsets{caught(0), behind(3)}, 0},
		{"nothing applied", nil, []PartitionOffsets{caught(0)}, 0},
		{"no partitions known: the newest applied", recs, nil, 140},
	}
	for _, c := range cases {
		if got := EventTimeWatermark(c.recs, c.parts); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
