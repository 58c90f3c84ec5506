package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/lakemirror/lakemirror/internal/human"
	"github.com/lakemirror/lakemirror/worker/runner"
	"github.com/lakemirror/lakemirror/workflows"
)

// tableExecution is a table workflow as Temporal visibility lists it: its
// latest run.
type tableExecution struct {
	Table      string            `json:"table"`
	Topic      string            `json:"topic"`
	WorkflowID string            `json:"workflow_id"`
	RunID      string            `json:"run_id"`
	Status     string            `json:"status"`          // statusName: running, completed (a stopped pipeline), failed, terminated, ...
	Phase      string            `json:"phase,omitempty"` // the LakemirrorPhase search attribute: the last phase it published
	StartedAt  time.Time         `json:"started_at"`
	ClosedAt   time.Time         `json:"closed_at,omitzero"`
	Pipeline   *workflows.Status `json:"pipeline,omitempty"` // a running one's status query
}

// listTableWorkflows lists table workflows from Temporal visibility, every
// page, the latest run of each workflow id (a run that continued as new
// is not listed), sorted by table; runningOnly: running ones only. The
// table and topic come from the memo's spec (else the search attributes,
// else the workflow id). Errors: the list call's.
func listTableWorkflows(ctx context.Context, c client.Client, runningOnly bool) ([]tableExecution, error) {
	query := fmt.Sprintf("WorkflowType = %q", workflows.TableWorkflowName)
	if runningOnly {
		query += ` AND ExecutionStatus = "Running"`
	}
	dc := converter.GetDefaultDataConverter()
	latest := map[string]tableExecution{}
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("list table workflows: %w", err)
		}
		for _, e := range resp.Executions {
			te := tableExecution{WorkflowID: e.GetExecution().GetWorkflowId(), RunID: e.GetExecution().GetRunId(),
				Status: statusName(e.GetStatus()), StartedAt: e.GetStartTime().AsTime()}
			if e.GetCloseTime() != nil {
				te.ClosedAt = e.GetCloseTime().AsTime()
			}
			if spec, ok := runner.MemoSpec(e.GetMemo()); ok {
				te.Table, te.Topic = spec.Table, spec.Topic
			}
			sa := e.GetSearchAttributes().GetIndexedFields()
			keyword := func(name string) string {
				var s string
				if p := sa[name]; p != nil {
					_ = dc.FromPayload(p, &s)
				}
				return s
			}
			if te.Table == "" {
				te.Table, te.Topic = keyword("LakemirrorTable"), keyword("LakemirrorTopic")
			}
			if te.Table == "" {
				te.Table = strings.TrimPrefix(te.WorkflowID, workflows.WorkflowID(""))
			}
			te.Phase = keyword("LakemirrorPhase")
			if old, ok := latest[te.WorkflowID]; !ok || te.StartedAt.After(old.StartedAt) {
				latest[te.WorkflowID] = te
			}
		}
		if token = resp.NextPageToken; len(token) == 0 {
			break
		}
	}
	var out []tableExecution
	for _, te := range latest {
		if te.Status != "continued-as-new" {
			out = append(out, te)
		}
	}
	slices.SortFunc(out, func(a, b tableExecution) int { return strings.Compare(a.Table, b.Table) })
	return out, nil
}

// listAll prints every table workflow's latest run, running or closed,
// with its status; running ones with their live phase, lag and batches.
func (a *app) listAll(ctx context.Context, w io.Writer, c client.Client, asJSON bool) error {
	all, err := listTableWorkflows(ctx, c, false)
	if err != nil {
		return err
	}
	lr := newLagReader(a.settings)
	defer lr.Close()
	for i := range all {
		if all[i].Status != "running" {
			continue
		}
		qctx, cancel := context.WithTimeout(ctx, queryTimeout)
		st, err := queryStatus(qctx, c, all[i].Table)
		cancel()
		if err != nil {
			continue // listed from visibility only
		}
		_ = lr.refresh(ctx, &st)
		all[i].Pipeline, all[i].Phase = &st, st.Phase
	}
	if asJSON {
		if all == nil {
			all = []tableExecution{}
		}
		return json.NewEncoder(w).Encode(all)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tTOPIC\tSTATUS\tPHASE\tLAG\tBATCHES\tLAST BATCH\tCLOSED")
	for _, te := range all {
		phase, lag, batches, last, closed := orDash(te.Phase), "-", "-", "-", "-"
		if st := te.Pipeline; st != nil {
			lag, batches = fmt.Sprint(st.TotalLag), fmt.Sprint(st.Totals.Batches)
			if !st.LastBatchAt.IsZero() {
				last = human.Duration(time.Since(st.LastBatchAt)) + " ago"
			}
		}
		if !te.ClosedAt.IsZero() {
			closed = te.ClosedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", te.Table, orDash(te.Topic), te.Status, phase, lag, batches, last, closed)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
