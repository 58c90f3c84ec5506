// Package cut decides the consistent cut of a source group
// (docs/design.md, "Consistent cuts across a source group", issue 37):
// the newest source commit position W such that every transaction
// committed at or below W is completely applied in every table of the
// group it touched. It is a pure rule over what the group has seen (END
// events of the transaction topic, per-table progress reports); reading
// Kafka, workflows and tags are elsewhere.
package cut

import (
	"errors"
	"fmt"
	"slices"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// End is the END event of one source transaction, as read from the
// group's transaction metadata topic (Debezium
// provide.transaction.metadata=true, topic <topic.prefix>.transaction;
// Debezium docs, "Transaction metadata").
type End struct {
	// ID is the END's `id`, the transaction id as the connector gives it.
	// The Tracker matches it with the tables' `transaction.id` by TxKey
	// (for PostgreSQL the txId before the colon).
	ID string
	// Commit is the transaction's commit position in the tables' `_seq`
	// layout (CommitPosition).
	Commit cdc.Seq
	// Counts is the number of change events of the transaction per table
	// (`data_collections`: data_collection → event_count), tables named
	// as the Tracker's group names them. Tables outside the group play no
	// part in the cut (the Tracker keeps their counts for a table that
	// joins later: WithTables); a table absent or at 0 was not touched.
	Counts map[string]int64
	// TsMs is the END's `ts_ms`, milliseconds since the epoch: the
	// connector's processing time of the commit.
	TsMs int64
}

// Errors of the Tracker's inputs.
var (
	// ErrOutOfOrder: an END whose commit position is not above the
	// previous END's (ENDs come in commit order on the transaction
	// topic; a position that does not grow means it was not derived
	// from the commit, or the topic's order was lost).
	ErrOutOfOrder = errors.New("cut: END out of commit order")
	// ErrConflict: an END redelivered with the same id but another
	// position or other counts.
	ErrConflict = errors.New("cut: END redelivered with other content")
	// ErrWidth: a position whose width differs from the group's (the
	// group's tables share one connector and one position layout).
	ErrWidth = errors.New("cut: position of another width than the group's")
	// ErrUnknownTable: a progress report for a table not in the group.
	ErrUnknownTable = errors.New("cut: table not in the group")
)

// Hold is one table that keeps the cut from advancing.
type Hold struct {
	Table string
	// TxID and Commit are the oldest transaction not complete in Table
	// (transaction mode; "" in position mode).
	TxID   string
	Commit cdc.Seq
	// Missing is the number of the transaction's events in Table that
	// Table has not reported applied (its END count minus the applied
	// count; 0 in position mode).
	Missing int64
}

// Cut is the group's consistent cut.
type Cut struct {
	// W is the cut position; "" when there is none yet.
	W cdc.Seq
	// TxID and TsMs are those of the END at W (transaction mode; "" and
	// 0 in position mode or without a cut).
	TxID string
	TsMs int64
	// PerPosition is true for a position cut (PositionCut, no
	// transaction metadata): W is consistent per position, not per
	// transaction, and may fall between two changes of one transaction.
	PerPosition bool
	// Holds are the tables that keep the cut where it is, by table name:
	// in transaction mode those that have not completed the oldest END
	// above W (none when every END seen is complete); in position mode
	// those whose fetched position is the lowest, or that have reported
	// none.
	Holds []Hold
}

// openEnd is one END above W, with its TxKey.
type openEnd struct {
	End
	key string
}

// Tracker computes the consistent cut of one group from the END events of
// its transaction topic and the tables' progress reports. Inputs may
// arrive in any interleaving: an END before or after the tables' events,
// progress reports late, repeated or out of order (counts and positions
// only ever grow: a lower report than one already seen is ignored). ENDs
// must arrive in commit order; an END already seen (same id, or at or
// below W) is ignored. Transactions are matched by TxKey of the ENDs'
// ids and of the applied reports' ids, with the group's connector.
//
// Memory: the ENDs above W and, per table, the applied events (as order
// ranges, a pair per run of consecutive orders) of the transactions above
// W and of those whose END has not arrived. An applied
// report for a transaction already cut past and forgotten is kept until
// the Tracker is dropped (callers report the transactions of their new
// batches, so these are rare).
//
// A Tracker is not safe for concurrent use.
type Tracker struct {
	conn    string                      // source.connector, for TxKey
	tables  []string                    // the group, sorted
	inGroup map[string]bool             // table → member
	parked  map[string]bool             // table → taken out (WithoutTables): not waited for, what it applied kept
	applied map[string]map[string]int64 // table → TxKey → events applied, as counted (Applied)
	seen    map[string]map[string]*seen // table → TxKey → the events applied, by identity (AppliedEvents)
	fetched map[string]cdc.Seq          // table → every record at or below it fetched
	open    []openEnd                   // ENDs above W, in commit order
	byID    map[string]int              // TxKey → index in open
	width   int                         // byte width of the group's positions; 0 until the first
	last    cdc.Seq                     // the newest END's commit position
	cut     Cut                         // the transaction-mode cut so far (Holds not kept)
}

// NewTracker returns a Tracker for the group's tables (names as the ENDs'
// data_collections give them, e.g. "public.orders"; duplicates are
// ignored), whose connector (source.connector, "postgresql", ...; it
// decides TxKey) is connector.
func NewTracker(connector string, tables []string) *Tracker {
	t := &Tracker{
		conn:    connector,
		inGroup: map[string]bool{},
		parked:  map[string]bool{},
		applied: map[string]map[string]int64{},
		seen:    map[string]map[string]*seen{},
		fetched: map[string]cdc.Seq{},
		byID:    map[string]int{},
	}
	for _, tb := range tables {
		if !t.inGroup[tb] {
			t.inGroup[tb] = true
			t.tables = append(t.tables, tb)
			t.applied[tb] = map[string]int64{}
			t.seen[tb] = map[string]*seen{}
		}
	}
	slices.Sort(t.tables)
	return t
}

// checkWidth fixes the group's position width at the first position and
// refuses others.
func (t *Tracker) checkWidth(s cdc.Seq) error {
	if len(s) == 0 || len(s)%8 != 0 {
		return fmt.Errorf("%w: %d bytes", ErrWidth, len(s))
	}
	if t.width == 0 {
		t.width = len(s)
	}
	if len(s) != t.width {
		return fmt.Errorf("%w: %d words, the group's have %d", ErrWidth, len(s)/8, t.width/8)
	}
	return nil
}

// End records one END event. An END at or below W, or one whose TxKey is
// already held with the same content, is a redelivery and is ignored.
// Errors (the END is not recorded): ErrWidth, ErrConflict (same TxKey,
// other position or counts), ErrOutOfOrder (a new TxKey at or below the
// newest END's position), and an empty id or a negative count.
func (t *Tracker) End(e End) error {
	if e.ID == "" {
		return errors.New("cut: END with an empty transaction id")
	}
	if err := t.checkWidth(e.Commit); err != nil {
		return fmt.Errorf("END %q: %w", e.ID, err)
	}
	if e.Commit <= t.cut.W {
		return nil
	}
	key := TxKey(t.conn, e.ID)
	if i, ok := t.byID[key]; ok {
		if t.open[i].Commit != e.Commit || !sameCounts(t.open[i].Counts, e.Counts) {
			return fmt.Errorf("%w: %q", ErrConflict, e.ID)
		}
		return nil
	}
	if e.Commit <= t.last {
		return fmt.Errorf("%w: %q at %v, the previous END at %v", ErrOutOfOrder, e.ID, e.Commit, t.last)
	}
	counts := map[string]int64{}
	for tb, n := range e.Counts {
		if n < 0 {
			return fmt.Errorf("cut: END %q: table %q: negative count %d", e.ID, tb, n)
		}
		if n > 0 {
			counts[tb] = n
		}
	}
	e.Counts = counts
	t.byID[key] = len(t.open)
	t.open = append(t.open, openEnd{End: e, key: key})
	t.last = e.Commit
	t.advance()
	return nil
}

// sameCounts compares two ENDs' counts (0 and absent are the same).
func sameCounts(held, got map[string]int64) bool {
	for tb, n := range got {
		if n > 0 && held[tb] != n {
			return false
		}
	}
	for tb, n := range held {
		if got[tb] != n {
			return false
		}
	}
	return true
}

// seen is the set of one transaction's events a table has applied: their
// data_collection_order values, and the source positions of those that
// carry none.
type seen struct {
	orders Orders
	seqs   []cdc.Seq // sorted, distinct
}

// count is the number of distinct events in s.
func (s *seen) count() int64 {
	if s == nil {
		return 0
	}
	return s.orders.Len() + int64(len(s.seqs))
}

// Applied records that table has applied n events of transaction txID in
// all (a running total, not an increment: the sum of its batches' counts
// for the transaction). It is the count of reports made before the
// tables reported their events by identity (AppliedEvents, which
// replaces it: a count cannot tell a redelivered event from a new one).
// txID is a change event's `transaction.id` as the connector wrote it;
// reports are matched by TxKey, so that PostgreSQL ids of one
// transaction with different LSNs count together. A report below an
// earlier one for the same transaction is stale and ignored; a count
// above the END's (a record delivered twice) completes the transaction
// all the same. A transaction's applied count is the larger of this and
// AppliedEvents' distinct events. Errors: ErrUnknownTable, an empty txID,
// a negative n.
func (t *Tracker) Applied(table, txID string, n int64) error {
	if !t.inGroup[table] {
		return fmt.Errorf("%w: %q", ErrUnknownTable, table)
	}
	if txID == "" || n < 0 {
		return fmt.Errorf("cut: applied report of %q: transaction %q, count %d", table, txID, n)
	}
	key := TxKey(t.conn, txID)
	if n > t.applied[table][key] {
		t.applied[table][key] = n
		t.advance()
	}
	return nil
}

// AppliedEvents records that table has applied the events orders and
// seqs of transaction txID: orders their `transaction.data_collection_order`
// values (Orders: ranges, any order, each 1 ≤ lo ≤ hi), seqs the source
// positions (`_seq`) of its events that carry no order. last, when not
// "", is the highest position of the reported events: a report whose
// last is at or below W, of a transaction not above W, is of a
// transaction the cut has passed (every change of a transaction
// committed above W sorts above it: CommitPosition), a redelivery, and
// is not kept. Reports are
// unions, in any order and repeated: an event reported twice (a Kafka
// redelivery, a batch reported again) counts once, so the transaction is
// complete in table only when as many distinct events as its END counts
// have been applied (or the table fetched past its commit). txID is
// matched by TxKey as for Applied. Errors (nothing recorded):
// ErrUnknownTable, an empty txID, an order range not 1 ≤ lo ≤ hi,
// ErrWidth for a position.
func (t *Tracker) AppliedEvents(table, txID string, orders Orders, seqs []cdc.Seq, last cdc.Seq) error {
	if !t.inGroup[table] {
		return fmt.Errorf("%w: %q", ErrUnknownTable, table)
	}
	if txID == "" {
		return fmt.Errorf("cut: applied report of %q: empty transaction id", table)
	}
	if err := orders.Check(); err != nil {
		return fmt.Errorf("applied report of %q, transaction %q: %w", table, txID, err)
	}
	for i := range len(seqs) + 1 {
		s := last
		if i < len(seqs) {
			s = seqs[i]
		} else if last == "" {
			break
		}
		if err := t.checkWidth(s); err != nil {
			return fmt.Errorf("applied report of %q, transaction %q: %w", table, txID, err)
		}
	}
	if len(orders) == 0 && len(seqs) == 0 {
		return nil
	}
	key := TxKey(t.conn, txID)
	if _, open := t.byID[key]; !open && last != "" && last <= t.cut.W {
		return nil
	}
	s := t.seen[table][key]
	if s == nil {
		s = &seen{}
		t.seen[table][key] = s
	}
	before := s.count()
	s.orders = Union(s.orders, orders)
	if len(seqs) > 0 {
		s.seqs = append(s.seqs, seqs...)
		slices.Sort(s.seqs)
		s.seqs = slices.Compact(s.seqs)
	}
	if s.count() > before {
		t.advance()
	}
	return nil
}

// AppliedCount is the number of transaction txID's events that table has
// reported applied (matched by TxKey): the distinct events of
// AppliedEvents, or Applied's running count if that is larger; 0 for a
// table not in the group, a transaction not reported, or one cut past
// and forgotten.
func (t *Tracker) AppliedCount(table, txID string) int64 {
	key := TxKey(t.conn, txID)
	return t.appliedCount(table, key)
}

func (t *Tracker) appliedCount(table, key string) int64 {
	return max(t.applied[table][key], t.seen[table][key].count())
}

// FetchedPast records that table has fetched, on every partition of its
// topic, every record at or below pos (each partition's fetch position is
// past pos): no change of the table at or below pos can still arrive, and
// every transaction with a commit position at or below pos is complete in
// it. A lower position than one already reported is ignored. Errors:
// ErrUnknownTable, ErrWidth.
func (t *Tracker) FetchedPast(table string, pos cdc.Seq) error {
	if !t.inGroup[table] {
		return fmt.Errorf("%w: %q", ErrUnknownTable, table)
	}
	if err := t.checkWidth(pos); err != nil {
		return fmt.Errorf("fetched position of %q: %w", table, err)
	}
	if pos > t.fetched[table] {
		t.fetched[table] = pos
		t.advance()
	}
	return nil
}

// missing returns the events of x that table has not completed: 0 when
// the table has applied the END's count or fetched past its commit.
func (t *Tracker) missing(x *openEnd, table string) int64 {
	want := x.Counts[table]
	if want == 0 || t.parked[table] || t.fetched[table] >= x.Commit {
		return 0
	}
	return max(want-t.appliedCount(table, x.key), 0)
}

// complete reports whether x is complete in every table it touched.
func (t *Tracker) complete(x *openEnd) bool {
	for tb := range x.Counts {
		if t.inGroup[tb] && t.missing(x, tb) > 0 {
			return false
		}
	}
	return true
}

// advance moves W over the complete ENDs at the head of open and forgets
// them.
func (t *Tracker) advance() {
	n := 0
	for n < len(t.open) && t.complete(&t.open[n]) {
		n++
	}
	if n == 0 {
		return
	}
	head := t.open[n-1]
	t.cut.W, t.cut.TxID, t.cut.TsMs = head.Commit, head.ID, head.TsMs
	for _, x := range t.open[:n] {
		delete(t.byID, x.key)
		for _, tb := range t.tables {
			delete(t.applied[tb], x.key)
			delete(t.seen[tb], x.key)
		}
	}
	t.open = slices.Delete(t.open, 0, n)
	for i, x := range t.open {
		t.byID[x.key] = i
	}
}

// Cut returns the transaction-consistent cut: W is the commit position
// of the newest END such that it and every END before it are complete in
// every table they touched (applied counts met, or the table fetched past
// the commit position); "" when there is none. Holds name the tables that
// have not completed the oldest END above W, with the events they miss.
func (t *Tracker) Cut() Cut {
	c := t.cut
	c.Holds = nil
	if len(t.open) > 0 {
		x := &t.open[0]
		for _, tb := range t.tables {
			if m := t.missing(x, tb); m > 0 {
				c.Holds = append(c.Holds, Hold{Table: tb, TxID: x.ID, Commit: x.Commit, Missing: m})
			}
		}
	}
	return c
}

// PositionCut is the cut without transaction metadata (the design's
// degraded mode): W is the lowest position that every table of the group
// has fetched past on every partition (FetchedPast), so that no change at
// or below W can still arrive in any table. Positions are per change, so
// W may fall between two changes of one transaction: PerPosition is true.
// A table that has reported no position holds the cut at "" (none). Holds
// are the tables at the lowest position (or without one). ENDs and
// applied counts play no part, nor do tables taken out (WithoutTables).
func (t *Tracker) PositionCut() Cut {
	c := Cut{PerPosition: true}
	if len(t.tables) == 0 {
		return c
	}
	first := true
	for _, tb := range t.tables {
		if t.parked[tb] {
			continue
		}
		if p := t.fetched[tb]; first || p < c.W {
			c.W, first = p, false
		}
	}
	if first { // every table taken out
		return c
	}
	for _, tb := range t.tables {
		if !t.parked[tb] && t.fetched[tb] == c.W {
			c.Holds = append(c.Holds, Hold{Table: tb})
		}
	}
	return c
}

// EndAbove returns the oldest END the Tracker holds (not yet cut past)
// whose commit position is above pos, and whether there is one. A group
// that froze its tables at positions at or below pos bounds them at this
// END's commit position (docs/design.md, "Batches cut at W"): every
// table can still stop exactly there, and the transaction of every
// change at or below pos commits at or below it. Errors: none; a pos of
// another width finds nothing.
func (t *Tracker) EndAbove(pos cdc.Seq) (End, bool) {
	for _, x := range t.open {
		if x.Commit > pos && (pos == "" || len(x.Commit) == len(pos)) {
			return x.End, true
		}
	}
	return End{}, false
}
