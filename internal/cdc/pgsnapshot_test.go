package cdc

import (
	"reflect"
	"testing"
)

func TestParsePostgresSnapshot(t *testing.T) {
	s, err := ParsePostgresSnapshot(900, "740:748:740,745")
	if err != nil {
		t.Fatal(err)
	}
	if want := (PostgresSnapshot{LSN: 900, Xmin: 740, Xmax: 748, Xip: []uint64{740, 745}}); !reflect.DeepEqual(s, want) {
		t.Fatalf("%+v, want %+v", s, want)
	}
	if s, err = ParsePostgresSnapshot(1, "748:748:"); err != nil || s.Xip != nil || s.Xmin != 748 || s.Xmax != 748 {
		t.Fatalf("%+v %v", s, err)
	}
	for _, bad := range []string{"", "1:2", "a:2:", "1:2:x", "1:2:3:4"} {
		if _, err := ParsePostgresSnapshot(1, bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestPostgresSnapshotInvisible(t *testing.T) {
	s := PostgresSnapshot{LSN: 900, Xmin: 740, Xmax: 748, Xip: []uint64{740, 745}}
	for x, want := range map[uint64]bool{1: false, 739: false, 740: true, 741: false, 745: true, 747: false, 748: true, 9000: true} {
		if got := s.Invisible(x); got != want {
			t.Errorf("Invisible(%d) = %v, want %v", x, got, want)
		}
	}
	// 64-bit ids with epoch 1; Debezium's 32-bit ids placed in the epoch nearest xmax
	e := uint64(1) << 32
	s = PostgresSnapshot{Xmin: e + 5, Xmax: e + 9, Xip: []uint64{e + 6}}
	for x, want := range map[uint64]bool{6: true, 7: false, 9: true, 4: false, 0xfffffff0: false, e + 6: true, e + 4: false} {
		if got := s.Invisible(x); got != want {
			t.Errorf("Invisible(%#x) = %v, want %v", x, got, want)
		}
	}
}

func TestPostgresSnapshotLift(t *testing.T) {
	s := PostgresSnapshot{LSN: 900, Xmin: 740, Xmax: 748, Xip: []uint64{745}}
	cases := []struct {
		seq  Seq
		tx   string
		want Seq
	}{
		{PostgresSeq(850, 880), "745", PostgresSeq(900, 880)}, // in progress at the snapshot, written before it
		{PostgresSeq(850, 880), "750", PostgresSeq(900, 880)}, // started after the snapshot was taken (before its LSN was read)
		{PostgresSeq(850, 880), "744", PostgresSeq(850, 880)}, // seen by the snapshot
		{PostgresSeq(850, 880), "", PostgresSeq(850, 880)},    // no transaction id
		{PostgresSeq(900, 0), "745", PostgresSeq(900, 0)},     // not below the rows
		{PostgresSeq(900, 950), "745", PostgresSeq(900, 950)}, // above the rows already
		{PostgresSeq(0, 880), "745", PostgresSeq(900, 880)},   // (a blocking read never reaches Lift: the mirror skips snapshot reads)
		{SeqOf(1, 2, 3), "745", SeqOf(1, 2, 3)},               // not a PostgreSQL position
	}
	far := PostgresSnapshot{LSN: 1<<34 + 900, Xmin: 740, Xmax: 748, Xip: []uint64{745}}
	for first, want := range map[uint64]Seq{900: PostgresSeq(900, 880), 901: PostgresSeq(1<<34+900, 880)} {
		e := &Event{Seq: PostgresSeq(first, 880), TxID: "745"} // 2³¹ transactions ago, or just before
		far.Lift(e)
		if e.Seq != want {
			t.Errorf("Lift(first word %d) = %s, want %s", first, e.Seq, want)
		}
	}
	for _, c := range cases {
		e := &Event{Seq: c.seq, TxID: c.tx}
		changed := s.Lift(e)
		if e.Seq != c.want || changed != (c.seq != c.want) {
			t.Errorf("Lift(%s, tx %q) = %s (%v), want %s", c.seq, c.tx, e.Seq, changed, c.want)
		}
	}
}
