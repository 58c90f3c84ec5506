package tablestate

import (
	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
	"github.com/lakemirror/lakemirror/internal/merge"
)

// Plan is one batch's row changes grouped by key (merge.GroupByKey),
// made once by the mirror writer and used again by the history writer of
// the same State: each group's key index entry (looked up once), the
// mirror's `_seq` of the key before the batch, and after the mirror commit
// the key's new mirror values, which the history writer records in the
// key's one chain record of the batch.
type Plan struct {
	Batch   int64
	events  []*cdc.Event // the batch's events as given (identity check)
	Groups  []merge.Group
	Ix      *keyindex.Index // the index entries belong to
	gen     uint64          // ix.Gen() when they were looked up (a spilled index voids them at its safe points)
	Entries []uint32
	Pre     []cdc.Seq // mirror `_seq` before the batch; "" for keys new to the mirror
	Known   bool      // pre is known (false: the mirror had committed the batch already)
	// Rebuild: when the mirror had committed the batch already, the keys
	// its commit listed for the late-key rebuild (lakecat.PropBatchLateKeys;
	// Pre then holds the `_seq` it listed for late keys, "" for the
	// others, whose changes all follow the history's versions). The
	// history stage puts them in its pending set, also those without a
	// change in the batch.
	Rebuild map[cdc.Key]bool
	// BinlogSuspect: keys whose MySQL changes go back in position within
	// the batch while the log lacks their past (merge/binlog.go): the
	// history stage puts them in its pending set (RebuildKeys replays them
	// from bronze)
	BinlogSuspect map[cdc.Key]bool
	// refill: new keys of key-change creates whose TOAST placeholders the
	// local state could not fill exactly (MirrorWriter.fillFromOldKeys):
	// the history stage puts them in its pending set too
	Refill map[cdc.Key]bool
	// NoLog: keys whose key-change creates the local state log leaves
	// out (their bronze copies are loaded instead); LogRaw: creates the
	// log keeps with these after images, as they came (loggedEvents)
	NoLog  map[cdc.Key]bool
	LogRaw map[*cdc.Event]*cdc.Row
	// HeirsDone: key-change creates State.Heirs forgets once the batch
	// is recorded (their old keys' changes below them all arrived)
	HeirsDone []heirDone
	// WovenChecked: the mirror stage checked every key with changes below
	// pre against the past changes in the local state log (weave.go); woven
	// then holds, for each late key, all its changes (nil entries: keys
	// that are not late; a nil slice: none is). A change the log holds may
	// still be missing from the history (a load chunk retried after its
	// mirror commit): the history checks its own rows for those.
	WovenChecked bool
	Woven        []*merge.Group
	// mirror holds each group's new mirror values (nil: unchanged) once
	// the mirror committed; recorded says the history writer (or a later
	// flush) wrote them to the log.
	Mirror   []*cdc.Row
	recorded bool
}

// NewPlan groups the row changes of events.
func NewPlan(batch int64, events []*cdc.Event) *Plan {
	return &Plan{Batch: batch, events: events, Groups: merge.GroupByKey(rowChanges(events))}
}

// resolve looks up (adding when absent) each group's index entry in ix,
// all at once (keyindex.Index.Resolve: a spilled index reads them in key
// order). A plan's first lookup is the index's safe point (Release: a
// spilled index may empty its RAM part then, which voids only earlier
// plans' entries). Errors: the spilled index's disk (the state is then
// invalid).
func (p *Plan) Resolve(ix *keyindex.Index) error {
	if p.Ix == ix && p.gen == ix.Gen() && len(p.Entries) == len(p.Groups) {
		return nil
	}
	if p.Ix == nil {
		if err := ix.Release(); err != nil {
			return err
		}
	}
	p.Ix, p.gen = ix, ix.Gen()
	keys := make([]cdc.Key, len(p.Groups))
	for i, g := range p.Groups {
		keys[i] = g.Key
	}
	p.Entries = make([]uint32, len(p.Groups))
	return ix.Resolve(keys, p.Entries)
}

// SameEvents reports whether events is the slice the plan was made from.
func (p *Plan) SameEvents(events []*cdc.Event) bool {
	if len(events) != len(p.events) {
		return false
	}
	return len(events) == 0 || &events[0] == &p.events[0]
}

// loggedEvents returns group i's events as the local state log records
// them: a key-change create whose TOAST placeholders the state could not
// fill exactly is left out (NoLog), so that the rebuild from bronze that
// follows loads its exact copy (State.addEvents keeps the first copy of
// a record), or kept as it came (LogRaw), to be filled from its old
// key's logged changes when read back (MirrorWriter.fillLogged).
func (p *Plan) loggedEvents(i int) []*cdc.Event {
	g := &p.Groups[i]
	if !p.NoLog[g.Key] && len(p.LogRaw) == 0 {
		return g.Events
	}
	out := make([]*cdc.Event, 0, len(g.Events))
	for _, e := range g.Events {
		if p.NoLog[g.Key] && e.OldKey != "" && e.Op.IsUpsert() {
			continue
		}
		if raw, ok := p.LogRaw[e]; ok {
			c := *e
			c.After = raw
			e = &c
		}
		out = append(out, e)
	}
	return out
}

// rowChanges keeps the events that change a row: c, u, d, r and per-key
// truncates (see ExpandTruncates).
func rowChanges(events []*cdc.Event) []*cdc.Event {
	rows := make([]*cdc.Event, 0, len(events))
	for _, e := range events {
		if e.Op.IsUpsert() || e.Op == cdc.OpDelete || (e.Op == cdc.OpTruncate && e.Key != "") {
			rows = append(rows, e)
		}
	}
	return rows
}
