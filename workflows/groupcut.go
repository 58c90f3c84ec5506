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
// A group without a transaction topic (cutPositionVersion) cuts per
// position the same way: W is the highest watermark the tables froze at
// (or the Tracker's PositionCut W when that is at or above them all),
// and the cut is published once every table has fetched past W on every
// partition of its topic (PositionCut().W >= W: no change at or below W
// can still arrive). A cut per position begins only when the
// PositionCut's W is above the last published cut's: a partition that
// has had no change since would hold it (GroupCut.Holds say which).
//
// A table that does not run, does not freeze within cutFreezeTimeout or
// refuses the bound, or a cut that does not complete within
// cutBoundTimeout (a table paused or blocked holds it, or per position a
// partition with no change above W), is given up: the tables are
// released, the reason kept (GroupState.LastAbort) and the next attempt
// begins a cut interval later.
const (
	cutFreezeTimeout = time.Minute      // the group's wait for every table to freeze
	cutBoundTimeout  = 10 * time.Minute // the group's wait for a bound cut to complete
	cutPoll          = 2 * time.Second  // how often a pending cut reads the transaction topic and checks its timeouts
	// cutStallTimeout: a table that misses events below a bound cut's W
	// and has applied no batch for this long (paused, blocked, no
	// worker) gives the cut up (cutUnconfirmedVersion), so that the
	// other tables, held at W, go on before cutBoundTimeout.
	cutStallTimeout = 2 * time.Minute
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
	// PerPosition: a cut per position (no transaction topic): W is the
	// highest watermark (a change's position) and SourceTsMs the newest
	// source commit time the tables had applied when they froze.
	PerPosition bool `json:"per_position,omitempty"`
	// Freshest is the newest source commit time any table had applied
	// when it froze (ms since the epoch; 0: none said).
	Freshest int64 `json:"freshest_ms,omitempty"`
	// Reported is when each table last reported a batch during the cut
	// (cutUnconfirmedVersion): a table that holds a bound cut and has
	// reported none for cutStallTimeout stalls it (stalled).
	Reported map[string]time.Time `json:"reported,omitempty"`
}

