package validate

import (
	"fmt"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	src := &RowState{Digest: "aa"}
	cases := []struct {
		name     string
		src, mir *RowState
		want     string
	}{
		{"equal", src, &RowState{Digest: "aa"}, ""},
		{"changed", src, &RowState{Digest: "bb"}, KindChanged},
		{"missing", src, nil, KindMissing},
		{"soft-deleted", src, &RowState{Digest: "aa", Deleted: true}, KindMissing},
		{"ghost", nil, &RowState{Digest: "aa"}, KindGhost},
		{"deleted in both", nil, &RowState{Digest: "aa", Deleted: true}, ""},
		{"absent in both", nil, nil, ""},
	}
	for _, c := range cases {
		if got := Classify(c.src, c.mir); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// The range checksum is a sum: order does not matter, equal rows do not
// cancel, and it carries from the low word into the high one.
func TestRangeSum(t *testing.T) {
	var a, b, twice RangeSum
	a.Add("00000000000000010000000000000002")
	a.Add("ffffffffffffffffffffffffffffffff")
	b.Add("ffffffffffffffffffffffffffffffff")
	b.Add("00000000000000010000000000000002")
	if a != b || a.String() != "2 rows, checksum 00000000000000010000000000000001" {
		t.Fatalf("a %s, b %s", a, b)
	}
	twice.Add("00000000000000000000000000000005")
	twice.Add("00000000000000000000000000000005")
	if twice.Checksum() != "0000000000000000000000000000000a" {
		t.Fatalf("twice %s", twice)
	}
	if (RangeStat{Source: a, Mirror: b}).Differs() || !(RangeStat{Source: a, Mirror: twice}).Differs() {
		t.Fatal("Differs")
	}
}

// A difference is confirmed only when the mirror row is at or below the
// re-read's position.
func TestRecheck(t *testing.T) {
	if d, ok := Recheck("0a", KindChanged, "0005", "0004"); !ok || d != (Diff{Key: "0a", Kind: KindChanged, ReadAt: "0005", MirrorSeq: "0004"}) {
		t.Fatalf("%+v %v", d, ok)
	}
	if _, ok := Recheck("0a", "", "0005", "0004"); ok {
		t.Fatal("an agreeing key confirmed")
	}
	if _, ok := Recheck("0a", KindChanged, "0005", "0006"); ok || !Unsettled("0005", "0006") || Unsettled("0005", "0005") {
		t.Fatal("a key changed after the re-read confirmed")
	}
	if d, _ := Recheck("0a", KindMissing, "0005", ""); d.What() != "in the source (read at 0005), absent from the mirror" {
		t.Fatalf("%q", d.What())
	}
}

func TestReconcileResults(t *testing.T) {
	rs := Reconcile(ReconcileScope{SourceTable: "public.orders", Ranges: 3, DifferedRanges: 1, SourceRows: 5, MirrorLive: 5, Rechecked: 2, Settling: time.Second},
		[]Diff{{Key: "0b", Kind: KindGhost, ReadAt: "09", MirrorSeq: "03"}, {Key: "0a", Kind: KindGhost, ReadAt: "09", MirrorSeq: "02"},
			{Key: "0c", Kind: KindChanged, ReadAt: "09", MirrorSeq: "04"}})
	if len(rs) != 3 || rs[0].Check != CheckGhost || rs[1].Check != CheckMissing || rs[2].Check != CheckChanged {
		t.Fatalf("%+v", rs)
	}
	if rs[0].Verdict != Fail || rs[0].Observed != "2 ghost rows" || rs[0].Details() !=
		"key 0a: live in the mirror (_seq 02), absent from the source (read at 09)\nkey 0b: live in the mirror (_seq 03), absent from the source (read at 09)" {
		t.Fatalf("ghost %+v / %s", rs[0], rs[0].Details())
	}
	if rs[1].Verdict != Pass || rs[2].Details() != "key 0c: values differ: source read at 09, mirror _seq 04" {
		t.Fatalf("%+v %+v", rs[1], rs[2])
	}
	if want := "public.orders: 3 key ranges (1 differed), 5 source rows, 5 live mirror rows; 2 keys re-read, 0 unsettled; settled 1s"; rs[0].Scope != want {
		t.Fatalf("scope %q", rs[0].Scope)
	}
}

// creates − deletes per key, with duplicates counted once and truncates
// resetting every key.
func TestBalance(t *testing.T) {
	recs := []Record{
		{Key: "01", Op: "c", Seq: "10"}, {Key: "01", Op: "c", Seq: "10"}, {Key: "01", Op: "u", Seq: "20"}, // truncated at 15, updated: live
		{Key: "02", Op: "c", Seq: "11"}, {Key: "02", Op: "d", Seq: "21"}, // truncated, then a delete: deleted
		{Key: "03", Op: "u", Seq: "16"},                                  // live: its create predates the topic
		{Key: "04", Op: "r", Seq: "13"},                                  // truncated
		{Key: "05", Op: "r", Seq: "14"}, {Key: "05", Op: "r", Seq: "40"}, // truncated, read again
	}
	r := Balance(recs, []string{"15"}, map[string]bool{"01": true, "03": true, "05": true}, nil)
	if r.Verdict != Pass || r.Observed != "7 creates − 4 deletes = 3; 3 live mirror rows; 0 keys disagree" ||
		r.Scope != "9 changes of 5 keys in bronze, 1 truncate" {
		t.Fatalf("%+v", r)
	}
	r = Balance(recs, []string{"15"}, map[string]bool{"01": true, "02": true, "05": true, "06": true}, nil)
	if r.Verdict != Fail || r.Details() != "key 02: live in the mirror, bronze's changes leave it deleted\n"+
		"key 03: bronze's changes leave it live, the mirror does not hold it live\n"+
		"key 06: live in the mirror, bronze holds no change of it" {
		t.Fatalf("%+v\n%s", r, r.Details())
	}
	// a re-snapshot soft-deleted key 03 (a ghost row) without a bronze record
	r = Balance(recs, []string{"15"}, map[string]bool{"01": true, "05": true}, map[string]bool{"03": true})
	if r.Verdict != Pass || r.Observed != "7 creates − 5 deletes = 2; 2 live mirror rows; 0 keys disagree" {
		t.Fatalf("%+v", r)
	}
}

// A Debezium PostgreSQL blocking snapshot's reads sit at (0, L), below
// every streamed change: a read taken after a table truncate (L above the
// truncate's lsn) is not reset by it, as in the mirror
// (cdc.PostgresReadAfterTruncate); a read taken before it is. Found by the
// real-stack suite's blocking snapshot (2026-12-04): rows inserted while
// their events were lost and read after a streamed truncate counted as
// deleted.
func TestBalanceBlockingReadAfterTruncate(t *testing.T) {
	pg := func(first, lsn int) string { return fmt.Sprintf("%016x%016x", first, lsn) }
	recs := []Record{
		{Key: "01", Op: "c", Seq: pg(100, 100)},                                        // truncated
		{Key: "03", Op: "r", Seq: pg(0, 200)},                                          // read after the truncate: live
		{Key: "04", Op: "r", Seq: pg(0, 200)}, {Key: "04", Op: "u", Seq: pg(300, 300)}, // read after it, updated: live
		{Key: "05", Op: "r", Seq: pg(0, 140)}, // read before it: truncated
	}
	r := Balance(recs, []string{pg(150, 150)}, map[string]bool{"03": true, "04": true}, nil)
	if r.Verdict != Pass || r.Observed != "4 creates − 2 deletes = 2; 2 live mirror rows; 0 keys disagree" {
		t.Fatalf("%+v\n%s", r, r.Details())
	}
}

// The settling period is the p99 of the delays, floored and capped.
func TestSettling(t *testing.T) {
	var delays []time.Duration
	for i := 1; i <= 200; i++ {
		delays = append(delays, time.Duration(i)*time.Second)
	}
	if s, p := Settling(delays, time.Second, time.Hour); s != 198*time.Second || p != 198*time.Second {
		t.Fatalf("settle %s p99 %s", s, p)
	}
	if s, p := Settling(delays, 5*time.Minute, time.Hour); s != 5*time.Minute || p != 198*time.Second {
		t.Fatalf("floored: settle %s p99 %s", s, p)
	}
	if s, _ := Settling(delays, 0, time.Minute); s != time.Minute {
		t.Fatalf("capped: %s", s)
	}
	if s, p := Settling(nil, 30*time.Second, time.Hour); s != 30*time.Second || p != 0 {
		t.Fatalf("no delays: %s %s", s, p)
	}
	if s, p := Settling([]time.Duration{-time.Second}, 0, 0); s != 0 || p != 0 {
		t.Fatalf("a clock skew: %s %s", s, p)
	}
}
