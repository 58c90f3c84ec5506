package cut

import (
	"fmt"
	"maps"
	"slices"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// State is a Tracker's state in plain, JSON-encodable types, so that a
// workflow can carry it across continue-as-new (a workflow input) and
// query it: positions are hex (cdc.Seq.Hex: the tables' `_seq` text).
// Restore makes the same Tracker again.
type State struct {
	Connector string   `json:"connector"` // source.connector, for TxKey
	Tables    []string `json:"tables"`    // the group's tables, sorted
	// W, TxID and TsMs are the transaction-mode cut so far (W hex; ""
	// for none).
	W    string `json:"w,omitempty"`
	TxID string `json:"tx_id,omitempty"`
	TsMs int64  `json:"ts_ms,omitempty"`
	// Last is the newest END's commit position (hex), Width the byte
	// width of the group's positions (0 until the first).
	Last  string `json:"last,omitempty"`
	Width int    `json:"width,omitempty"`
	// Open are the ENDs above W, in commit order.
	Open []StateEnd `json:"open,omitempty"`
	// Applied is, per table, the applied counts per TxKey of the
	// transactions above W and of those whose END has not arrived.
	Applied map[string]map[string]int64 `json:"applied,omitempty"`
	// Seen is, per table, the events applied per TxKey, by identity
	// (Tracker.AppliedEvents), of the same transactions.
	Seen map[string]map[string]StateSeen `json:"seen,omitempty"`
	// Fetched is, per table, the position it has fetched past on every
	// partition (hex).
	Fetched map[string]string `json:"fetched,omitempty"`
	// Parked are the tables of Tables taken out of the group
	// (WithoutTables), sorted.
	Parked []string `json:"parked,omitempty"`
}

// StateSeen is one transaction's applied events in one table: their
// data_collection_order values and the positions (hex) of those without
// one.
type StateSeen struct {
	Orders Orders   `json:"orders,omitempty"`
	Seqs   []string `json:"seqs,omitempty"`
}

// StateEnd is an END of State.Open.
type StateEnd struct {
	ID     string           `json:"id"`
	Commit string           `json:"commit"` // hex
	Counts map[string]int64 `json:"counts,omitempty"`
	TsMs   int64            `json:"ts_ms,omitempty"`
}

// State returns t's state (copies: later changes of t do not reach it).
func (t *Tracker) State() State {
	s := State{Connector: t.conn, Tables: append([]string(nil), t.tables...), W: t.cut.W.Hex(), TxID: t.cut.TxID, TsMs: t.cut.TsMs,
		Last: t.last.Hex(), Width: t.width}
	for _, x := range t.open {
		s.Open = append(s.Open, StateEnd{ID: x.ID, Commit: x.Commit.Hex(), Counts: maps.Clone(x.Counts), TsMs: x.TsMs})
	}
	for tb, m := range t.applied {
		if len(m) > 0 {
			if s.Applied == nil {
				s.Applied = map[string]map[string]int64{}
			}
			s.Applied[tb] = maps.Clone(m)
		}
	}
	for tb, m := range t.seen {
		for key, x := range m {
			if s.Seen == nil {
				s.Seen = map[string]map[string]StateSeen{}
			}
			if s.Seen[tb] == nil {
				s.Seen[tb] = map[string]StateSeen{}
			}
			ss := StateSeen{Orders: slices.Clone(x.orders)}
			for _, q := range x.seqs {
				ss.Seqs = append(ss.Seqs, q.Hex())
			}
			s.Seen[tb][key] = ss
		}
	}
	for _, tb := range t.tables {
		if t.parked[tb] {
			s.Parked = append(s.Parked, tb)
		}
	}
	for tb, p := range t.fetched {
		if p != "" {
			if s.Fetched == nil {
				s.Fetched = map[string]string{}
			}
			s.Fetched[tb] = p.Hex()
		}
	}
	return s
}

// Restore makes the Tracker whose State s is. Errors: a position that is
// not hex, a table of Applied, Seen or Fetched not in Tables, an order
// range not 1 ≤ lo ≤ hi, an open END whose id repeats.
func Restore(s State) (*Tracker, error) {
	t := NewTracker(s.Connector, s.Tables)
	seq := func(what, h string) (cdc.Seq, error) {
		p, err := cdc.ParseSeqHex(h)
		if err != nil {
			return "", fmt.Errorf("cut: restore: %s: %w", what, err)
		}
		return p, nil
	}
	var err error
	if t.cut.W, err = seq("W", s.W); err != nil {
		return nil, err
	}
	if t.last, err = seq("last END", s.Last); err != nil {
		return nil, err
	}
	t.cut.TxID, t.cut.TsMs, t.width = s.TxID, s.TsMs, s.Width
	for _, e := range s.Open {
		c, err := seq("END "+e.ID, e.Commit)
		if err != nil {
			return nil, err
		}
		key := TxKey(t.conn, e.ID)
		if _, dup := t.byID[key]; dup {
			return nil, fmt.Errorf("cut: restore: END %q twice", e.ID)
		}
		counts := maps.Clone(e.Counts)
		if counts == nil {
			counts = map[string]int64{}
		}
		t.byID[key] = len(t.open)
		t.open = append(t.open, openEnd{End: End{ID: e.ID, Commit: c, Counts: counts, TsMs: e.TsMs}, key: key})
	}
	for tb, m := range s.Applied {
		if !t.inGroup[tb] {
			return nil, fmt.Errorf("cut: restore: %w: %q", ErrUnknownTable, tb)
		}
		maps.Copy(t.applied[tb], m)
	}
	for tb, m := range s.Seen {
		if !t.inGroup[tb] {
			return nil, fmt.Errorf("cut: restore: %w: %q", ErrUnknownTable, tb)
		}
		for key, ss := range m {
			if err := ss.Orders.Check(); err != nil {
				return nil, fmt.Errorf("cut: restore: %s, transaction %s: %w", tb, key, err)
			}
			x := &seen{orders: Union(ss.Orders)}
			for _, h := range ss.Seqs {
				q, err := seq("position of "+tb+", transaction "+key, h)
				if err != nil {
					return nil, err
				}
				x.seqs = append(x.seqs, q)
			}
			slices.Sort(x.seqs)
			x.seqs = slices.Compact(x.seqs)
			t.seen[tb][key] = x
		}
	}
	for _, tb := range s.Parked {
		if !t.inGroup[tb] {
			return nil, fmt.Errorf("cut: restore: parked: %w: %q", ErrUnknownTable, tb)
		}
		t.parked[tb] = true
	}
	for tb, h := range s.Fetched {
		if !t.inGroup[tb] {
			return nil, fmt.Errorf("cut: restore: %w: %q", ErrUnknownTable, tb)
		}
		if t.fetched[tb], err = seq("fetched position of "+tb, h); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// with is the Tracker whose State is t's changed by edit; what is the
// caller's name for the panic of a State that does not restore (a State
// of a Tracker, changed as WithTables, WithoutTables and Forget do,
// always restores). t is not changed.
func (t *Tracker) with(what string, edit func(*State)) *Tracker {
	s := t.State()
	edit(&s)
	u, err := Restore(s)
	if err != nil {
		panic("cut: " + what + ": " + err.Error())
	}
	return u
}

// WithTables is a Tracker of t's group with tables added (those already
// in it ignored), keeping everything t holds: a table joining the group
// has applied nothing and fetched nothing yet, so it holds the cut at
// the first END that touches it until it reports. A table taken out
// (WithoutTables) comes back with what it had reported. t is not
// changed.
func (t *Tracker) WithTables(tables ...string) *Tracker {
	return t.with("WithTables", func(s *State) {
		s.Tables = append(s.Tables, tables...)
		s.Parked = slices.DeleteFunc(s.Parked, func(tb string) bool { return slices.Contains(tables, tb) })
	})
}

// WithoutTables is a Tracker of t's group with tables taken out (those
// not in it ignored): the ENDs' counts for them are no longer waited
// for, so the cut moves over every END only they held, and they hold no
// cut per position. What they reported is kept (and their reports are
// still taken) for when they join again (WithTables): a transaction they
// had applied before they left stays complete in them. t is not changed.
func (t *Tracker) WithoutTables(tables ...string) *Tracker {
	u := t.with("WithoutTables", func(s *State) {
		for _, tb := range tables {
			if slices.Contains(s.Tables, tb) && !slices.Contains(s.Parked, tb) {
				s.Parked = append(s.Parked, tb)
			}
		}
		slices.Sort(s.Parked)
	})
	u.advance()
	return u
}

// Forget is a Tracker of t's group in which table has applied and fetched
// nothing: what it reported is dropped (it holds the cut at the next END
// that counts it until it reports again). A group drops the reports of
// a data collection two of its tables shared when one of them leaves:
// the Tracker cannot tell whose they were. t is not changed.
func (t *Tracker) Forget(table string) *Tracker {
	return t.with("Forget", func(s *State) {
		delete(s.Applied, table)
		delete(s.Seen, table)
		delete(s.Fetched, table)
	})
}
