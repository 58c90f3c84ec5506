package tablestate

import (
	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/localstate"
)

// EventsLogged reports whether the log holds every past row change of
// the table (built from empty tables, or past changes loaded).
func (s *State) EventsLogged() bool { return s.Built && s.eventsComplete }

// KeyLogged reports whether the log holds every past row change of key
// k (all of the table's, or k's loaded by LoadKeyEvents).
func (s *State) KeyLogged(k cdc.Key) bool {
	if !s.Built {
		return false
	}
	if s.eventsComplete {
		return true
	}
	_, ok := s.KeysLogged[k]
	return ok
}

// PastChanges returns every row change the log holds for key k (all
// batches, in no order, with duplicates as recorded) and the key's
// recorded mirror values, aligned to sh (nil when none are recorded).
// Errors: local state log failures (the state is then invalid).
func (s *State) PastChanges(k cdc.Key, sh *Shape) ([]*cdc.Event, *cdc.Row, error) {
	var events []*cdc.Event
	var mirror *cdc.Row
	err := s.Walk(k, localstate.WantEvents|localstate.WantMirror, func(r *localstate.ChainRec) bool {
		events = append(events, r.Events...)
		if mirror == nil && r.Flags&localstate.RecMirror != 0 {
			mirror = r.Mirror
		}
		return true
	})
	if err != nil {
		return nil, nil, err
	}
	return events, AlignRow(mirror, sh.Names), nil
}
