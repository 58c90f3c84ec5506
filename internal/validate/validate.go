// Package validate holds the pure rules of lakemirror's validation checks
// (docs/validation.md): whether every key stayed in one Kafka partition,
// whether each key's operations follow a legal order, whether the offsets
// a table read join up, and whether its applied position only moves
// forward. It imports only the standard library and internal/cdc (the
// positions' rules); the adapters that read
// bronze, the mirror and Kafka live in internal/lake and activities.
package validate

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Verdicts of a check.
const (
	Pass = "pass"
	Fail = "fail"
)

// Names of the checks.
const (
	CheckPartitioning = "partitioning" // every key's events are in one Kafka partition
	CheckTransitions  = "transitions"  // every key's ops, in log order, follow a legal sequence
	CheckContinuity   = "continuity"   // the offsets read join up, the holes are Kafka's own, the position is retained
	CheckWatermark    = "watermark"    // the applied position never moves back; no row is above it
)

// MaxFindings is how many findings a Result names at most; Total counts
// all of them.
const MaxFindings = 20

// Finding is one violation: the key (hex of the encoded primary key) or
// the partition it concerns, and what is wrong. KeyText is the key as
// people read it ("order_id=1001", cdc.KeyText), set by NameKeys where the
// key columns are known; "" before that.
type Finding struct {
	Key       string `json:"key,omitempty"`
	KeyText   string `json:"key_text,omitempty"`
	Partition *int32 `json:"partition,omitempty"`
	What      string `json:"what"`
}

// Result is one run of one check: what it looked at (Scope), what it
// expected and observed (human-readable), its verdict (Pass or Fail) and
// up to MaxFindings findings, Total being the number found.
type Result struct {
	Check    string    `json:"check"`
	Scope    string    `json:"scope"`
	Expected string    `json:"expected"`
	Observed string    `json:"observed"`
	Verdict  string    `json:"verdict"`
	Findings []Finding `json:"findings,omitempty"`
	Total    int       `json:"total"`
}

// Details renders the findings as one line per finding ("key
// order_id=1001: what" when the key is named, else "key 0a: what" with
// the hex; or "partition 1: what"), with "... and N more" when Total
// exceeds them; "" when there are none.
func (r Result) Details() string {
	var b strings.Builder
	for i, f := range r.Findings {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch {
		case f.KeyText != "":
			fmt.Fprintf(&b, "key %s: %s", f.KeyText, f.What)
		case f.Key != "":
			fmt.Fprintf(&b, "key %s: %s", f.Key, f.What)
		case f.Partition != nil:
			fmt.Fprintf(&b, "partition %d: %s", *f.Partition, f.What)
		default:
			b.WriteString(f.What)
		}
	}
	if more := r.Total - len(r.Findings); more > 0 {
		fmt.Fprintf(&b, "\n... and %d more", more)
	}
	return b.String()
}

// finish sets the verdict from the findings and caps them.
func (r *Result) finish(found []Finding) {
	r.Total = len(found)
	r.Verdict = Pass
	if len(found) > 0 {
		r.Verdict = Fail
	}
	if len(found) > MaxFindings {
		found = found[:MaxFindings]
	}
	r.Findings = found
}

func part(p int32) *int32 { return &p }

// Record is one row change as bronze holds it: the key (hex), Kafka
// partition and offset, Debezium op (c, u, d, r) and position (`_seq` as
// hex words, so string order is log order).
type Record struct {
	Key       string
	Partition int32
	Offset    int64
	Op        string
	Seq       string
	SourceTs  int64 // source commit time of the change, µs since the epoch; 0 when unknown
}

// Partitioning checks that all events of a key are in one Kafka
// partition (Debezium keys its records by primary key, and per-key order
// holds only within a partition). A finding names each key seen in more
// than one partition, with the partitions and their event counts. Keys
// come out sorted. Adding partitions to a topic moves keys legitimately;
// this check then names them.
func Partitioning(recs []Record) Result {
	parts := map[string]map[int32]int{}
	for _, r := range recs {
		m := parts[r.Key]
		if m == nil {
			m = map[int32]int{}
			parts[r.Key] = m
		}
		m[r.Partition]++
	}
	var found []Finding
	for _, k := range slices.Sorted(maps.Keys(parts)) {
		m := parts[k]
		if len(m) < 2 {
			continue
		}
		var ps []string
		for _, p := range slices.Sorted(maps.Keys(m)) {
			ps = append(ps, fmt.Sprintf("%d (%s)", p, count(m[p], "event", "events")))
		}
		found = append(found, Finding{Key: k, What: "events in partitions " + strings.Join(ps, ", ")})
	}
	r := Result{Check: CheckPartitioning, Scope: count(len(recs), "event", "events") + " of " + count(len(parts), "key", "keys"),
		Expected: "every key in one partition",
		Observed: fmt.Sprintf("%d keys in more than one partition", len(found))}
	r.finish(found)
	return r
}