// PublishedCut is a cut published in the group's tables.
type PublishedCut struct {
	Number      int64               `json:"number"`
	W           string              `json:"w"`
	TxID        string              `json:"tx_id,omitempty"`
	SourceTsMs  int64               `json:"source_ts_ms,omitempty"`
	PublishedAt time.Time           `json:"published_at"`
	Tagged      []payload.CutTagged `json:"tagged"`
	// PerPosition: consistent per position, not per transaction (a
	// transaction may straddle W).
	PerPosition bool `json:"per_position,omitempty"`
	// TrailMs is how far the cut's source time trailed the freshest
	// table's newest applied source commit time when the tables froze
	// (ms, 0 when not behind or unknown); HeldMs how long the tables stood
	// still for it (from the freeze to the publish, ms).
	TrailMs int64 `json:"trail_ms,omitempty"`
	HeldMs  int64 `json:"held_ms,omitempty"`
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
// a transaction topic; cutPositionVersion runs without, per position):
// it begins a cut when none is pending and one is due (per position:
// and every partition moved past the last cut, positionMoved), bounds a
// frozen one, publishes a complete one and gives up one past its
// timeouts. Called after each round and each report.
//
//workflowcheck:ignore (the cut.Tracker and these loops go over maps, but their results do not depend on the order: sorted, summed or keyed; deterministic)
func (g *group) stepCut(ctx workflow.Context) {
	perPosition := g.in.TransactionTopic == ""
	if !g.publish || perPosition && !g.positions {
		return
	}
	now := workflow.Now(ctx)
	p := g.st.Pending
	if p == nil {
		if len(g.st.Members) == 0 || now.Before(g.st.NextCutAt) {
			return
		}
		if perPosition && !g.positionMoved() {
			return // a partition without a change since the last cut would hold it: GroupCut.Holds
		}
		if len(g.blocked()) > 0 {
			return // a table may be misnamed, or tables share a collection: GroupCut.Holds
		}
		g.st.Attempts++
		p = &PendingCut{Attempt: g.st.Attempts, Number: 1, Tables: slices.Sorted(maps.Keys(g.st.Members)), Frozen: map[string]string{}, Since: now,
			PerPosition: perPosition}
		if g.st.Published != nil {
			p.Number = g.st.Published.Number + 1
		}
		g.st.Pending = p
		for _, t := range p.Tables {
			if err := g.signalTable(ctx, t, cutOpFreeze, p.Attempt, ""); err != nil {
				g.abort(ctx, fmt.Sprintf("table %s does not run (%v): it holds the cut; start it, or take it out of the group (starter leave %s)", t, errorText(err), t))
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
			if perPosition {
				g.abort(ctx, "no table has applied or fetched a change: nothing to cut")
			} else if now.Sub(p.Since) >= cutFreezeTimeout {
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
		if stalled := g.stalled(p, now); len(stalled) > 0 {
			g.abort(ctx, fmt.Sprintf("tables %s miss events below the cut at %s and applied no batch for %v (paused, blocked or without a worker): "+
				"the cut is given up so that the other tables go on", strings.Join(stalled, ", "), p.W, cutStallTimeout))
			return
		}
		if now.Sub(p.BoundAt) >= cutBoundTimeout {
			if perPosition {
				g.abort(ctx, fmt.Sprintf("the cut per position at %s did not complete within %v (%s): a paused or blocked table, or a partition with no change above W, holds it",
					p.W, cutBoundTimeout, strings.Join(g.waiting(), "; ")))
				return
			}
			var holds []string
			for _, h := range g.cut().Holds {
				holds = append(holds, fmt.Sprintf("%s misses %d events of %s", h.Table, h.Missing, h.TxID))
			}
			g.abort(ctx, fmt.Sprintf("the cut at %s did not complete within %v (%s): a paused or blocked table holds it",
				p.W, cutBoundTimeout, strings.Join(holds, "; ")))
		}
		return
	}
	if u := g.unconfirmed(); len(u) > 0 { // an END read since the cut began names a collection no table has
		var notes []string
		for _, h := range u {
			notes = append(notes, h.Table+": "+h.Note)
		}
		g.abort(ctx, "a table's data collection is not confirmed: "+strings.Join(notes, "; "))
		return
	}
	if sh := g.shared(); len(sh) > 0 { // a table joined under a collection another has since the cut began
		g.abort(ctx, "tables share a data collection: "+sh[0].Note)
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
		W: p.W, TxID: p.TxID, SourceTsMs: p.SourceTsMs, Tables: p.Tables, PerPosition: p.PerPosition}).Get(ctx, &res)
	if err != nil {
		g.abort(ctx, fmt.Sprintf("publishing cut %d failed: %s", p.Number, errorText(err)))
		return
	}
	if r := res.Recorded; r != nil { // the number was recorded at another W by an attempt given up after its rows: the tags hold that one
		p.W, p.TxID, p.SourceTsMs, p.PerPosition = r.W, r.TxID, r.SourceTsMs, r.PerPosition
	}
	at := workflow.Now(ctx)
	g.st.Published = &PublishedCut{Number: p.Number, W: p.W, TxID: p.TxID, SourceTsMs: p.SourceTsMs, PublishedAt: at, Tagged: res.Tagged,
		PerPosition: p.PerPosition, HeldMs: at.Sub(p.Since).Milliseconds()}
	if p.SourceTsMs > 0 && p.Freshest > p.SourceTsMs {
		g.st.Published.TrailMs = p.Freshest - p.SourceTsMs
	}
	g.release(ctx, p)
}

// positionMoved reports whether every table of a group without a
// transaction topic has fetched, on every partition, past the last
// published cut's W (past none before the first) and up to the bound of
// the last cut given up once bound (GivenUpW): only then may a cut per
// position begin, since a partition without a change since would hold
// it until cutBoundTimeout with every table stopped.
//
//workflowcheck:ignore (the cut.Tracker goes over maps, but its result does not depend on the order; deterministic)
func (g *group) positionMoved() bool {
	w := g.tr.PositionCut().W.Hex()
	return w != "" && (g.st.Published == nil || w > g.st.Published.W) && w >= g.st.GivenUpW
}

// waiting says what the pending cut waits for: the tables that have not
// frozen; once bound, per position each table's partitions not fetched
// past W ("shop.b partition 1 at <pos>", "... has fetched nothing",
// "shop.b has reported no partitions"), per transaction the tables that
// miss events of the next END. Nil without a pending cut or when it
// waits for nothing.
//
//workflowcheck:ignore (the cut.Tracker goes over maps, but its result does not depend on the order; deterministic)
func (g *group) waiting() []string {
	p := g.st.Pending
	if p == nil {
		return nil
	}
	var out []string
	if p.W == "" {
		for _, t := range p.Tables {
			if _, ok := p.Frozen[t]; !ok {
				out = append(out, t+" has not frozen")
			}
		}
		return out
	}
	if !p.PerPosition {
		for _, h := range g.holds(g.current()) {
			out = append(out, fmt.Sprintf("%s misses %d events of %s", h.Table, h.Missing, h.TxID))
		}
		return out
	}
	for _, t := range p.Tables {
		parts := g.st.Partitions[t]
		if len(parts) == 0 {
			out = append(out, t+" has reported no partitions")
			continue
		}
		for _, part := range parts {
			switch f, ok := g.st.Fetched[t][part]; {
			case !ok:
				out = append(out, fmt.Sprintf("%s partition %d has fetched nothing", t, part))
			case f < p.W: // hex of one width: text order is position order
				out = append(out, fmt.Sprintf("%s partition %d at %s", t, part, f))
			}
		}
	}
	return out
}

// stalled are the tables (sorted) that hold p, a bound cut per
// transaction (cutUnconfirmedVersion), and have reported no batch for
// cutStallTimeout since it was bound.
func (g *group) stalled(p *PendingCut, now time.Time) []string {
	if !g.confirm || p.PerPosition {
		return nil
	}
	var out []string
	for _, h := range g.holds(g.current()) {
		last := p.BoundAt
		if r := p.Reported[h.Table]; r.After(last) {
			last = r
		}
		if now.Sub(last) >= cutStallTimeout && !slices.Contains(out, h.Table) {
			out = append(out, h.Table)
		}
	}
	slices.Sort(out)
	return out
}

// bound sets p's W from the tables' highest watermark high: the
// Tracker's W when it is at or above it (the tables hold that cut
// already), else the oldest END above it; per position, high itself (its
// source time the freshest table's). False: no such END read yet (per
// position: no watermark and no PositionCut W).
func (g *group) bound(p *PendingCut, high string) bool {
	c := g.current()
	if p.PerPosition {
		switch {
		case c.W != "" && high <= c.W.Hex():
			p.W = c.W.Hex()
		case high != "":
			p.W = high
		default:
			return false
		}
		p.SourceTsMs = p.Freshest
		return true
	}
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
	if p.PerPosition && p.W != "" {
		g.st.GivenUpW = p.W
	}
	g.st.Aborts++
	g.st.LastAbort = fmt.Sprintf("cut attempt %d: %s", p.Attempt, why)
	workflow.GetLogger(ctx).Warn("group: cut given up", "group", g.in.Group, "why", g.st.LastAbort)
	g.release(ctx, p)
}

// cutReport takes a table's report for a cut (Frozen, Refused). A
// frozen report's positions fetched per partition (the table's
// TableState.FetchedPast) and its newest transaction's events
// (TableState.frozenTxSeen), both also recovered from its mirror when it
// was started again, are taken whatever the attempt: a table that has
// applied no batch since it joined thus completes the transactions it
// applied before (their events were never reported to the group).
func (g *group) cutReport(ctx workflow.Context, r GroupReport) {
	if r.Frozen != 0 {
		coll := g.st.Members[r.Table].Collection
		g.appliedEvents(coll, r.TxSeen)
		if len(r.FetchedPast) > 0 {
			g.noteFetched(r, coll)
		}
	}
	p := g.st.Pending
	if p == nil || !slices.Contains(p.Tables, r.Table) {
		return
	}
	switch {
	case r.Refused == p.Attempt:
		g.abort(ctx, fmt.Sprintf("table %s stopped waiting for the bound (its freeze timed out) and went on", r.Table))
	case r.Frozen == p.Attempt && p.W == "":
		if p.Frozen == nil { // a cut carried across continue-as-new before any table froze: its empty map was left out
			p.Frozen = map[string]string{}
		}
		p.Frozen[r.Table] = r.Watermark
		p.Freshest = max(p.Freshest, r.SourceTsMs)
	}
}

// every is the cut interval.
func (g *group) every() time.Duration {
	if g.in.CutEvery > 0 {
		return g.in.CutEvery
	}
	return defaultCutEvery
}
