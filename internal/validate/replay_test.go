package validate

import "testing"

// TestReplay: each way a replay of bronze's changes would change the
// mirror is named with its key, and nothing else is.
func TestReplay(t *testing.T) {
	recs := []Record{
		{Key: "01", Partition: 0, Offset: 0, Op: "c", Seq: "10"},
		{Key: "01", Partition: 0, Offset: 1, Op: "u", Seq: "20"},
		{Key: "01", Partition: 0, Offset: 2, Op: "u", Seq: "20"}, // redelivered
		{Key: "02", Partition: 0, Offset: 3, Op: "c", Seq: "11"},
		{Key: "02", Partition: 0, Offset: 4, Op: "d", Seq: "21"},
		{Key: "03", Partition: 1, Offset: 0, Op: "r", Seq: "05"},
		{Key: "04", Partition: 1, Offset: 1, Op: "c", Seq: "12"},
		{Key: "05", Partition: 1, Offset: 2, Op: "d", Seq: "13"},
		{Key: "06", Partition: 1, Offset: 3, Op: "u", Seq: "30"},
		{Key: "07", Partition: 1, Offset: 4, Op: "c", Seq: "08"},
		{Key: "08", Partition: 1, Offset: 5, Op: "u", Seq: "40"},
	}
	clean := map[string]Stored{
		"01": {Seq: "20"},
		"02": {Seq: "21", Deleted: true},
		"03": {Seq: "50", Deleted: true}, // a truncate at 50, above the key's changes
		"04": {Seq: "12"},
		"06": {Seq: "30"},
		"08": {Seq: "40"},
	}
	purged := Purges{Keys: map[string]string{"05": "13"}, Horizon: "09"} // 07 purged under the legacy horizon
	if r := Replay(recs, clean, purged, nil); r.Verdict != Pass || r.Total != 0 {
		t.Fatalf("clean: %s %s", r.Verdict, r.Details())
	}
	lost := map[string]Stored{
		"01": {Seq: "10"},                 // the update at 20 lost
		"02": {Seq: "21", Deleted: false}, // the delete's flag lost
		"03": {Seq: "50", Deleted: true},
		"06": {Seq: "30"},
		"08": {Seq: "40"},
	}
	r := Replay(recs, lost, Purges{Keys: map[string]string{"05": "12"}}, map[string]bool{"08": true})
	want := "key 01: mirror row at 10, below its last change (op u) at 20, partition 0 offset 1: a lost change\n" +
		"key 02: mirror row at its last change (op d) at 21, partition 0 offset 4 has soft delete false\n" +
		"key 04: no mirror row and no purge of the key after its last change (op c) at 12, partition 1 offset 1\n" +
		"key 05: no mirror row and no purge of the key after its last change (op d) at 13, partition 1 offset 2\n" +
		"key 07: no mirror row and no purge of the key after its last change (op c) at 08, partition 1 offset 4"
	if r.Verdict != Fail || r.Total != 5 || r.Details() != want {
		t.Fatalf("lost changes: %s, %d findings:\n%s\nwant:\n%s", r.Verdict, r.Total, r.Details(), want)
	}
	if want := "11 events of 8 keys, 5 mirror rows, 1 purged key, 1 pending key left out"; r.Scope != want {
		t.Fatalf("scope %q, want %q", r.Scope, want)
	}
}
