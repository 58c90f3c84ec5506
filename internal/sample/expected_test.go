package sample

import (
	"fmt"
	"slices"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

func str(s string) *string { return &s }

func rowsEqual(a, b Row) bool {
	if (a.Note == nil) != (b.Note == nil) || a.Note != nil && *a.Note != *b.Note {
		return false
	}
	a.Note, b.Note = nil, nil
	return a == b
}

func fmtRow(r Row) string {
	n := "NULL"
	if r.Note != nil {
		n = fmt.Sprintf("%q", *r.Note)
	}
	return fmt.Sprintf("{%d %q %q %q note=%s upd=%d del=%v seq=%s ts=%d}",
		r.OrderID, r.Customer, r.Status, r.Amount, n, r.UpdatedAtMicros, r.Deleted, r.Seq, r.SourceTsMicros)
}

// TestExpectedHandChecked pins the oracle on a stream small enough to
// read: every value below was checked by hand against the generated JSON
// (base64 amounts decoded, ZonedTimestamps converted, sequence/lsn read
// off source).
//
//	txn 1227 commit 2026-01-15T09:00:00Z       d 679 (never seen, key-only before) lsn 16777504, then c 1001 lsn 16777888
//	txn 1228 commit …:00.001808, last commit 16777912: d 1001 lsn 16778320, c 1002 lsn 16778760
//	txn 1231 commit …:00.008163, last commit 16778816: c 1003 lsn 16779304
//	txn 1234 commit …:00.015255, last commit 16779360: u 1002 placed → paid, lsn 16779568
//	txn 1236 commit …:00.019633, last commit 16779632: u 1002 paid → cancelled, lsn 16779736
func TestExpectedHandChecked(t *testing.T) {
	s := Generate(Options{Seed: 1, Inserts: 3, Updates: 2, Deletes: 1, UnseenDeletes: 1, Tombstones: true})
	const t0 = 1768467600000000 // 2026-01-15T09:00:00Z in µs
	want := []Row{
		{OrderID: 679, Deleted: true, Seq: cdc.PostgresSeq(16777504, 16777504), SourceTsMicros: t0}, // first transaction: sequence [null,"16777504"]
		{OrderID: 1001, Customer: "Edsger Dijkstra", Status: "placed", Amount: "816.53", Note: str("after 6 pm"),
			UpdatedAtMicros: t0 - 715, Deleted: true, Seq: cdc.PostgresSeq(16778320, 16778320), SourceTsMicros: t0 + 1808},
		{OrderID: 1002, Customer: "Zoë Ørsted", Status: "cancelled", Amount: "2097.26", Note: str("address changed"),
			UpdatedAtMicros: t0 + 19500, Seq: cdc.PostgresSeq(16779736, 16779736), SourceTsMicros: t0 + 19633},
		{OrderID: 1003, Customer: "Zoë Ørsted", Status: "placed", Amount: "1652.03", Note: str(`deliver to back\office`),
			UpdatedAtMicros: t0 + 7742, Seq: cdc.PostgresSeq(16779304, 16779304), SourceTsMicros: t0 + 8163},
	}
	got := s.Expected()
	if !slices.EqualFunc(got, want, rowsEqual) {
		for _, r := range got {
			t.Logf("got  %s", fmtRow(r))
		}
		for _, r := range want {
			t.Logf("want %s", fmtRow(r))
		}
		t.Fatal("Expected() differs from the hand-checked rows")
	}
	if n := len(s.Clean); n != 9 { // 7 changes + 2 tombstones
		t.Fatalf("len(Clean) = %d, want 9", n)
	}
}

// With full replica identity the same changes carry before images; the
// mirror differs only for never-seen deletes, which now keep values.
func TestExpectedReplicaIdentity(t *testing.T) {
	o := faulty
	def := Generate(o).Expected()
	o.ReplicaIdentityFull = true
	full := Generate(o).Expected()
	if len(def) != len(full) {
		t.Fatalf("%d vs %d rows", len(def), len(full))
	}
	inserted := map[int64]bool{}
	for _, m := range Generate(o).Clean {
		if m.Op == 'c' {
			inserted[m.OrderID] = true
		}
	}
	unseen, deleted := 0, 0
	for i := range def {
		d, f := def[i], full[i]
		if d.Deleted {
			deleted++
		}
		if inserted[d.OrderID] {
			if !rowsEqual(d, f) {
				t.Fatalf("row %d differs:\n%s\n%s", d.OrderID, fmtRow(d), fmtRow(f))
			}
			continue
		}
		unseen++
		if !d.Deleted || !f.Deleted || d.Customer != "" || d.Amount != "" || d.UpdatedAtMicros != 0 {
			t.Fatalf("default identity unseen delete: %s", fmtRow(d))
		}
		if f.Customer == "" || f.Status != "delivered" || f.Amount == "" || f.UpdatedAtMicros == 0 || f.Seq != d.Seq {
			t.Fatalf("full identity unseen delete: %s", fmtRow(f))
		}
	}
	if unseen != o.UnseenDeletes || deleted != o.Deletes+o.UnseenDeletes {
		t.Fatalf("%d unseen and %d deleted rows, want %d and %d", unseen, deleted, o.UnseenDeletes, o.Deletes+o.UnseenDeletes)
	}
	if len(def) != o.Inserts+o.UnseenDeletes {
		t.Fatalf("%d rows, want %d", len(def), o.Inserts+o.UnseenDeletes)
	}
}
