package validate

import (
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Names of the reconciliation checks (docs/validation.md, "Reconciliation").
const (
	CheckGhost   = "reconcile-ghost"   // live in the mirror, absent from the source
	CheckMissing = "reconcile-missing" // in the source, absent or soft-deleted in the mirror
	CheckChanged = "reconcile-changed" // same key in both, different values
	CheckBalance = "op-balance"        // bronze's creates − deletes per key agrees with the mirror's live rows
)

// Kinds of a keyed difference (Diff.Kind): the check that reports it.
const (
	KindGhost   = CheckGhost
	KindMissing = CheckMissing
	KindChanged = CheckChanged
)

// RowState is one side's view of a key: its digest (hex of a canonical
// hash of the compared columns' values), its `_seq` (hex; mirror side
// only) and whether it is soft-deleted (mirror side only).
type RowState struct {
	Digest  string
	Seq     string
	Deleted bool
}

// Classify compares a key's source row (nil: the source has no row for
// the key) with its mirror row (nil: the mirror holds none) and returns
// the kind of difference, "" when they agree: KindGhost when the mirror
// row is live and the source has none, KindMissing when the source has a
// row and the mirror has none or a soft-deleted one, KindChanged when
// both have a live row with different digests. A key absent from the
// source and soft-deleted (or absent) in the mirror agrees.
func Classify(src, mir *RowState) string {
	live := mir != nil && !mir.Deleted
	switch {
	case src == nil && live:
		return KindGhost
	case src == nil:
		return ""
	case !live:
		return KindMissing
	case src.Digest != mir.Digest:
		return KindChanged
	}
	return ""
}

// RangeSum is the order-independent summary of one key range on one
// side: the row count and the sum, modulo 2^128, of the rows' digests
// (the first 16 bytes of each, as two big-endian 64-bit words added with
// carry). A sum rather than an XOR: two equal rows do not cancel.
type RangeSum struct {
	Count int64
	hi    uint64
	lo    uint64
}

// Add adds one row's digest (hex; shorter digests are zero-padded, bad
// hex counts as zeros).
func (s *RangeSum) Add(digest string) {
	var b [16]byte
	raw, _ := hex.DecodeString(digest)
	copy(b[:], raw)
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	var carry uint64
	s.lo, carry = s.lo+lo, 0
	if s.lo < lo {
		carry = 1
	}
	s.hi += hi + carry
	s.Count++
}

// Checksum is the sum as 32 hex digits.
func (s RangeSum) Checksum() string { return fmt.Sprintf("%016x%016x", s.hi, s.lo) }

// String is "<count> rows, checksum <hex>".
func (s RangeSum) String() string { return fmt.Sprintf("%d rows, checksum %s", s.Count, s.Checksum()) }

// Diff is one key whose source row and mirror row disagree: the key (hex
// of the encoded primary key), the kind (KindGhost, KindMissing,
// KindChanged), the source position the source row was read at (hex
// `_seq`) and the mirror row's `_seq` ("" when the mirror has none).
type Diff struct {
	Key       string `json:"key"`
	KeyText   string `json:"key_text,omitempty"` // the key as "col=value" (NameDiffKeys); "" where not named
	Kind      string `json:"kind"`
	ReadAt    string `json:"read_at"`
	MirrorSeq string `json:"mirror_seq,omitempty"`
}

// What describes the difference for a finding.
func (d Diff) What() string {
	switch d.Kind {
	case KindGhost:
		return fmt.Sprintf("live in the mirror (_seq %s), absent from the source (read at %s)", d.MirrorSeq, d.ReadAt)
	case KindMissing:
		if d.MirrorSeq == "" {
			return fmt.Sprintf("in the source (read at %s), absent from the mirror", d.ReadAt)
		}
		return fmt.Sprintf("in the source (read at %s), soft-deleted in the mirror (_seq %s)", d.ReadAt, d.MirrorSeq)
	}
	return fmt.Sprintf("values differ: source read at %s, mirror _seq %s", d.ReadAt, d.MirrorSeq)
}

// Recheck decides what a candidate difference found in a first
// comparison becomes after the key was read again from the source at
// position readAt (hex `_seq`) and the mirror caught up past it: kind is
// Classify's verdict of the re-read pair and mirrorSeq the mirror row's
// `_seq` then ("" when none). It returns the confirmed difference and
// true, or false when the key agrees now (the first comparison saw a
// change the mirror had not applied yet, or one it applied after the
// first source read) or when the mirror row is above readAt (it changed
// again after the re-read: the pair is not comparable and the key is
// counted as unsettled by the caller). Only a difference the mirror
// still shows at a position at or below the source read is reported.
func Recheck(key, kind, readAt, mirrorSeq string) (Diff, bool) {
	if kind == "" || mirrorSeq > readAt {
		return Diff{}, false
	}
	return Diff{Key: key, Kind: kind, ReadAt: readAt, MirrorSeq: mirrorSeq}, true
}

// Unsettled reports whether a re-read key could not be compared: its
// mirror row is above the re-read's position (changed at the source
// after the re-read).
func Unsettled(readAt, mirrorSeq string) bool { return mirrorSeq > readAt }

// RangeStat is one compared key range: the source chunk's summary and
// the mirror's summary over the same keys.
type RangeStat struct {
	Source, Mirror RangeSum
}

// Differs reports whether the two summaries differ.
func (r RangeStat) Differs() bool { return r.Source != r.Mirror }

// ReconcileScope summarizes a run for each check's scope: the source
// table, the key ranges read from it and how many differed, the rows
// read from it, the mirror's live rows at the final read, the candidate
// keys re-read and how many of them were unsettled (changed again after
// the re-read), and the settling period.
type ReconcileScope struct {
	SourceTable    string        `json:"source_table"`
	Ranges         int           `json:"ranges"`
	DifferedRanges int           `json:"differed_ranges"`
	SourceRows     int64         `json:"source_rows"`
	MirrorLive     int64         `json:"mirror_live"`
	Rechecked      int           `json:"rechecked"`
	Unsettled      int           `json:"unsettled"`
	Settling       time.Duration `json:"settling"`
}

func (s ReconcileScope) String() string {
	return fmt.Sprintf("%s: %d key ranges (%d differed), %d source rows, %d live mirror rows; %d keys re-read, %d unsettled; settled %s",
		s.SourceTable, s.Ranges, s.DifferedRanges, s.SourceRows, s.MirrorLive, s.Rechecked, s.Unsettled, s.Settling)
}

// Reconcile turns the confirmed differences of a run into the three
// keyed checks' results, in the order ghost, missing, changed, each with
// its keys named (sorted) and the run's scope.
func Reconcile(scope ReconcileScope, diffs []Diff) []Result {
	by := map[string][]Finding{}
	sorted := slices.Clone(diffs)
	slices.SortFunc(sorted, func(a, b Diff) int { return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Key, b.Key)) })
	for _, d := range sorted {
		by[d.Kind] = append(by[d.Kind], Finding{Key: d.Key, KeyText: d.KeyText, What: d.What()})
	}
	defs := []struct{ check, expected, noun string }{
		{CheckGhost, "no live mirror row the source lacks", "ghost rows"},
		{CheckMissing, "every source row live in the mirror", "missing rows"},
		{CheckChanged, "every row's values equal to the source's", "changed rows"},
	}
	var out []Result
	for _, d := range defs {
		r := Result{Check: d.check, Scope: scope.String(), Expected: d.expected,
			Observed: fmt.Sprintf("%d %s", len(by[d.check]), d.noun)}
		r.finish(by[d.check])
		out = append(out, r)
	}
	return out
}

