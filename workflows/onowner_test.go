package workflows

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/activities"
)

// A maintenance job runs on the queue of the worker holding the table
// (TableOwner's answer for the request's table); a reconciliation does not
// (its heartbeated progress would not survive a fallback).
func TestJobsRunOnTheTableOwner(t *testing.T) {
	env, acts := newEnv(t)
	env.RegisterWorkflow(MaintenanceWorkflow)
	var asked []string
	env.OnActivity(acts.TableOwner, mock.Anything, mock.Anything).Return(func(_ context.Context, table string) (string, error) {
		asked = append(asked, table)
		return "lakemirror@w1", nil
	})
	var queues []string
	env.OnActivity(acts.Maintain, mock.Anything, mock.Anything).Return(func(ctx context.Context, req activities.MaintenanceRequest) (activities.MaintenanceResult, error) {
		queues = append(queues, activity.GetInfo(ctx).TaskQueue)
		return activities.MaintenanceResult{Job: req.Job}, nil
	})
	env.ExecuteWorkflow(MaintenanceWorkflow, activities.MaintenanceRequest{Spec: spec, Job: activities.JobCompact})
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, []string{"shop.orders"}, asked)
	require.Equal(t, []string{"lakemirror@w1"}, queues)

	// a reconciliation stays on the shared queue, owner or not
	env, acts = newEnv(t)
	env.RegisterWorkflow(ReconcileWorkflow)
	env.OnActivity(acts.TableOwner, mock.Anything, mock.Anything).Return("lakemirror@w2", nil).Maybe()
	queues = nil
	env.OnActivity(acts.Reconcile, mock.Anything, mock.Anything).Return(func(ctx context.Context, req activities.ReconcileRequest) (activities.ReconcileResult, error) {
		queues = append(queues, activity.GetInfo(ctx).TaskQueue)
		return activities.ReconcileResult{Table: req.Spec.Table}, nil
	})
	env.ExecuteWorkflow(ReconcileWorkflow, activities.ReconcileRequest{Spec: spec})
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, []string{"default-test-taskqueue"}, queues)
}

// The job falls back to the shared queue when no worker holds the table,
// when the owner cannot be found (every lookup attempt fails), and when
// the owner takes no task (a schedule-to-start timeout on its queue);
// any other failure of the job on the owner is the job's.
func TestJobsFallBackToTheSharedQueue(t *testing.T) {
	cases := []struct {
		name     string
		owner    string
		ownerErr error
		onOwner  error // what the job does on the owner's queue
		want     []string
		wantErr  bool
	}{
		{name: "no owner", want: []string{"default-test-taskqueue"}},
		{name: "lookup fails", ownerErr: errors.New("frontend unavailable"), want: []string{"default-test-taskqueue"}},
		{name: "owner gone", owner: "lakemirror@w1", onOwner: temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil),
			want: []string{"lakemirror@w1", "default-test-taskqueue"}},
		{name: "job fails on the owner", owner: "lakemirror@w1", onOwner: temporal.NewNonRetryableApplicationError("bad", activities.ErrTypeBadSpec, nil),
			want: []string{"lakemirror@w1"}, wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, acts := newEnv(t)
			env.RegisterWorkflow(MaintenanceWorkflow)
			lookups := 0
			env.OnActivity(acts.TableOwner, mock.Anything, mock.Anything).Return(func(context.Context, string) (string, error) {
				lookups++
				return c.owner, c.ownerErr
			})
			var queues []string
			env.OnActivity(acts.Maintain, mock.Anything, mock.Anything).Return(func(ctx context.Context, req activities.MaintenanceRequest) (activities.MaintenanceResult, error) {
				q := activity.GetInfo(ctx).TaskQueue
				queues = append(queues, q)
				if q == c.owner && c.onOwner != nil {
					return activities.MaintenanceResult{}, c.onOwner
				}
				return activities.MaintenanceResult{Job: req.Job}, nil
			})
			env.ExecuteWorkflow(MaintenanceWorkflow, activities.MaintenanceRequest{Spec: spec, Job: activities.JobCompact})
			require.Equal(t, c.want, queues)
			if c.wantErr {
				require.Error(t, env.GetWorkflowError())
			} else {
				require.NoError(t, env.GetWorkflowError())
			}
			wantLookups := 1
			if c.ownerErr != nil {
				wantLookups = 3
			}
			require.Equal(t, wantLookups, lookups)
		})
	}
}