// readBeforeItsCreate reports whether read is a PostgreSQL source
// snapshot read at position (0, L) (Debezium's initial and blocking
// snapshot reads: cdc.PostgresEventWords) and the create c was written
// below L (cdc.PostgresWritten). Such a read sorts below every streamed
// change, also below the changes made before its snapshot: a blocking
// snapshot taken after a row was streamed as created sorts its read of the
// row before the create, although it read what the create wrote. Both
// positions are hex (cdc.Seq.Hex); any other pair gives false.
func readBeforeItsCreate(read, c Record) bool {
	if read.Op != "r" || c.Op != "c" {
		return false
	}
	rs, err := cdc.ParseSeqHex(read.Seq)
	if err != nil {
		return false
	}
	cs, err := cdc.ParseSeqHex(c.Seq)
	if err != nil {
		return false
	}
	l, ok := cdc.PostgresReadLSN(rs)
	if !ok {
		return false
	}
	w, ok := cdc.PostgresWritten(cs)
	return ok && w < l
}

// key states of Transitions
const (
	unknown = iota // no event seen yet (or a truncate since): anything is legal
	present        // after c, r or u
	deleted        // after d
)

// Transitions checks, per key, that its ops in log order (by Seq; events
// with equal Seq are one event delivered more than once and count once)
// are legal: no create (c) while the row exists (after c, r or u without
// a d between), and no update or delete (u, d) after a delete without a
// create (c or r) between. A key's first event may be anything: its
// earlier changes may predate the topic's retention or the connector.
// Snapshot reads (r) count as creates after a delete, and are legal while
// the row exists: Debezium's initial snapshot overlapping the stream and
// its incremental (signalled) snapshots re-read rows that already exist.
// A create right after a PostgreSQL source snapshot read is legal when it
// was written before the read's snapshot (readBeforeItsCreate): the read
// sorts first but saw the row the create made.
// Tombstones (null values, for log compaction) are not row changes and are
// not passed here. truncates holds the positions of truncate events (op t):
// a truncate removes every row, so each key's state is reset at it. A
// finding names each key at its first illegal step with the positions of
// the two events. Keys come out sorted.
func Transitions(recs []Record, truncates []string) Result {
	byKey := map[string][]Record{}
	for _, r := range recs {
		byKey[r.Key] = append(byKey[r.Key], r)
	}
	truncs := slices.Sorted(slices.Values(truncates))
	var found []Finding
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		evs := byKey[k]
		slices.SortStableFunc(evs, func(a, b Record) int {
			return cmp.Or(strings.Compare(a.Seq, b.Seq), cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Offset, b.Offset))
		})
		state, prev := unknown, Record{}
		for i, e := range evs {
			if i > 0 && e.Seq == prev.Seq {
				continue // the same event again
			}
			if i > 0 {
				// a truncate between the previous event and this one resets the key
				j, _ := slices.BinarySearch(truncs, prev.Seq)
				for ; j < len(truncs) && truncs[j] <= prev.Seq; j++ {
				}
				if j < len(truncs) && truncs[j] < e.Seq {
					state = unknown
				}
			}
			bad := ""
			switch e.Op {
			case "c":
				if state == present && !readBeforeItsCreate(prev, e) {
					bad = "create after " + opName(prev.Op) + " without a delete between"
				}
				state = present
			case "r":
				state = present
			case "u":
				if state == deleted {
					bad = "update after a delete without a create between"
				}
				state = present
			case "d":
				if state == deleted {
					bad = "delete after a delete without a create between"
				}
				state = deleted
			default:
				continue
			}
			if bad != "" {
				found = append(found, Finding{Key: k, What: fmt.Sprintf("%s (%s at %s, partition %d offset %d; then %s at %s, partition %d offset %d)",
					bad, prev.Op, prev.Seq, prev.Partition, prev.Offset, e.Op, e.Seq, e.Partition, e.Offset)})
				break
			}
			prev = e
		}
	}
	r := Result{Check: CheckTransitions, Scope: count(len(recs), "event", "events") + " of " + count(len(byKey), "key", "keys") + ", " + count(len(truncates), "truncate", "truncates"),
		Expected: "no create while a row exists, no update or delete after a delete",
		Observed: count(len(found), "key", "keys") + " with an illegal transition"}
	r.finish(found)
	return r
}

func opName(op string) string {
	switch op {
	case "c":
		return "a create"
	case "r":
		return "a snapshot read"
	case "u":
		return "an update"
	}
	return op
}