// Balance checks the operation balance: per key, bronze's row changes in
// log order (by Seq, an equal Seq counted once; truncates, by position,
// reset every key, except a PostgreSQL source snapshot read at (0, L)
// taken after the truncate, cdc.PostgresReadAfterTruncate, as the mirror
// applies them) count +1 for a create (c, r or u of a key not live: a
// key's first change may be an update whose create predates the topic's
// retention) and −1 for a delete (d, or a truncate, of a live key), which telescopes to whether bronze
// says the key is live now. Their sum, creates − deletes, must equal the
// mirror's live rows, and each key must agree: a finding names every key
// bronze holds live that the mirror does not (or the reverse). live is
// the set of the mirror's live keys (hex). loadDeleted holds the keys
// the mirror holds soft-deleted at the position of a direct re-snapshot:
// it deletes the ghost rows it finds there without a bronze record, so
// such a key counts one delete at its end. Keys come out sorted.
func Balance(recs []Record, truncates []string, live, loadDeleted map[string]bool) Result {
	byKey := map[string][]Record{}
	for _, r := range recs {
		byKey[r.Key] = append(byKey[r.Key], r)
	}
	truncs := slices.Sorted(slices.Values(truncates))
	// truncated: a truncate above the change at prev (and below next, when
	// next is not "") applies to it: not when prev is a PostgreSQL source
	// snapshot read taken after the truncate (a Debezium blocking snapshot's
	// read sits at (0, L), below every streamed change)
	truncated := func(prev, next string) bool {
		j, _ := slices.BinarySearch(truncs, prev)
		for ; j < len(truncs) && truncs[j] <= prev; j++ {
		}
		for ; j < len(truncs) && (next == "" || truncs[j] < next); j++ {
			if !readAfterTruncate(prev, truncs[j]) {
				return true
			}
		}
		return false
	}
	var creates, deletes int64
	net := map[string]bool{}
	for k, evs := range byKey {
		slices.SortStableFunc(evs, func(a, b Record) int { return strings.Compare(a.Seq, b.Seq) })
		on, prev := false, ""
		for i, e := range evs {
			if i > 0 && e.Seq == prev {
				continue
			}
			if i > 0 && on && truncated(prev, e.Seq) {
				on = false
				deletes++
			}
			switch e.Op {
			case "c", "r", "u":
				if !on {
					creates++
				}
				on = true
			case "d":
				if on {
					deletes++
				}
				on = false
			}
			prev = e.Seq
		}
		if on && (truncated(prev, "") || loadDeleted[k]) {
			on = false
			deletes++
		}
		net[k] = on
	}
	var found []Finding
	keys := map[string]bool{}
	for k := range net {
		keys[k] = true
	}
	for k := range live {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		switch b, m := net[k], live[k]; {
		case b && !m:
			found = append(found, Finding{Key: k, What: "bronze's changes leave it live, the mirror does not hold it live"})
		case m && !b:
			if _, ok := net[k]; ok {
				found = append(found, Finding{Key: k, What: "live in the mirror, bronze's changes leave it deleted"})
			} else {
				found = append(found, Finding{Key: k, What: "live in the mirror, bronze holds no change of it"})
			}
		}
	}
	r := Result{Check: CheckBalance, Scope: count(len(recs), "change", "changes") + " of " + count(len(byKey), "key", "keys") + " in bronze, " + count(len(truncates), "truncate", "truncates"),
		Expected: "creates − deletes = live mirror rows, key by key",
		Observed: fmt.Sprintf("%d creates − %d deletes = %d; %d live mirror rows; %d keys disagree", creates, deletes, creates-deletes, len(live), len(found))}
	r.finish(found)
	return r
}

