package workflows

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/payload"
)

// CutHold is the source group's cut a table takes part in (the group's
// protocol: groupcut.go). Frozen (W ""), the table applies no batch and
// waits for the bound; bound, each of its batches is bounded at W
// (payload.ApplyRequest.Cut) until the group releases it.
type CutHold struct {
	Attempt int64  `json:"attempt"`     // the group's cut attempt
	W       string `json:"w,omitempty"` // the bound (hex); "" while frozen
	// Reported: the table reported that it froze, at Since (workflow
	// time); BoundAt is when it took the bound. Held: its last bounded
	// batch applied nothing (every record left is above W).
	Reported bool      `json:"reported,omitempty"`
	Since    time.Time `json:"since,omitzero"`
	BoundAt  time.Time `json:"bound_at,omitzero"`
	Held     bool      `json:"held,omitempty"`
}

// A table's own limits on a cut, past the group's (cutFreezeTimeout,
// cutBoundTimeout): a group that has gone away does not hold the table
// for ever.
const (
	tableFreezeTimeout = 2 * time.Minute
	tableBoundTimeout  = 15 * time.Minute
	heldPoll           = 5 * time.Second // a held table plans again after this (events at or below W may still arrive)
)

// groupCut is the reducer of SignalGroupCut: "freeze N" freezes the
// table for attempt N (a newer attempt replaces an older one), "bound N
// W" bounds a table frozen for N (one that is not, its freeze timed out
// or never came, refuses: reported), "release N" ends attempt N or an
// older one. Anything else is logged and ignored, and so is every such
// signal to a table without a group (cutUngroupedVersion: a table
// started again without its group, whose old group still has it).
func (st *TableState) groupCut(ctx workflow.Context, arg string) {
	f := strings.Fields(arg)
	var n int64
	var err error
	if len(f) >= 2 {
		n, err = strconv.ParseInt(f[1], 10, 64)
	}
	switch {
	case st.ungroupedCut == 1 && st.Spec.Group == "" && st.Cut == nil:
	case len(f) < 2 || err != nil || n <= 0:
	case f[0] == cutOpFreeze && len(f) == 2:
		if st.Cut == nil || st.Cut.Attempt < n {
			st.Cut = &CutHold{Attempt: n}
		}
		return
	case f[0] == cutOpBound && len(f) == 3:
		if st.Cut != nil && st.Cut.Attempt == n && st.Cut.W == "" {
			st.Cut.W = f[2]
		} else if st.Cut == nil || st.Cut.Attempt < n {
			st.cutRefused = n
		}
		return
	case f[0] == cutOpRelease && len(f) == 2:
		if st.Cut != nil && st.Cut.Attempt <= n {
			st.Cut = nil
		}
		return
	}
	if ctx != nil {
		workflow.GetLogger(ctx).Warn("ignoring group cut signal", "arg", arg)
	}
}

// frozenTxSeen is what a frozen report says the table has applied of its
// newest transaction (NewestTx), for a table whose topic has one
// partition: every event of the transaction up to the newest's
// data_collection_order (Debezium numbers a transaction's events of a
// collection in the order it writes them, and one partition keeps that
// order), so that a table that applied them before it (re)joined the
// group, and has had no batch since, completes it. Nil for a topic of
// more partitions (their events may sit on a partition not fetched yet).
//
//workflowcheck:ignore (partitions sorts a map's keys; deterministic)
func (st *TableState) frozenTxSeen() map[string]payload.TxSeen {
	parts := st.partitions()
	if len(parts) != 1 {
		return nil
	}
	x, ok := st.NewestTx[parts[0]]
	if !ok || x.ID == "" || x.Order <= 0 {
		return nil
	}
	return map[string]payload.TxSeen{x.ID: {Orders: [][2]int64{{1, x.Order}}, Last: x.Seq}}
}

// partitions are the partitions of the table's topic it knows (at its
// last plan, else its offsets), sorted; nil before it knows any.
//
//workflowcheck:ignore (sorted map keys; deterministic)
func (st *TableState) partitions() []int32 {
	if len(st.HighWatermarks) > 0 {
		return st.HighWatermarks.SortedPartitions()
	}
	if len(st.Offsets) > 0 {
		return st.Offsets.SortedPartitions()
	}
	return nil
}

