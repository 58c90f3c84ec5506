package cut

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// ev is a PostgreSQL change at lsn whose transaction's previous commit
// was at lastCommit: (max(lastCommit, lsn), lsn) (cdc.PostgresEventWords).
func ev(lastCommit, lsn uint64) cdc.Seq { return cdc.PostgresSeq(max(lastCommit, lsn), lsn) }

func TestCutOffsetGolden(t *testing.T) {
	// T1 commits at LSN 100 (its changes at 95 and 97, the previous
	// commit at 90), T2 at 110 (changes at 105 and 107).
	w1, err := CommitPosition(Postgres, "501:100")
	mustNil(t, "T1", err)
	w0, err := CommitPosition(Postgres, "500:90")
	mustNil(t, "T0", err)
	w2, err := CommitPosition(Postgres, "502:110")
	mustNil(t, "T2", err)
	stream := []At{{10, ev(90, 95)}, {11, ev(90, 97)}, {12, ""}, {13, ev(100, 105)}, {14, ev(100, 107)}}
	for _, c := range []struct {
		name string
		recs []At
		w    cdc.Seq
		want int64
	}{
		{"cut after T1, its tombstone with it", stream, w1, 13},
		{"W past the batch: all of it", stream, w2, 15},
		{"W below the batch: none of it", stream, w0, 10},
		{"a redelivery of T1 after T2 goes with the rest", []At{{10, ev(90, 95)}, {11, ev(100, 105)}, {12, ev(90, 95)}}, w1, 11},
		{"records without a position only", []At{{10, ""}, {11, ""}}, w0, 12},
		{"no records", nil, w1, 20},
		// Debezium blocking snapshot reads at (0, L): below every W by
		// position, but holding the rows as of L
		{"a source snapshot read taken above W's commit cuts", []At{{10, ev(90, 95)}, {11, cdc.PostgresSeq(0, 5000)}, {12, cdc.PostgresSeq(0, 5000)}}, w1, 11},
		{"a source snapshot read taken at W's commit does not", []At{{10, ev(90, 95)}, {11, cdc.PostgresSeq(0, 100)}, {12, ev(100, 105)}}, w1, 12},
		{"a source snapshot read taken below W's commit does not", []At{{10, cdc.PostgresSeq(0, 96)}, {11, ev(90, 97)}, {12, ev(100, 105)}}, w1, 12},
		{"a source snapshot read taken just above W's commit cuts", []At{{10, cdc.PostgresSeq(0, 101)}, {11, ev(90, 97)}}, w1, 10},
	} {
		end := int64(20)
		if len(c.recs) > 0 {
			end = c.recs[len(c.recs)-1].Offset + 1
		}
		if got, err := CutOffset(c.recs, c.w, end); err != nil || got != c.want {
			t.Errorf("%s: %d, %v; want %d", c.name, got, err, c.want)
		}
	}
	for _, c := range []struct {
		recs []At
		w    cdc.Seq
		err  string
	}{
		{stream, "", "cut: position of another width than the group's: W of 0 bytes"},
		{[]At{{10, cdc.MySQLSeq(1, 2, 3)}}, w1, "cut: position of another width than the group's: the record at offset 10 has 24 bytes, W 16"},
	} {
		if _, err := CutOffset(c.recs, c.w, 99); !errors.Is(err, ErrWidth) || err.Error() != c.err {
			t.Errorf("error %v, want %q", err, c.err)
		}
	}
}

// Random PostgreSQL transactions over keys spread on three partitions,
// each partition's records in commit order with tombstones after deletes
// and redeliveries (a connector restart: a stretch of the stream again,
// at later offsets), cut at the commit position of a random transaction
// (or below the first): below o_p(W) lie no change of a transaction
// committed above W and every first delivery of one at or below it; the
// table applied up to o_p(W) on every partition (merge rule: a change
// applies when above the key's stored position) is the table of exactly
// the transactions at or below W; applying the rest after it gives the
// table of everything.
func TestCutOffsetRandom(t *testing.T) {
	type rec struct {
		At
		tx  int // -1: a tombstone
		key int
	}
	type row struct {
		seq cdc.Seq
		tx  int
	}
	apply := func(tbl map[int]row, recs []rec) {
		for _, r := range recs {
			if r.Seq != "" && r.Seq > tbl[r.key].seq {
				tbl[r.key] = row{r.Seq, r.tx}
			}
		}
	}
	const parts = 3
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 41))
		nTx := 1 + rng.IntN(10)
		commits := make([]uint64, nTx+1) // commits[0]: the commit before the first
		commits[0] = 1000
		var streams [parts][]rec
		var changes []rec // every change once, in commit order
		for i := 1; i <= nTx; i++ {
			n := 1 + rng.IntN(5)
			lsn := commits[i-1]
			for range n {
				lsn += 1 + uint64(rng.IntN(3))
				key := rng.IntN(6)
				r := rec{At: At{Seq: ev(commits[i-1], lsn)}, tx: i, key: key}
				changes = append(changes, r)
				p := key % parts
				streams[p] = append(streams[p], r)
				if rng.IntN(4) == 0 {
					streams[p] = append(streams[p], rec{tx: -1, key: key})
				}
			}
			commits[i] = lsn + 1 + uint64(rng.IntN(3))
		}
		for p := range streams {
			if s := streams[p]; len(s) > 1 && rng.IntN(2) == 0 { // a restart: s[from:to] again after s[:to]
				from := rng.IntN(len(s))
				to := from + 1 + rng.IntN(len(s)-from)
				again := append([]rec(nil), s[from:to]...)
				streams[p] = append(append(append([]rec(nil), s[:to]...), again...), s[to:]...)
			}
			for i := range streams[p] {
				streams[p][i].Offset = int64(100 + i)
			}
		}
		k := rng.IntN(nTx + 1) // cut at transaction k (0: below the first)
		w, err := CommitPosition(Postgres, fmt.Sprintf("%d:%d", 700+k, commits[k]))
		mustNil(t, "W", err)
		atW, all, cutThenRest := map[int]row{}, map[int]row{}, map[int]row{}
		for _, r := range changes {
			if r.tx <= k {
				apply(atW, []rec{r})
			}
		}
		prefixes := map[int]row{}
		for p, s := range streams {
			ats := make([]At, len(s))
			for i, r := range s {
				ats[i] = r.At
			}
			end := int64(100 + len(s))
			o, err := CutOffset(ats, w, end)
			mustNil(t, "CutOffset", err)
			cut := int(o - 100)
			firstSeen := map[cdc.Seq]bool{}
			for i, r := range s {
				if r.Seq == "" {
					continue
				}
				first := !firstSeen[r.Seq]
				firstSeen[r.Seq] = true
				if i < cut && r.tx > k {
					t.Fatalf("seed %d partition %d: offset %d of transaction %d (above W at %d) below o_p(W) %d", seed, p, r.Offset, r.tx, k, o)
				}
				if first && r.tx <= k && i >= cut {
					t.Fatalf("seed %d partition %d: offset %d of transaction %d (at or below W at %d) at or above o_p(W) %d", seed, p, r.Offset, r.tx, k, o)
				}
			}
			apply(prefixes, s[:cut])
			apply(cutThenRest, s[:cut])
			apply(cutThenRest, s[cut:])
			apply(all, s)
		}
		if !maps.Equal(prefixes, atW) {
			t.Fatalf("seed %d: the table cut at W %v, at W %v", seed, prefixes, atW)
		}
		if !maps.Equal(cutThenRest, all) {
			t.Fatalf("seed %d: cut then rest %v, everything %v", seed, cutThenRest, all)
		}
	}
}