// readAfterTruncate reports whether the change at hex position s is a
// PostgreSQL source snapshot read taken after the truncate at hex
// position t (cdc.PostgresReadAfterTruncate); false for anything else.
func readAfterTruncate(s, t string) bool {
	ss, err := cdc.ParseSeqHex(s)
	if err != nil {
		return false
	}
	ts, err := cdc.ParseSeqHex(t)
	return err == nil && cdc.PostgresReadAfterTruncate(ss, ts)
}

// Settling is the settling period of a reconciliation: how long after a
// source read the pipeline is given to apply every change committed
// before it. delays are recent source-commit-to-apply delays (bronze's
// ingest time − source commit time, any order); the period is their
// 99th percentile (nearest rank), at least floor and at most ceiling
// (ceiling ≤ 0: no cap). With no delays it is floor. p99 is the
// measured percentile (0 with no delays).
func Settling(delays []time.Duration, floor, ceiling time.Duration) (settle, p99 time.Duration) {
	if len(delays) == 0 {
		return floor, 0
	}
	d := slices.Sorted(slices.Values(delays))
	rank := (99*len(d) + 99) / 100 // ceil(0.99 n)
	p99 = max(d[rank-1], 0)
	settle = max(p99, floor)
	if ceiling > 0 {
		settle = min(settle, ceiling)
	}
	return settle, p99
}
