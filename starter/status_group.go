package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/internal/human"
	"github.com/lakemirror/lakemirror/workflows"
)

// groupCutStatus is a grouped table's group's cut as status shows it
// (JSON: the status object's group_cut; docs/operating.md): the newest
// published cut, how far it trails its source, the cut being taken, the
// last one given up and what holds the next.
type groupCutStatus struct {
	Group string `json:"group"`
	// Running: the group's workflow answered; else Note says why not.
	Running bool   `json:"running"`
	Note    string `json:"note,omitempty"`
	// Number is the newest published cut (0: none yet), W its position
	// (hex), TxID and SourceTs its END's, LagSeconds now − SourceTs.
	Number      int64      `json:"number"`
	W           string     `json:"w,omitempty"`
	TxID        string     `json:"tx_id,omitempty"`
	SourceTs    *time.Time `json:"source_ts,omitempty"`
	LagSeconds  *float64   `json:"lag_seconds,omitempty"`
	PublishedAt *time.Time `json:"published_at,omitempty"`
	// PerPosition: the published cut is consistent per position, not
	// per transaction (the group has no transaction topic).
	PerPosition bool                  `json:"per_position,omitempty"`
	Pending     *pendingCutStatus     `json:"pending,omitempty"`
	Aborts      int64                 `json:"aborts,omitempty"`
	LastAbort   string                `json:"last_abort,omitempty"`
	Holds       []workflows.GroupHold `json:"holds,omitempty"`
	Error       string                `json:"error,omitempty"`
}

// pendingCutStatus is the cut a group is taking.
type pendingCutStatus struct {
	Attempt int64     `json:"attempt"`
	Number  int64     `json:"number"`
	W       string    `json:"w,omitempty"` // "" while the tables freeze
	Since   time.Time `json:"since"`
	// Waiting is what it waits for (workflows.GroupCut.Waiting).
	Waiting []string `json:"waiting,omitempty"`
}

// statusWithCut is status --output json: the table's status object and,
// for a grouped table, its group's cut.
type statusWithCut struct {
	workflows.Status
	GroupCut *groupCutStatus `json:"group_cut,omitempty"`
}

// groupCutOf asks group's workflow for its cut; a workflow that does not
// run, or does not answer, is said in Note.
func groupCutOf(ctx context.Context, c client.Client, group string, now time.Time) *groupCutStatus {
	g, err := queryGroupCut(ctx, c, group)
	if err != nil {
		if exitCode(err) == exitNotFound {
			return &groupCutStatus{Group: group, Note: fmt.Sprintf("the group's workflow %s does not run: no cut is taken (starting or applying a table of the group starts it)", workflows.GroupWorkflowID(group))}
		}
		return &groupCutStatus{Group: group, Note: fmt.Sprintf("the group's workflow %s did not answer: %v", workflows.GroupWorkflowID(group), err)}
	}
	return groupCutView(g, now)
}

// groupCutView is what status shows of a group's cut query at now.
func groupCutView(g workflows.GroupCut, now time.Time) *groupCutStatus {
	v := &groupCutStatus{Group: g.Group, Running: true, Aborts: g.Aborts, LastAbort: g.LastAbort, Holds: g.Holds, Error: g.Error}
	if p := g.Published; p != nil {
		v.Number, v.W, v.TxID, v.PerPosition = p.Number, p.W, p.TxID, p.PerPosition
		at := p.PublishedAt.UTC()
		v.PublishedAt = &at
		if p.SourceTsMs > 0 {
			src := time.UnixMilli(p.SourceTsMs).UTC()
			lag := now.Sub(src).Seconds()
			v.SourceTs, v.LagSeconds = &src, &lag
		}
	}
	if p := g.Pending; p != nil {
		v.Pending = &pendingCutStatus{Attempt: p.Attempt, Number: p.Number, W: p.W, Since: p.Since.UTC(), Waiting: g.Waiting}
	}
	return v
}

// printGroupCut writes status's lines of a group's cut to tw.
func printGroupCut(tw *tabwriter.Writer, g *groupCutStatus, now time.Time) {
	if !g.Running {
		fmt.Fprintf(tw, "group cut\t%s\n", g.Note)
		return
	}
	if g.Number == 0 {
		fmt.Fprintf(tw, "group cut\tnone published yet\n")
	} else {
		line := fmt.Sprintf("cut %d (tag cut-%d) at %s", g.Number, g.Number, cutPositionText(g.W))
		if g.PerPosition {
			line = fmt.Sprintf("cut %d (tag cut-%d) per position, not per transaction (a transaction may straddle W), at %s", g.Number, g.Number, positionText(g.W))
		}
		if g.SourceTs != nil {
			line += fmt.Sprintf(", source commit %s, %s behind", g.SourceTs.Format(time.RFC3339Nano), human.Duration(time.Duration(*g.LagSeconds*float64(time.Second))))
		}
		if g.PublishedAt != nil {
			line += "; published " + g.PublishedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "group cut\t%s\n", line)
	}
	if p := g.Pending; p != nil {
		what := "freezing the tables"
		if p.W != "" {
			what = "bound at " + cutPositionText(p.W)
		}
		fmt.Fprintf(tw, "cut pending\tcut %d (attempt %d), %s, since %s (%s)\n", p.Number, p.Attempt, what, p.Since.Format(time.RFC3339), human.Duration(now.Sub(p.Since)))
		if len(p.Waiting) > 0 {
			fmt.Fprintf(tw, "cut waits for\t%s\n", strings.Join(p.Waiting, "; "))
		}
	}
	if g.LastAbort != "" {
		fmt.Fprintf(tw, "last cut given up\t%s (%s given up)\n", g.LastAbort, human.Count(g.Aborts, "cut", "cuts"))
	}
	if len(g.Holds) > 0 {
		var parts []string
		for _, h := range g.Holds {
			s := h.Table
			switch {
			case h.Note != "": // unconfirmed, or sharing a collection
				s += ": " + h.Note
			case h.TxID != "" && h.Missing > 0:
				s += fmt.Sprintf(" misses %s of transaction %s", human.Count(h.Missing, "event", "events"), h.TxID)
			case h.TxID != "":
				s += " has not fetched past transaction " + h.TxID
			default:
				s += " (the lowest position fetched)"
			}
			parts = append(parts, s)
		}
		fmt.Fprintf(tw, "cut held by\t%s\n", strings.Join(parts, "; "))
	}
	if g.Error != "" {
		fmt.Fprintf(tw, "group error\t%s\n", g.Error)
	}
}
