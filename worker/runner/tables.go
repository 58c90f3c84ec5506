package runner

import (
	"context"
	"fmt"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/workflows"
)

// TableRun is a running table workflow as visibility lists it.
type TableRun struct {
	WorkflowID string
	RunID      string
	// Spec is the table's configuration from the workflow's memo ("spec",
	// written at start and, by workflows recording the memo-spec version,
	// on every settings change and when the catalog is recorded); zero
	// when the memo has none (then Table is taken from the workflow id).
	Spec  activities.TableSpec
	Table string
}

// RunningTables lists the running table workflows of c's namespace, every
// page. Errors: Temporal's.
func RunningTables(ctx context.Context, c client.Client) ([]TableRun, error) {
	var out []TableRun
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{NextPageToken: token,
			Query: fmt.Sprintf("WorkflowType = %q AND ExecutionStatus = \"Running\"", workflows.TableWorkflowName)})
		if err != nil {
			return nil, err
		}
		for _, e := range resp.GetExecutions() {
			r := TableRun{WorkflowID: e.GetExecution().GetWorkflowId(), RunID: e.GetExecution().GetRunId()}
			r.Spec, _ = MemoSpec(e.GetMemo())
			r.Table = r.Spec.Table
			if r.Table == "" {
				r.Table = strings.TrimPrefix(r.WorkflowID, workflows.WorkflowID(""))
			}
			out = append(out, r)
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return out, nil
		}
	}
}

// MemoSpec decodes the table spec a table workflow's memo carries under
// "spec"; ok is false when there is none or it does not decode.
func MemoSpec(memo *commonpb.Memo) (spec activities.TableSpec, ok bool) {
	p := memo.GetFields()["spec"]
	if p == nil {
		return spec, false
	}
	if err := converter.GetDefaultDataConverter().FromPayload(p, &spec); err != nil {
		return activities.TableSpec{}, false
	}
	return spec, true
}
