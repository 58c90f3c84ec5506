package workflows

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// The group's cut protocol (docs/design.md, "Batches cut at W"): a table
// runs on its own clock, so by the time the group knows that every
// transaction up to an END is complete, the tables have applied past
// it and no Iceberg snapshot of theirs holds exactly the changes at or
// below it. The group therefore takes a cut in three steps:
//
//  1. freeze: it signals every table `freeze <attempt>`; each finishes
//     its batch in flight, reports the highest position it applied
//     (GroupReport.Frozen, Watermark) and applies nothing more.
//  2. bound: W is the oldest END above every table's watermark (the END
//     of the newest transaction any table has begun), or the Tracker's W
//     when that is at or above them all; it signals `bound <attempt>
//     <W>`, and each table applies its batches bounded at W
//     (payload.ApplyRequest.Cut) until released.
//  3. publish: once the Tracker's W reaches the bound (every
//     transaction up to it complete in every table), the tables hold
//     exactly the changes at or below W: PublishCut tags their mirror
//     and history (`cut-<n>`, `consistent`) and appends the `_cuts`
//     rows; then `release <attempt>` lets the tables go on.
//
// A table that does not run, does not freeze within cutFreezeTimeout or
// refuses the bound, or a cut that does not complete within
// cutBoundTimeout (a table paused or blocked holds it), is given up: the
// tables are released, the reason kept (GroupState.LastAbort) and the
// next attempt begins a cut interval later.
const (
	cutFreezeTimeout = time.Minute      // the group's wait for every table to freeze
	cutBoundTimeout  = 10 * time.Minute // the group's wait for a bound cut to complete
	cutPoll          = 2 * time.Second  // how often a pending cut reads the transaction topic and checks its timeouts
)

// PendingCut is the cut a group is taking.
type PendingCut struct {
	// Attempt numbers the group's cut attempts (the signals carry it);
	// Number is the cut's number if it is published (its tag cut-<n>).
	Attempt int64 `json:"attempt"`
	Number  int64 `json:"number"`
	// Tables are the group's tables when it began, sorted; Frozen the
	// watermark each reported when it froze (hex; "" for none applied).
	Tables []string          `json:"tables"`
	Frozen map[string]string `json:"frozen,omitempty"`
	// W is the bound ("" while freezing), TxID and SourceTsMs its END's.
	W          string    `json:"w,omitempty"`
	TxID       string    `json:"tx_id,omitempty"`
	SourceTsMs int64     `json:"source_ts_ms,omitempty"`
	Since      time.Time `json:"since"`
	BoundAt    time.Time `json:"bound_at,omitzero"`
}

// PublishedCut is a cut published in the group's tables.
type PublishedCut struct {
	Number      int64               `json:"number"`
	W           string              `json:"w"`
	TxID        string              `json:"tx_id,omitempty"`
	SourceTsMs  int64               `json:"source_ts_ms,omitempty"`
	PublishedAt time.Time           `json:"published_at"`
	Tagged      []payload.CutTagged `json:"tagged"`
}

// The ops of SignalGroupCut's payload: "<op> <attempt>[ <W>]".
const (
	cutOpFreeze  = "freeze"
	cutOpBound   = "bound"
	cutOpRelease = "release"
)

// signalTable signals table's workflow SignalGroupCut with op, attempt
// and (bound) w; the error of a table whose workflow does not run.
func (g *group) signalTable(ctx workflow.Context, table, op string, attempt int64, w string) error {
	arg := op + " " + strconv.FormatInt(attempt, 10)
	if w != "" {
		arg += " " + w
	}
	return workflow.SignalExternalWorkflow(ctx, WorkflowID(table), "", SignalGroupCut, arg).Get(ctx, nil)
}

