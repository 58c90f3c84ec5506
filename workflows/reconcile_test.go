package workflows

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/validate"
)

// ReconcileWorkflow runs Reconcile with its own workflow id as the run
// id (whatever the request carried), retries storage errors and returns
// the activity's result: differences are a result, not a failure.
func TestReconcileWorkflow(t *testing.T) {
	env, acts := newEnv(t)
	env.RegisterWorkflow(ReconcileWorkflow)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "lakemirror-reconcile-shop.orders-x"})
	attempts := 0
	env.OnActivity(acts.Reconcile, mock.Anything, mock.Anything).Return(func(_ context.Context, req activities.ReconcileRequest) (activities.ReconcileResult, error) {
		attempts++
		if attempts == 1 {
			return activities.ReconcileResult{}, errors.New("source restarting")
		}
		return activities.ReconcileResult{Table: req.Spec.Table, RunID: req.RunID, Failed: 1,
			Diffs: []validate.Diff{{Key: "10", Kind: validate.KindGhost}}}, nil
	})
	env.ExecuteWorkflow(ReconcileWorkflow, activities.ReconcileRequest{Spec: spec, RunID: "ignored", Repair: true})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res activities.ReconcileResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, 2, attempts)
	require.Equal(t, activities.ReconcileResult{Table: "shop.orders", RunID: "lakemirror-reconcile-shop.orders-x", Failed: 1,
		Diffs: []validate.Diff{{Key: "10", Kind: validate.KindGhost}}}, res)
}

func TestReconcileWorkflowID(t *testing.T) {
	at := time.Date(2026, 12, 2, 3, 4, 5, 678_900_000, time.UTC)
	require.Equal(t, "lakemirror-reconcile-shop.orders-20261202T030405.678Z", ReconcileWorkflowID("shop.orders", at))
}
