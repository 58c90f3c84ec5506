package tablestate

import (
	"sort"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/localstate"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/merge"
)

// HistChanges is what one batch (or rebuild) did to the history table,
// for the chain records: the data file its versions went to (a file id,
// -1 for none), the versions in file order, and per key what changed.
type HistChanges struct {
	Locs    []parquetio.RowLoc // where writes[i] landed (HistoryWriter.commitFiles)
	Writes  []KeyedVersion
	Changes []KeyChange // ascending by group
}

// KeyChange is what one batch did to one key's history: its versions
// writes[first:first+n], the stored row it removed, and whether its open
// version may have changed.
type KeyChange struct {
	Group       int // index of the key's group in the batch plan
	First, N    int
	Removed     *parquetio.RowLoc
	OpenChanged bool
	Reset       bool // a rebuild: every older row of the key was removed
}

// recordPlan appends one chain record per key of the batch plan: its row
// changes, its new mirror values (when withMirror and the mirror changed
// it) and its history changes (when hist is set), then flushes the log.
// It marks the plan recorded. A large batch is encoded on two goroutines
// (each key's record depends only on the key and its previous head) and
// appended in key order. Errors: the log could not be written (the state
// is then invalid and is rebuilt from the tables next time).
func (s *State) recordPlan(plan *Plan, hist *HistChanges, withMirror bool) error {
	if err := plan.Resolve(s.Ix); err != nil {
		s.invalidate()
		return err
	}
	n := len(plan.Groups)
	if n < parallelRecordKeys {
		if err := s.encoders[0].encode(s, plan, hist, withMirror, 0, n, true); err != nil {
			return err
		}
	} else {
		mid := n / 2
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.encoders[1].encode(s, plan, hist, withMirror, mid, n, false)
		}()
		s.encoders[0].encode(s, plan, hist, withMirror, 0, mid, false)
		<-done
		for i, lo := range [2]int{0, mid} {
			if err := s.encoders[i].appendTo(s, plan, lo); err != nil {
				return err
			}
		}
	}
	plan.recorded = true
	s.forgetHeirs(plan.HeirsDone)
	return s.flush()
}

// parallelRecordKeys is the batch size (keys) from which recordPlan
// encodes on two goroutines.
var parallelRecordKeys = 4096 // a variable for tests

// recEncoder encodes the chain records of a range of a batch plan's keys.
type recEncoder struct {
	w       localstate.RecWriter
	rowsBuf []localstate.HistRow
	out     []byte // the records, one after another
	ends    []int  // end of each record in out
}

// encode encodes the records of groups [lo, hi) of plan. With direct it
// appends each to the log as it goes and moves the key's head (the
// sequential path); else it keeps them in e.out for appendTo. Errors:
// log writes (direct only).
func (e *recEncoder) encode(s *State, plan *Plan, hist *HistChanges, withMirror bool, lo, hi int, direct bool) error {
	e.out, e.ends = e.out[:0], e.ends[:0]
	ci := 0
	if hist != nil {
		ci = sort.Search(len(hist.Changes), func(j int) bool { return hist.Changes[j].Group >= lo })
	}
	for i := lo; i < hi; i++ {
		var c *KeyChange
		if hist != nil && ci < len(hist.Changes) && hist.Changes[ci].Group == i {
			c = &hist.Changes[ci]
			ci++
		}
		var mirror *cdc.Row
		if withMirror && plan.Mirror != nil {
			mirror = plan.Mirror[i]
		}
		ent := plan.Entries[i]
		e.encodeKeyRec(s.Ix.HeadAt(ent), plan.Batch, plan.loggedEvents(i), mirror, hist, c)
		if !direct {
			e.out = append(e.out, e.w.Buf...)
			e.ends = append(e.ends, len(e.out))
			continue
		}
		if err := s.appendRec(ent, e.w.Buf); err != nil {
			return err
		}
	}
	return nil
}

