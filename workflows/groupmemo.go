package workflows

import (
	"reflect"
	"time"

	"go.temporal.io/sdk/workflow"
)

// MemoCut is the memo key of a GroupWorkflow's GroupMemo: the Temporal
// Web UI shows it on the workflow's page (docs/webui.md).
const MemoCut = "cut"

// GroupMemo is what a group's workflow keeps in its memo (MemoCut,
// cutPositionVersion): the newest published cut, the cut being taken and
// what it waits for, the last one given up, and what holds the next cut
// when none is being taken. Times are UTC; durations milliseconds.
type GroupMemo struct {
	Group string `json:"group"`
	// PerPosition: the group has no transaction topic; its cuts are
	// consistent per position, not per transaction (a transaction may
	// straddle W).
	PerPosition bool            `json:"per_position"`
	Published   *MemoPublished  `json:"published,omitempty"`
	Pending     *MemoPendingCut `json:"pending,omitempty"`
	// Aborts counts the cuts given up, LastAbort says why the last was.
	Aborts    int64  `json:"aborts,omitempty"`
	LastAbort string `json:"last_abort,omitempty"`
	// HeldBy, per position with no cut pending, are the tables at the
	// lowest fetched position (GroupCut.Holds): a table or partition
	// without a change since the last cut holds the next one here. With
	// a transaction topic and no cut pending, they are the tables whose
	// data collection is not confirmed, each with why and how to go on
	// (cutUnconfirmedVersion: GroupHold.Note).
	HeldBy []string `json:"held_by,omitempty"`
}

// MemoPublished is the newest published cut in the memo.
type MemoPublished struct {
	Number int64  `json:"number"` // its tags are cut-<n> and consistent
	W      string `json:"w"`      // hex, the tables' _seq
	// SourceTs is W's source commit time (per transaction the END's
	// ts_ms, per position the freshest table's newest applied change
	// when the tables froze); nil when unknown.
	SourceTs    *time.Time `json:"source_ts,omitempty"`
	PerPosition bool       `json:"per_position"`
	PublishedAt time.Time  `json:"published_at"`
	// TrailMs: how far SourceTs trailed the freshest table's newest
	// applied source commit time when the tables froze; HeldMs: how long
	// the tables stood still for the cut.
	TrailMs int64 `json:"trail_ms"`
	HeldMs  int64 `json:"held_ms"`
}

// MemoPendingCut is the cut being taken in the memo.
type MemoPendingCut struct {
	Attempt int64     `json:"attempt"`
	Number  int64     `json:"number"`
	W       string    `json:"w,omitempty"` // "" while the tables freeze
	Since   time.Time `json:"since"`
	// Waiting is what it waits for (GroupCut.Waiting): a stalled table
	// shows here until the cut is given up (LastAbort).
	Waiting []string `json:"waiting,omitempty"`
}

// memoNow is the group's memo as its state now says.
//
//workflowcheck:ignore (the cut.Tracker goes over maps, but its result does not depend on the order; deterministic)
func (g *group) memoNow() *GroupMemo {
	m := &GroupMemo{Group: g.in.Group, PerPosition: g.in.TransactionTopic == "", Aborts: g.st.Aborts, LastAbort: g.st.LastAbort}
	if p := g.st.Published; p != nil {
		m.Published = &MemoPublished{Number: p.Number, W: p.W, PerPosition: p.PerPosition, PublishedAt: p.PublishedAt.UTC(), TrailMs: p.TrailMs, HeldMs: p.HeldMs}
		if p.SourceTsMs > 0 {
			ts := time.UnixMilli(p.SourceTsMs).UTC()
			m.Published.SourceTs = &ts
		}
	}
	if p := g.st.Pending; p != nil {
		m.Pending = &MemoPendingCut{Attempt: p.Attempt, Number: p.Number, W: p.W, Since: p.Since.UTC(), Waiting: g.waiting()}
	} else if m.PerPosition && len(g.st.Members) > 0 && !g.positionMoved() {
		for _, h := range g.holds(g.current()) {
			m.HeldBy = append(m.HeldBy, h.Table)
		}
	} else {
		for _, h := range g.blocked() {
			m.HeldBy = append(m.HeldBy, h.Table+": "+h.Note)
		}
	}
	return m
}

// upsertMemo upserts the memo MemoCut when it changed since the run last
// did (cutPositionVersion; a new run upserts it once at its start). An
// error is logged: the memo is for people.
//
//workflowcheck:ignore (reflect.DeepEqual compares two values; its result does not depend on anything else; deterministic)
func (g *group) upsertMemo(ctx workflow.Context) {
	if !g.positions {
		return
	}
	m := g.memoNow()
	if g.memo != nil && reflect.DeepEqual(g.memo, m) {
		return
	}
	if err := workflow.UpsertMemo(ctx, map[string]any{MemoCut: m}); err != nil {
		workflow.GetLogger(ctx).Warn("group: memo not upserted", "group", g.in.Group, "error", err)
		return
	}
	g.memo = m
}
