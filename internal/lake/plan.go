package lake

import (
	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/merge"
)

// batchPlan is one batch's row changes grouped by key (merge.GroupByKey),
// made once by the mirror writer and used again by the history writer of
// the same State: each group's key index entry (looked up once), the
// mirror's `_seq` of the key before the batch, and after the mirror commit
// the key's new mirror values, which the history writer records in the
// key's one chain record of the batch.
type batchPlan struct {
	batch   int64
	events  []*cdc.Event // the batch's events as given (identity check)
	groups  []merge.Group
	ix      *keyindex.Index // the index entries belong to
	entries []uint32
	pre     []cdc.Seq // mirror `_seq` before the batch; "" for keys new to the mirror
	known   bool      // pre is known (false: the mirror had committed the batch already)
	// wovenChecked: the mirror stage checked every key with changes below
	// pre against the past changes in the local state log (weave.go); woven
	// then holds, for each late key, all its changes (nil entries: keys
	// that are not late; a nil slice: none is). A change the log holds may
	// still be missing from the history (a load chunk retried after its
	// mirror commit): the history checks its own rows for those.
	wovenChecked bool
	woven        []*merge.Group
	// mirror holds each group's new mirror values (nil: unchanged) once
	// the mirror committed; recorded says the history writer (or a later
	// flush) wrote them to the log.
	mirror   []*cdc.Row
	recorded bool
}

// newPlan groups the row changes of events.
func newPlan(batch int64, events []*cdc.Event) *batchPlan {
	return &batchPlan{batch: batch, events: events, groups: merge.GroupByKey(rowChanges(events))}
}

// resolve looks up (adding when absent) each group's index entry in ix.
func (p *batchPlan) resolve(ix *keyindex.Index) {
	if p.ix == ix && len(p.entries) == len(p.groups) {
		return
	}
	p.ix = ix
	p.entries = make([]uint32, len(p.groups))
	for i, g := range p.groups {
		p.entries[i] = ix.EntryOf(g.Key)
	}
}

// sameEvents reports whether events is the slice the plan was made from.
func (p *batchPlan) sameEvents(events []*cdc.Event) bool {
	if len(events) != len(p.events) {
		return false
	}
	return len(events) == 0 || &events[0] == &p.events[0]
}