// cutBound is the bound of the table's next stream batch: its cut's W
// while bound, else nil.
func (st *TableState) cutBound() *payload.CutBound {
	if st.Cut == nil || st.Cut.W == "" {
		return nil
	}
	return &payload.CutBound{Number: st.Cut.Attempt, W: st.Cut.W}
}

// reportCut signals the table's group a report for a cut (frozen or
// refused); a group that does not run is logged.
func reportCut(ctx workflow.Context, st *TableState, rep GroupReport) {
	rep.GroupMember = GroupMemberOf(st.Spec)
	if err := workflow.SignalExternalWorkflow(ctx, GroupWorkflowID(st.Spec.Group), "", SignalGroupReport, rep).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("the group's workflow did not take the cut report", "group", st.Spec.Group, "error", err)
	}
}

// cutWait is the loop's step for the group's cut: it reports a refused
// bound, and a table frozen for a cut reports its watermark (once) and
// waits for the bound, the release, a stop, pause or settings change, or
// its own timeout (tableFreezeTimeout: it then goes on, and refuses a
// bound that comes later); a held table (bound, its last batch applied
// nothing) waits heldPoll for the release. A bound table past
// tableBoundTimeout drops the bound. It reports whether it waited (the
// loop then starts its round again).
func (r *tableRun) cutWait(ctx workflow.Context) bool {
	st := r.st
	if st.cutRefused != 0 {
		reportCut(ctx, st, GroupReport{Refused: st.cutRefused})
		st.cutRefused = 0
	}
	c := st.Cut
	if c == nil {
		return false
	}
	now := workflow.Now(ctx)
	if c.W != "" {
		if c.BoundAt.IsZero() {
			c.BoundAt = now
		}
		if now.Sub(c.BoundAt) >= tableBoundTimeout {
			workflow.GetLogger(ctx).Warn("the group did not release its cut: the table goes on", "attempt", c.Attempt, "w", c.W)
			st.Cut = nil
			return false
		}
		if !c.Held {
			return false
		}
		c.Held = false
		r.awaitCut(ctx, heldPoll, fmt.Sprintf("held at the group's cut %s (attempt %d) until every table has applied it", c.W, c.Attempt), func() bool {
			return st.Cut != c
		})
		return true
	}
	if !c.Reported {
		reportCut(ctx, st, GroupReport{Frozen: c.Attempt, Watermark: st.Watermark, SourceTsMs: st.NewestSourceTs / 1000,
			FetchedPast: st.FetchedPast, Partitions: st.partitions(), TxSeen: st.frozenTxSeen()})
		c.Reported, c.Since = true, now
	}
	left := tableFreezeTimeout - now.Sub(c.Since)
	if left <= 0 {
		workflow.GetLogger(ctx).Warn("the group sent no bound for its cut: the table goes on", "attempt", c.Attempt)
		st.Cut = nil
		return false
	}
	r.awaitCut(ctx, left, fmt.Sprintf("frozen for the group's cut (attempt %d) at %s until the group bounds it", c.Attempt, st.Watermark), func() bool {
		return st.Cut != c || c.W != ""
	})
	return true
}

// awaitCut waits up to d for done, a stop, pause, settings change or
// operator request, with a timer summary of note.
func (r *tableRun) awaitCut(ctx workflow.Context, d time.Duration, note string, done func() bool) {
	st := r.st
	settings := st.settingsChanges
	_, _ = workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{Timeout: d, TimerOptions: workflow.TimerOptions{Summary: clip(note, maxSummary)}}, func() bool {
		return done() || st.Stopping || st.Paused || st.settingsChanges != settings || st.ResnapshotRequested != "" || len(st.Backfill) > 0 || st.cutRefused != 0
	})
}

// leaveCut takes the table out of its group's cut before it serves an
// operator's request (a re-snapshot writes what the cut cannot hold):
// the group is told at once (Refused: it gives the cut up).
func (r *tableRun) leaveCut(ctx workflow.Context) {
	st := r.st
	if st.Cut == nil {
		return
	}
	reportCut(ctx, st, GroupReport{Refused: st.Cut.Attempt})
	st.Cut, st.cutRefused = nil, 0
}