// appendTo appends the records encode kept, for the groups from lo on,
// to the log and moves their keys' heads. Errors: log writes.
func (e *recEncoder) appendTo(s *State, plan *Plan, lo int) error {
	start := 0
	for j, end := range e.ends {
		if err := s.appendRec(plan.Entries[lo+j], e.out[start:end]); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// appendRec appends one encoded record and makes it index entry ent's
// head. Errors: log writes (the state is then invalid).
func (s *State) appendRec(ent uint32, rec []byte) error {
	ref, err := s.log.Append(rec)
	if err != nil {
		s.invalidate()
		return err
	}
	s.Ix.SetHeadAt(ent, ref)
	return nil
}

// RecordAsync is recordPlan in the background: it returns at once, and
// the state's next use waits for the recording to finish (Settle). A batch
// is committed before it is recorded, so its ApplyBatch need not wait for
// the log: the recording overlaps the workflow's next step and the next
// batch's fetch and prepare. A failed recording invalidates the state (it
// is rebuilt from the tables, as after any log failure).
func (s *State) RecordAsync(plan *Plan, hist *HistChanges, withMirror bool) {
	s.Settle()
	done := make(chan error, 1)
	s.recording = done
	go func() { done <- s.recordPlan(plan, hist, withMirror) }()
}

// Settle waits for a build left running (buildDetached) and for a
// background recording (RecordAsync), and invalidates the state when the
// recording failed. Every use of the state settles first.
func (s *State) Settle() {
	if s.building != nil {
		<-s.building.done
		s.building = nil
	}
	if s.recording == nil {
		return
	}
	err := <-s.recording
	s.recording = nil
	if err != nil {
		s.invalidate()
	}
}

// encodeKeyRec encodes into e.w.buf one chain record whose previous
// record is prev.
func (e *recEncoder) encodeKeyRec(prev uint64, batch int64, events []*cdc.Event, mirror *cdc.Row, hist *HistChanges, c *KeyChange) {
	var flags uint8
	if events != nil {
		flags |= localstate.RecEvents
	}
	if mirror != nil {
		flags |= localstate.RecMirror
	}
	if c != nil {
		if c.N > 0 || c.Removed != nil || c.Reset {
			flags |= localstate.RecRows
		}
		if c.OpenChanged {
			flags |= localstate.RecOpen
		}
		if c.Reset {
			flags |= localstate.RecReset
		}
	}
	w := &e.w
	w.Begin(prev, batch, flags)
	if events != nil {
		w.Events(events, mirror)
	}
	if mirror != nil {
		w.MirrorRow(mirror)
	}
	var open *localstate.HistRow
	var openVals *cdc.Row
	openAt := -1 // open's index in the rows section
	if flags&localstate.RecRows != 0 {
		rows := e.rowsBuf[:0]
		for i := range c.N {
			v := &hist.Writes[c.First+i].V
			rows = append(rows, localstate.HistRowOf(v, hist.Locs[c.First+i].File, hist.Locs[c.First+i].Pos))
		}
		for i := range c.N {
			if v := &hist.Writes[c.First+i].V; v.Current() {
				open, openVals, openAt = &rows[i], v.Values, i
			}
		}
		var rm []parquetio.RowLoc
		if c.Removed != nil {
			rm = []parquetio.RowLoc{*c.Removed}
		}
		w.Rows(rows, rm)
		e.rowsBuf = rows
	}
	if flags&localstate.RecOpen != 0 {
		w.OpenVersion(open, openAt, openVals, mirror)
	}
}

// RecordMirror appends, per index entry, a record of its new mirror
// values (a rebuild's), then flushes the log.
func (s *State) RecordMirror(batch int64, entries []uint32, rows []*cdc.Row) error {
	enc := &s.encoders[0]
	for i, e := range entries {
		enc.encodeKeyRec(s.Ix.HeadAt(e), batch, nil, rows[i], nil, nil)
		if err := s.appendRec(e, enc.w.Buf); err != nil {
			return err
		}
	}
	return s.flush()
}

// flushPending records a batch the mirror committed whose history writer
// never recorded it (it failed before, or found nothing to write), so the
// log never misses a key's new mirror values or row changes.
func (s *State) flushPending() error {
	p := s.Pending
	s.Pending = nil
	if p == nil || p.recorded || !s.Built || p.Ix != s.Ix {
		return nil
	}
	return s.recordPlan(p, nil, true)
}

// RecordChanges appends a chain record for each key of plan with history
// changes (a rebuild's: no row changes, no mirror values), then flushes.
func (s *State) RecordChanges(plan *Plan, hist *HistChanges) error {
	if err := plan.Resolve(s.Ix); err != nil {
		s.invalidate()
		return err
	}
	enc := &s.encoders[0]
	for i := range hist.Changes {
		c := &hist.Changes[i]
		ent := plan.Entries[c.Group]
		enc.encodeKeyRec(s.Ix.HeadAt(ent), plan.Batch, nil, nil, hist, c)
		if err := s.appendRec(ent, enc.w.Buf); err != nil {
			return err
		}
	}
	return s.flush()
}

// KeyedVersion is a version to write for a key.
type KeyedVersion struct {
	Key cdc.Key
	V   merge.Version
}