// Span is a half-open offset range [From, To) of one partition.
type Span struct {
	From, To int64
}

// Holes returns the offsets inside the covered ranges that are not among
// held (the offsets of one partition a table holds, any order, duplicates
// allowed), as sorted maximal spans. covered must be sorted and
// non-overlapping, as lake.Coverage keeps it.
func Holes(covered []Span, held []int64) []Span {
	hs := slices.Sorted(slices.Values(held))
	hs = slices.Compact(hs)
	var out []Span
	i := 0
	for _, c := range covered {
		next := c.From
		for ; i < len(hs) && hs[i] < c.To; i++ {
			if hs[i] < next {
				continue
			}
			if hs[i] > next {
				out = append(out, Span{next, hs[i]})
			}
			next = hs[i] + 1
		}
		if next < c.To {
			out = append(out, Span{next, c.To})
		}
	}
	return out
}

// PartitionOffsets is what Continuity knows of one partition: the ranges
// the table's batches covered (sorted, non-overlapping: bronze's
// lakemirror.covered), the table's position (the next offset it will
// read), the topic's log start and high watermark now, and the holes in
// the covered ranges with what Kafka returned for them.
type PartitionOffsets struct {
	Partition int32
	Covered   []Span
	Position  int64
	LogStart  int64
	End       int64
	Holes     []Hole
}

// Hole is a span inside the covered ranges that the table holds no record
// of. Retained reports whether Kafka still held the span when it was
// checked (at or above the log start); Found lists the offsets of the
// data records Kafka returned in it (read-committed), and Keys, when set,
// the key of the row change each of them carries (hex of the encoded
// primary key, as Finding.Key; "" for a record that is no row change or
// does not decode). A retained hole with no record found is Kafka's own
// (transaction markers, aborted transactions, offsets compacted away); a
// hole below the log start cannot be verified and is accepted, counted in
// Observed.
type Hole struct {
	Span
	Retained bool
	Found    []int64
	Keys     []string
}

// Continuity checks, per partition (in order), that the batches' ranges
// join up (one covered range: a gap between two is offsets no batch
// read), that they reach the table's position (a position beyond the
// covered end is offsets the mirror passed that bronze never held), that
// the position is not below the log start (records deleted by retention
// before they were read), and that every retained hole is Kafka's own
// (Found empty). Each violation is a finding naming the partition and the
// offsets; a hole's records are then named one finding each by the key of
// the row change they carry (Hole.Keys), so that a key whose change
// bronze and the mirror never got can be looked at, or reconciled.
func Continuity(parts []PartitionOffsets) Result {
	var found []Finding
	holes, unverified, records := 0, 0, 0
	slices.SortFunc(parts, func(a, b PartitionOffsets) int { return cmp.Compare(a.Partition, b.Partition) })
	for _, p := range parts {
		for i := 1; i < len(p.Covered); i++ {
			found = append(found, Finding{Partition: part(p.Partition),
				What: fmt.Sprintf("offsets [%d, %d) were never read: the batches before and after them do not join up", p.Covered[i-1].To, p.Covered[i].From)})
		}
		if n := len(p.Covered); n > 0 && p.Covered[n-1].To < p.Position {
			found = append(found, Finding{Partition: part(p.Partition),
				What: fmt.Sprintf("the table's position is %d but bronze covers only up to %d", p.Position, p.Covered[n-1].To)})
		}
		if p.Position < p.LogStart {
			found = append(found, Finding{Partition: part(p.Partition),
				What: fmt.Sprintf("the table's position %d is below the log start %d: records [%d, %d) were deleted before they were read", p.Position, p.LogStart, p.Position, p.LogStart)})
		}
		for _, h := range p.Holes {
			holes++
			if !h.Retained {
				unverified++
				continue
			}
			if len(h.Found) > 0 {
				records += len(h.Found)
				found = append(found, Finding{Partition: part(p.Partition),
					What: fmt.Sprintf("offsets [%d, %d) are missing from bronze but Kafka holds %d records there (first %d)", h.From, h.To, len(h.Found), h.Found[0])})
				for i, k := range h.Keys {
					if k != "" && i < len(h.Found) {
						found = append(found, Finding{Key: k, Partition: part(p.Partition),
							What: fmt.Sprintf("its change at partition %d offset %d is missing from bronze (Kafka holds it)", p.Partition, h.Found[i])})
					}
				}
			}
		}
	}
	r := Result{Check: CheckContinuity, Scope: fmt.Sprintf("%d partitions", len(parts)),
		Expected: "covered offsets join up to the position, the position is retained, holes are Kafka's own",
		Observed: fmt.Sprintf("%d violations; %d holes (%d below the log start, unverified; %d records missing)", len(found), holes, unverified, records)}
	r.finish(found)
	return r
}