// stepCut moves the group's cut protocol on (cutPublishVersion runs with
// a transaction topic): it begins a cut when none is pending and one is
// due, bounds a frozen one, publishes a complete one and gives up one
// past its timeouts. Called after each round and each report.
//
//workflowcheck:ignore (the cut.Tracker and these loops go over maps, but their results do not depend on the order: sorted, summed or keyed; deterministic)
func (g *group) stepCut(ctx workflow.Context) {
	if !g.publish || g.in.TransactionTopic == "" {
		return
	}
	now := workflow.Now(ctx)
	p := g.st.Pending
	if p == nil {
		if len(g.st.Members) == 0 || now.Before(g.st.NextCutAt) {
			return
		}
		g.st.Attempts++
		p = &PendingCut{Attempt: g.st.Attempts, Number: 1, Tables: slices.Sorted(maps.Keys(g.st.Members)), Frozen: map[string]string{}, Since: now}
		if g.st.Published != nil {
			p.Number = g.st.Published.Number + 1
		}
		g.st.Pending = p
		for _, t := range p.Tables {
			if err := g.signalTable(ctx, t, cutOpFreeze, p.Attempt, ""); err != nil {
				g.abort(ctx, fmt.Sprintf("table %s does not run (%v): it holds the cut; start it, or take it out of the group", t, errorText(err)))
				return
			}
		}
		return
	}
	if p.W == "" {
		var waiting []string
		high := ""
		for _, t := range p.Tables {
			w, ok := p.Frozen[t]
			if !ok {
				waiting = append(waiting, t)
			}
			high = max(high, w) // hex of one width: text order is position order
		}
		if len(waiting) > 0 {
			if now.Sub(p.Since) >= cutFreezeTimeout {
				g.abort(ctx, fmt.Sprintf("tables %s did not freeze within %v (paused, blocked or busy with a long batch): they hold the cut",
					strings.Join(waiting, ", "), cutFreezeTimeout))
			}
			return
		}
		if !g.bound(p, high) {
			if now.Sub(p.Since) >= cutFreezeTimeout {
				g.abort(ctx, fmt.Sprintf("no END above the tables' newest position %s was read from %s within %v: the transaction topic lags",
					high, g.in.TransactionTopic, cutFreezeTimeout))
			}
			return
		}
		p.BoundAt = now
		for _, t := range p.Tables {
			if err := g.signalTable(ctx, t, cutOpBound, p.Attempt, p.W); err != nil {
				g.abort(ctx, fmt.Sprintf("table %s does not run (%v): it holds the cut", t, errorText(err)))
				return
			}
		}
		// the tables may be complete at W already (W the Tracker's)
	}
	if w := g.current().W.Hex(); w == "" || w < p.W {
		if now.Sub(p.BoundAt) >= cutBoundTimeout {
			var holds []string
			for _, h := range g.cut().Holds {
				holds = append(holds, fmt.Sprintf("%s misses %d events of %s", h.Table, h.Missing, h.TxID))
			}
			g.abort(ctx, fmt.Sprintf("the cut at %s did not complete within %v (%s): a paused or blocked table holds it",
				p.W, cutBoundTimeout, strings.Join(holds, "; ")))
		}
		return
	}
	var res payload.PublishCutResult
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID:          fmt.Sprintf("publish-cut-%d", p.Attempt),
		StartToCloseTimeout: 5 * time.Minute,
		Summary:             fmt.Sprintf("publish cut %d of group %s at %s in %d tables", p.Number, g.in.Group, p.W, len(p.Tables)),
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second, MaximumAttempts: 10,
			NonRetryableErrorTypes: []string{payload.ErrTypeBadSpec}},
	})
	err := workflow.ExecuteActivity(actx, payload.ActivityPublishCut, payload.PublishCutRequest{Group: g.in.Group, Number: p.Number,
		W: p.W, TxID: p.TxID, SourceTsMs: p.SourceTsMs, Tables: p.Tables}).Get(ctx, &res)
	if err != nil {
		g.abort(ctx, fmt.Sprintf("publishing cut %d failed: %s", p.Number, errorText(err)))
		return
	}
	g.st.Published = &PublishedCut{Number: p.Number, W: p.W, TxID: p.TxID, SourceTsMs: p.SourceTsMs, PublishedAt: workflow.Now(ctx), Tagged: res.Tagged}
	g.release(ctx, p)
}

// bound sets p's W from the tables' highest watermark high: the
// Tracker's W when it is at or above it (the tables hold that cut
// already), else the oldest END above it. False: no such END read yet.
func (g *group) bound(p *PendingCut, high string) bool {
	c := g.current()
	if c.W != "" && high <= c.W.Hex() {
		p.W, p.TxID, p.SourceTsMs = c.W.Hex(), c.TxID, c.TsMs
		return true
	}
	pos, err := cdc.ParseSeqHex(high)
	if err != nil {
		return false
	}
	e, ok := g.tr.EndAbove(pos)
	if !ok {
		return false
	}
	p.W, p.TxID, p.SourceTsMs = e.Commit.Hex(), e.ID, e.TsMs
	return true
}

// release ends the pending cut: its tables are signalled to go on (a
// table that does not run is skipped) and the next cut is due a cut
// interval later.
func (g *group) release(ctx workflow.Context, p *PendingCut) {
	for _, t := range p.Tables {
		if err := g.signalTable(ctx, t, cutOpRelease, p.Attempt, ""); err != nil {
			workflow.GetLogger(ctx).Warn("group: release of a table that does not run", "table", t, "error", err)
		}
	}
	g.st.Pending = nil
	g.st.NextCutAt = workflow.Now(ctx).Add(g.every())
}

// abort gives the pending cut up for why: recorded, the tables released.
func (g *group) abort(ctx workflow.Context, why string) {
	p := g.st.Pending
	g.st.Aborts++
	g.st.LastAbort = fmt.Sprintf("cut attempt %d: %s", p.Attempt, why)
	workflow.GetLogger(ctx).Warn("group: cut given up", "group", g.in.Group, "why", g.st.LastAbort)
	g.release(ctx, p)
}

// cutReport takes a table's report for a cut (Frozen, Refused).
func (g *group) cutReport(ctx workflow.Context, r GroupReport) {
	p := g.st.Pending
	if p == nil || !slices.Contains(p.Tables, r.Table) {
		return
	}
	switch {
	case r.Refused == p.Attempt:
		g.abort(ctx, fmt.Sprintf("table %s stopped waiting for the bound (its freeze timed out) and went on", r.Table))
	case r.Frozen == p.Attempt && p.W == "":
		p.Frozen[r.Table] = r.Watermark
	}
}

// every is the cut interval.
func (g *group) every() time.Duration {
	if g.in.CutEvery > 0 {
		return g.in.CutEvery
	}
	return defaultCutEvery
}
