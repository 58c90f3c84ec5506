package cdc

import (
	"math/rand/v2"
	"sort"
	"testing"
)

// A simulated WAL: transactions whose changes interleave, committed in a
// random order, streamed in commit order as logical decoding does. For
// every run, PostgresEventWords is strictly increasing along the stream,
// every change of a transaction committed before WAL position X sorts
// below (X, 0), and every change written after X sorts above it.
func TestPostgresEventWordsOrder(t *testing.T) {
	type change struct{ lsn uint64 }
	type txn struct {
		changes []change
		commit  uint64
	}
	for seed := uint64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		var open []*txn
		var done []*txn
		lsn := uint64(1000)
		for step := 0; step < 200; step++ {
			lsn += 8 + rng.Uint64N(64)
			switch r := rng.IntN(10); {
			case r < 3 || len(open) == 0:
				open = append(open, &txn{changes: []change{{lsn}}})
			case r < 7:
				tx := open[rng.IntN(len(open))]
				tx.changes = append(tx.changes, change{lsn})
			default:
				i := rng.IntN(len(open))
				open[i].commit = lsn
				done = append(done, open[i])
				open = append(open[:i], open[i+1:]...)
			}
		}
		sort.Slice(done, func(i, j int) bool { return done[i].commit < done[j].commit })
		var prev Seq
		var lastCommit uint64
		type streamed struct {
			seq       Seq
			lsn       uint64
			txCommit  uint64
			streamPos int
		}
		var all []streamed
		for _, tx := range done {
			for _, c := range tx.changes {
				seq := PostgresSeq(PostgresEventWords(lastCommit, c.lsn, false))
				if seq <= prev {
					t.Fatalf("seed %d: %s after %s: not increasing", seed, seq, prev)
				}
				prev = seq
				all = append(all, streamed{seq, c.lsn, tx.commit, len(all)})
			}
			lastCommit = tx.commit
		}
		for k := 0; k < 50; k++ {
			x := 1000 + rng.Uint64N(lsn-1000)
			at := PostgresSeq(x, 0)
			for _, e := range all {
				if e.txCommit < x && e.seq >= at {
					t.Fatalf("seed %d: change at %d of a transaction committed at %d sorts above a source snapshot at %d", seed, e.lsn, e.txCommit, x)
				}
				if e.lsn > x && e.seq <= at {
					t.Fatalf("seed %d: change at %d sorts below a source snapshot at %d", seed, e.lsn, x)
				}
			}
		}
	}
	// Debezium's blocking snapshot reads sort below every streamed change,
	// with or without a lastCommitLsn.
	if f, s := PostgresEventWords(0, 5000, true); f != 0 || s != 5000 {
		t.Fatalf("blocking read: (%d, %d)", f, s)
	}
	if f, s := PostgresEventWords(4000, 5000, true); f != 0 || s != 5000 {
		t.Fatalf("blocking read with a lastCommitLsn: (%d, %d)", f, s)
	}
	// lakemirror's own re-snapshot and repair reads, at [P, 0], keep (P, 0)
	if f, s := PostgresEventWords(4000, 0, true); f != 4000 || s != 0 {
		t.Fatalf("re-snapshot read: (%d, %d), want (4000, 0)", f, s)
	}
	if f, s := PostgresEventWords(0, 1, false); PostgresSeq(f, s) <= PostgresSeq(0, 1<<40) {
		t.Fatal("a streamed change sorts below a snapshot read")
	}
}

func TestPostgresReadAfterTruncate(t *testing.T) {
	trunc := PostgresSeq(150, 150)
	for _, c := range []struct {
		name    string
		read, t Seq
		want    bool
	}{
		{"read above the truncate's lsn", PostgresSeq(0, 200), trunc, true},
		{"read below it", PostgresSeq(0, 140), trunc, false},
		{"read at it", PostgresSeq(0, 150), trunc, false},
		{"truncate lifted above its lsn", PostgresSeq(0, 200), PostgresSeq(300, 180), true},
		{"a streamed change, not a read", PostgresSeq(200, 200), trunc, false},
		{"a re-snapshot row at (P, 0)", PostgresSeq(200, 0), trunc, false},
		{"zero read", PostgresSeq(0, 0), trunc, false},
		{"a truncate at (0, lsn)", PostgresSeq(0, 200), PostgresSeq(0, 100), false},
		{"MySQL positions", MySQLSeq(0, 200, 0), MySQLSeq(1, 150, 0), false},
		{"mixed shapes", PostgresSeq(0, 200), MySQLSeq(1, 150, 0), false},
	} {
		if got := PostgresReadAfterTruncate(c.read, c.t); got != c.want {
			t.Errorf("%s: PostgresReadAfterTruncate(%s, %s) = %v, want %v", c.name, c.read, c.t, got, c.want)
		}
	}
}