// Point is one mirror Iceberg snapshot's bookkeeping, oldest first: its
// snapshot id (0 for the table properties, which a batch that changed no
// row updates without a snapshot), batch sequence number (0 when the
// commit was not a batch), the applied position it recorded (hex `_seq`,
// "" when none) and its end offsets (nil when none).
type Point struct {
	Snapshot   int64
	BatchSeq   int64
	Applied    string
	EndOffsets map[int32]int64
}

// String names the point: "snapshot N (batch B)", or "the table
// properties (batch B)".
func (p Point) String() string {
	if p.Snapshot == 0 {
		return fmt.Sprintf("the table properties (batch %d)", p.BatchSeq)
	}
	return fmt.Sprintf("snapshot %d (batch %d)", p.Snapshot, p.BatchSeq)
}

// Watermarks checks that, across the snapshots in order, the recorded
// applied position never moves back, that no partition's end offset
// moves back (a consumer reset to an older offset), and that the mirror's
// highest `_seq` (maxSeq, "" for an empty mirror) is not above applied,
// the position recorded now. Snapshots without a recorded position or
// offsets (compaction, purge) are skipped for that part. A finding names
// the snapshot or the partition and both values.
func Watermarks(points []Point, maxSeq, applied string) Result {
	var found []Finding
	high, highAt := "", Point{}
	ends, endAt := map[int32]int64{}, map[int32]Point{}
	for _, p := range points {
		if p.Applied != "" {
			if p.Applied < high {
				found = append(found, Finding{What: fmt.Sprintf("%s records applied position %s, below %s of %s", p, cdc.DescribeHex(p.Applied), cdc.DescribeHex(high), highAt)})
			} else {
				high, highAt = p.Applied, p
			}
		}
		for _, pt := range slices.Sorted(maps.Keys(p.EndOffsets)) {
			o := p.EndOffsets[pt]
			if prev, ok := ends[pt]; ok && o < prev {
				found = append(found, Finding{Partition: part(pt), What: fmt.Sprintf("%s moved the position back from %d (%s) to %d: a consumer reset", p, prev, endAt[pt], o)})
				continue
			}
			ends[pt], endAt[pt] = o, p
		}
	}
	if maxSeq != "" && maxSeq > applied {
		found = append(found, Finding{What: fmt.Sprintf("a mirror row has _seq %s, above the recorded applied position %s", withPosition(maxSeq), cdc.DescribeHex(applied))})
	}
	r := Result{Check: CheckWatermark, Scope: fmt.Sprintf("%d mirror snapshots", len(points)),
		Expected: "applied position and end offsets never move back; mirror _seq ≤ applied position",
		Observed: fmt.Sprintf("applied position %s, mirror max _seq %s", cdc.DescribeHex(applied), cdc.DescribeHex(maxSeq))}
	r.finish(found)
	return r
}

// withPosition is a `_seq` value (hex) followed by the source position it
// holds (cdc.DescribeHex) in parentheses, when it holds one.
func withPosition(h string) string {
	if d := cdc.DescribeHex(h); d != h {
		return h + " (" + d + ")"
	}
	return h
}

// EventTimeWatermark is the newest source commit time up to which every
// partition's changes are applied (µs since the epoch; 0 when none is
// known), from recs, the applied row changes, and parts (Position and End
// per partition). Within a partition changes arrive in source order
// (Debezium keys records by primary key; per partition the connector's
// log order holds), so a partition is complete up to the newest source
// time applied from it; a partition whose position has reached its end
// offset holds nothing pending and does not hold the watermark back. So:
// the oldest of the newest applied times of the partitions still behind,
// or, when none is behind, the newest applied time of all. A partition
// behind that has applied no change with a known time leaves nothing
// complete (0). A transaction's changes spread over partitions count as
// complete when each partition has passed its commit time.
func EventTimeWatermark(recs []Record, parts []PartitionOffsets) int64 {
	newest := map[int32]int64{}
	var all int64
	for _, r := range recs {
		if r.SourceTs > newest[r.Partition] {
			newest[r.Partition] = r.SourceTs
		}
		all = max(all, r.SourceTs)
	}
	wm, behind := int64(0), false
	for _, p := range parts {
		if p.Position >= p.End {
			continue
		}
		t := newest[p.Partition]
		if !behind || t < wm {
			wm = t
		}
		behind = true
	}
	if !behind {
		return all
	}
	return wm
}

// count renders n with the noun that fits it ("1 key", "2 keys"), as
// internal/human.Count does outside the core.
func count(n int, singular, plural string) string {
	if n == 1 {
		return "1 " + singular
	}
	return strconv.Itoa(n) + " " + plural
}
