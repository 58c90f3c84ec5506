package workflows

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/validate"
)

// ValidationWorkflow runs Validate once with the table's spec and its own
// workflow id as the run id, and returns the activity's result: a failing
// check is a result, not a workflow failure. Storage errors are retried.
func TestValidationWorkflow(t *testing.T) {
	env, acts := newEnv(t)
	env.RegisterWorkflow(ValidationWorkflow)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "lakemirror-validate-shop.orders-x"})
	attempts := 0
	env.OnActivity(acts.Validate, mock.Anything, mock.Anything).Return(func(_ context.Context, req activities.ValidationRequest) (activities.ValidationResult, error) {
		attempts++
		if attempts == 1 {
			return activities.ValidationResult{}, errors.New("catalog busy")
		}
		return activities.ValidationResult{Table: req.Spec.Table, RunID: req.RunID, Failed: 1,
			Checks: []validate.Result{{Check: validate.CheckTransitions, Verdict: validate.Fail, Total: 1}}}, nil
	})
	env.ExecuteWorkflow(ValidationWorkflow, spec)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res activities.ValidationResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, 2, attempts)
	require.Equal(t, activities.ValidationResult{Table: "shop.orders", RunID: "lakemirror-validate-shop.orders-x", Failed: 1,
		Checks: []validate.Result{{Check: validate.CheckTransitions, Verdict: validate.Fail, Total: 1}}}, res)
}

// A bad spec is not retried.
func TestValidationWorkflowBadSpec(t *testing.T) {
	env, acts := newEnv(t)
	env.RegisterWorkflow(ValidationWorkflow)
	attempts := 0
	env.OnActivity(acts.Validate, mock.Anything, mock.Anything).Return(func(context.Context, activities.ValidationRequest) (activities.ValidationResult, error) {
		attempts++
		return activities.ValidationResult{}, temporal.NewNonRetryableApplicationError("bad table name", activities.ErrTypeBadSpec, nil)
	})
	env.ExecuteWorkflow(ValidationWorkflow, activities.TableSpec{Table: "nodot"})
	require.Error(t, env.GetWorkflowError())
	require.Equal(t, 1, attempts)
}

func TestValidationWorkflowID(t *testing.T) {
	at := time.Date(2026, 12, 2, 3, 4, 5, 678_900_000, time.FixedZone("x", 3600))
	require.Equal(t, "lakemirror-validate-shop.orders-20261202T020405.678Z", ValidationWorkflowID("shop.orders", at))
}
