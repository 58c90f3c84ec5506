package tablestate

import (
	"encoding/binary"
	"fmt"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/localstate"
)

// LoadAllEvents is LoadEvents for every bronze record, then
// SetEventsComplete. each calls add once per bronze data file with its
// records decoded and prepared like a batch, grouped by key. The events
// are not added as they come: a file's keys are spread over the whole
// table, and once the key index lives on disk each would be a random
// read of the index and of the key's chain. They go through the build's
// key sort instead (localstate.BuildSorter: a chunk of a quarter of the table
// budget, sorted runs beside the log, merged), and each key's events are
// then added in key order, the index's RAM part emptied every 65,536 keys
// (the table stays within its budget). Records the log already holds
// (same key, position and Kafka coordinates) are not added again, as in
// LoadEvents. Errors: each's and add's callers', the run files', the
// log's (the state is then invalid).
func (s *State) LoadAllEvents(each func(add func(byKey map[cdc.Key][]*cdc.Event) error) error) error {
	s.Settle()
	if !s.Built {
		return fmt.Errorf("lake: local state not built")
	}
	if s.eventsComplete {
		return nil
	}
	if err := s.flushPending(); err != nil {
		return err
	}
	bs := &localstate.BuildSorter{Dir: s.stateDir(), Limit: buildChunkBytes(s.Budget)}
	defer bs.Close()
	w := localstate.RecWriter{C: s.c}
	err := each(func(byKey map[cdc.Key][]*cdc.Event) error {
		for k, es := range byKey {
			if len(es) == 0 {
				continue
			}
			w.Buf = binary.AppendUvarint(w.Buf[:0], uint64(len(es)))
			for _, e := range es {
				w.Event(e, nil)
			}
			if err := bs.Add(k, localstate.BuildEvents, w.Buf); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	keys := 0
	var add []*cdc.Event
	err = bs.Each(func(g *localstate.BuildGroup) error {
		add = add[:0]
		for _, p := range g.Events {
			r := localstate.RecReader{C: s.c, B: p}
			n := r.Uvarint()
			for i := uint64(0); i < n && r.Err == nil; i++ {
				add = append(add, r.Event(g.Key, func() *cdc.Row { return nil }))
			}
			if r.Err != nil {
				return fmt.Errorf("lake: local state: past changes of key %x: %w", string(g.Key), r.Err)
			}
		}
		if err := s.addEvents(g.Key, add); err != nil {
			return err
		}
		keys++
		return s.buildSafePoint(keys)
	})
	if err != nil {
		s.invalidate()
		return err
	}
	if err := s.flush(); err != nil {
		return err
	}
	s.eventsComplete, s.KeysLogged = true, nil
	return nil
}

func Flatten(byKey map[cdc.Key][]*cdc.Event) []*cdc.Event {
	var out []*cdc.Event
	for _, es := range byKey {
		out = append(out, es...)
	}
	return out
}
