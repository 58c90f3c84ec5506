package runner

import (
	"context"
	"errors"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/workflows"
)

// tableOwner answers activities.OwnerLookup from Temporal: the Owner of
// the status query of table's running table workflow (workflows.WorkflowID),
// "" when no such workflow runs (none started, or it has ended: the query
// is rejected rather than answered from a closed run's last state).
// Errors: Temporal's.
func tableOwner(c client.Client) func(ctx context.Context, table string) (string, error) {
	return func(ctx context.Context, table string) (string, error) {
		resp, err := c.QueryWorkflowWithOptions(ctx, &client.QueryWorkflowWithOptionsRequest{
			WorkflowID: workflows.WorkflowID(table), QueryType: workflows.QueryStatus,
			QueryRejectCondition: enumspb.QUERY_REJECT_CONDITION_NOT_OPEN,
		})
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		if resp.QueryRejected != nil || resp.QueryResult == nil {
			return "", nil
		}
		var st workflows.Status
		if err := resp.QueryResult.Get(&st); err != nil {
			return "", err
		}
		return st.Owner, nil
	}
}
