package lake

import "github.com/lakemirror/lakemirror/internal/cdc"

// histChanges is what one batch (or rebuild) did to the history table,
// for the chain records: the data file its versions went to (a file id,
// -1 for none), the versions in file order, and per key what changed.
type histChanges struct {
	fid     int32
	writes  []keyedVersion
	changes []keyChange // ascending by group
}

// keyChange is what one batch did to one key's history: its versions
// writes[first:first+n], the stored row it removed, and whether its open
// version may have changed.
type keyChange struct {
	group       int // index of the key's group in the batch plan
	first, n    int
	removed     *rowLoc
	openChanged bool
	reset       bool // a rebuild: every older row of the key was removed
}

// recordPlan appends one chain record per key of the batch plan: its row
// changes, its new mirror values (when withMirror and the mirror changed
// it) and its history changes (when hist is set), then flushes the log.
// It marks the plan recorded. Errors: the log could not be written (the
// state is then invalid and is rebuilt from the tables next time).
func (s *State) recordPlan(plan *batchPlan, hist *histChanges, withMirror bool) error {
	plan.resolve(s.ix)
	ci := 0
	for i, g := range plan.groups {
		var c *keyChange
		if hist != nil && ci < len(hist.changes) && hist.changes[ci].group == i {
			c = &hist.changes[ci]
			ci++
		}
		var mirror *cdc.Row
		if withMirror && plan.mirror != nil {
			mirror = plan.mirror[i]
		}
		if err := s.writeKeyRec(plan.entries[i], plan.batch, g.Events, mirror, hist, c); err != nil {
			return err
		}
	}
	plan.recorded = true
	return s.flush()
}

// recordAsync is recordPlan in the background: it returns at once, and
// the state's next use waits for the recording to finish (settle). A batch
// is committed before it is recorded, so its ApplyBatch need not wait for
// the log: the recording overlaps the workflow's next step and the next
// batch's fetch and prepare. A failed recording invalidates the state (it
// is rebuilt from the tables, as after any log failure).
func (s *State) recordAsync(plan *batchPlan, hist *histChanges, withMirror bool) {
	s.settle()
	done := make(chan error, 1)
	s.recording = done
	go func() { done <- s.recordPlan(plan, hist, withMirror) }()
}

// settle waits for a background recording (recordAsync) and invalidates
// the state when it failed. Every use of the state settles first.
func (s *State) settle() {
	if s.recording == nil {
		return
	}
	err := <-s.recording
	s.recording = nil
	if err != nil {
		s.invalidate()
	}
}

// writeKeyRec appends one chain record for index entry e.
func (s *State) writeKeyRec(e uint32, batch int64, events []*cdc.Event, mirror *cdc.Row, hist *histChanges, c *keyChange) error {
	var flags uint8
	if events != nil {
		flags |= recEvents
	}
	if mirror != nil {
		flags |= recMirror
	}
	if c != nil {
		if c.n > 0 || c.removed != nil || c.reset {
			flags |= recRows
		}
		if c.openChanged {
			flags |= recOpen
		}
		if c.reset {
			flags |= recReset
		}
	}
	w := &s.w
	w.begin(s.ix.head[e], batch, flags)
	if events != nil {
		w.events(events, mirror)
	}
	if mirror != nil {
		w.mirrorRow(mirror)
	}
	var open *histRow
	var openVals *cdc.Row
	if flags&recRows != 0 {
		rows := s.rowsBuf[:0]
		for i := range c.n {
			v := &hist.writes[c.first+i].v
			rows = append(rows, histRowOf(v, hist.fid, int64(c.first+i)))
		}
		for i := range c.n {
			if v := &hist.writes[c.first+i].v; v.Current() {
				open, openVals = &rows[i], v.Values
			}
		}
		var rm []rowLoc
		if c.removed != nil {
			rm = []rowLoc{*c.removed}
		}
		w.rows(rows, rm)
		s.rowsBuf = rows
	}
	if flags&recOpen != 0 {
		w.openVersion(open, openVals, mirror)
	}
	ref, err := s.log.append(w.buf)
	if err != nil {
		s.invalidate()
		return err
	}
	s.ix.head[e] = ref
	return nil
}

// recordMirror appends, per index entry, a record of its new mirror
// values (a rebuild's), then flushes the log.
func (s *State) recordMirror(batch int64, entries []uint32, rows []*cdc.Row) error {
	for i, e := range entries {
		if err := s.writeKeyRec(e, batch, nil, rows[i], nil, nil); err != nil {
			return err
		}
	}
	return s.flush()
}

// flushPending records a batch the mirror committed whose history writer
// never recorded it (it failed before, or found nothing to write), so the
// log never misses a key's new mirror values or row changes.
func (s *State) flushPending() error {
	p := s.pending
	s.pending = nil
	if p == nil || p.recorded || !s.built || p.ix != s.ix {
		return nil
	}
	return s.recordPlan(p, nil, true)
}

// recordChanges appends a chain record for each key of plan with history
// changes (a rebuild's: no row changes, no mirror values), then flushes.
func (s *State) recordChanges(plan *batchPlan, hist *histChanges) error {
	plan.resolve(s.ix)
	for i := range hist.changes {
		c := &hist.changes[i]
		if err := s.writeKeyRec(plan.entries[c.group], plan.batch, nil, nil, hist, c); err != nil {
			return err
		}
	}
	return s.flush()
}
