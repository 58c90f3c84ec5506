package workflows

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/payload"
)

var spec = activities.TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"}, MaxEvents: 10, MaxWait: time.Second}

func newEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *activities.Activities) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	acts := &activities.Activities{}
	env.RegisterActivity(acts)
	env.RegisterWorkflow(TableWorkflow)
	return env, acts
}

func status(t *testing.T, env *testsuite.TestWorkflowEnvironment) Status {
	t.Helper()
	v, err := env.QueryWorkflow(QueryStatus)
	require.NoError(t, err)
	var st Status
	require.NoError(t, v.Get(&st))
	return st
}

// continued returns the input the run continued as new with; the test
// fails when it ended otherwise.
func continued(t *testing.T, env *testsuite.TestWorkflowEnvironment) TableInput {
	t.Helper()
	var can *workflow.ContinueAsNewError
	err := env.GetWorkflowError()
	require.True(t, errors.As(err, &can), "want continue-as-new, got %v", err)
	var next TableInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	require.NotNil(t, next.State)
	return next
}

// A fresh start recovers offsets, plans exact ranges from them, applies the
// batch with a derived id and sequence, and advances to the committed end
// offsets; stop completes the workflow.
func TestTableWorkflowBatches(t *testing.T) {
	env, acts := newEnv(t)
	env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{BatchSeq: 6, Offsets: lake.Offsets{0: 40}, Source: "mirror"}, nil).Once()
	plans := 0
	env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(spec.MaxWait).Return(func(_ context.Context, req activities.PlanRequest) (activities.Plan, error) {
		plans++
		if plans == 1 {
			require.Equal(t, lake.Offsets{0: 40}, req.Offsets)
			return activities.Plan{Ranges: []lake.Range{{Partition: 0, From: 40, To: 50}}, Records: 10,
				Offsets: lake.Offsets{0: 50}, HighWatermarks: lake.Offsets{0: 53}}, nil
		}
		require.Equal(t, lake.Offsets{0: 50}, req.Offsets)
		return activities.Plan{Offsets: lake.Offsets{0: 50}, HighWatermarks: lake.Offsets{0: 53}}, nil
	})
	var applied []lake.Batch
	env.OnActivity(acts.ApplyBatch, mock.Anything, mock.Anything).Return(func(_ context.Context, req activities.ApplyRequest) (activities.ApplyResult, error) {
		applied = append(applied, req.Batch)
		return activities.ApplyResult{BatchID: req.Batch.ID, BatchSeq: req.Batch.Seq, Records: 10, Changes: 9, Tombstones: 1,
			Mirror: lake.MirrorResult{Applied: 8, Stale: 1, RowsWritten: 7, SnapshotID: 32}, Bronze: lake.BronzeResult{Appended: 10, SnapshotID: 31}, EndOffsets: lake.Offsets{0: 50}}, nil
	})
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Equal(t, PhaseStream, st.Phase)
		require.Equal(t, int64(7), st.BatchSeq)
		require.Equal(t, lake.Offsets{0: 50}, st.Offsets)
		require.Equal(t, lake.Offsets{0: 3}, st.Lag)
		require.Equal(t, int64(3), st.TotalLag)
		require.Equal(t, Totals{Batches: 1, Records: 10, Changes: 9, Applied: 8, Stale: 1, Tombstones: 1, RowsWritten: 7, BronzeRows: 10}, st.Totals)
		// the newest commit per table; history committed nothing
		require.Equal(t, TableSnapshots{Bronze: SnapshotAt{ID: 31, Batch: 7}, Mirror: SnapshotAt{ID: 32, Batch: 7}}, st.Snapshots)
		env.SignalWorkflow(SignalStop, nil)
	}, 5*time.Second)
	env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: spec})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, applied, 1)
	require.Equal(t, lake.Batch{ID: "shop.orders#7", Seq: 7, Topic: spec.Topic, Ranges: []lake.Range{{Partition: 0, From: 40, To: 50}}, EndOffsets: lake.Offsets{0: 50}}, applied[0])
	require.Equal(t, PhaseStopped, status(t, env).Phase)
}

// A batch whose ApplyBatch found the next full batch waiting returns its
// plan (ApplyResult.Next), and the workflow applies that batch without a
// PlanBatch; a Next that does not start at the committed end offsets is
// not used (the workflow plans anew).
func TestTableWorkflowAppliesNextPlan(t *testing.T) {
	env, acts := newEnv(t)
	env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{Offsets: lake.Offsets{0: 0}}, nil).Once()
	var planned []lake.Offsets
	env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(spec.MaxWait).Return(func(_ context.Context, req activities.PlanRequest) (activities.Plan, error) {
		planned = append(planned, req.Offsets)
		from := req.Offsets[0]
		if from >= 40 {
			return activities.Plan{Offsets: lake.Offsets{0: from}, HighWatermarks: lake.Offsets{0: 40}}, nil
		}
		return activities.Plan{Ranges: []lake.Range{{Partition: 0, From: from, To: from + 10}}, Records: 10,
			Offsets: lake.Offsets{0: from + 10}, HighWatermarks: lake.Offsets{0: 40}}, nil
	})
	var applied []lake.Batch
	env.OnActivity(acts.ApplyBatch, mock.Anything, mock.Anything).Return(func(_ context.Context, req activities.ApplyRequest) (activities.ApplyResult, error) {
		applied = append(applied, req.Batch)
		end := req.Batch.EndOffsets[0]
		res := activities.ApplyResult{BatchID: req.Batch.ID, BatchSeq: req.Batch.Seq, Records: 10, EndOffsets: lake.Offsets{0: end}}
		switch end {
		case 10: // the next batch was waiting
			res.Next = &activities.Plan{Ranges: []lake.Range{{Partition: 0, From: 10, To: 20}}, Records: 10, Offsets: lake.Offsets{0: 20}, HighWatermarks: lake.Offsets{0: 40}}
		case 20: // a plan from other offsets: not applied
			res.Next = &activities.Plan{Ranges: []lake.Range{{Partition: 0, From: 25, To: 35}}, Records: 10, Offsets: lake.Offsets{0: 35}, HighWatermarks: lake.Offsets{0: 40}}
		}
		return res, nil
	})
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Equal(t, lake.Offsets{0: 40}, st.Offsets)
		env.SignalWorkflow(SignalStop, nil)
	}, time.Minute)
	env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: spec})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var ranges []lake.Range
	for _, b := range applied {
		ranges = append(ranges, b.Ranges...)
	}
	require.Equal(t, []lake.Range{{Partition: 0, From: 0, To: 10}, {Partition: 0, From: 10, To: 20}, {Partition: 0, From: 20, To: 30}, {Partition: 0, From: 30, To: 40}}, ranges)
	require.Equal(t, lake.Offsets{0: 20}, applied[1].EndOffsets)
	// planned before batches 1, 3 and 4 and after the last; batch 2 came from batch 1's Next
	require.Equal(t, []lake.Offsets{{0: 0}, {0: 20}, {0: 30}, {0: 40}}, planned[:4])
}

// A settings update taken while a batch runs ends the run once that
// batch is applied: it continues as new with the new settings in its
// input (what the Web UI shows), dropping the plan the batch returned for
// the next one (made with the old batch size); the new run plans the next
// batch under the new settings.
func TestTableWorkflowPlansAnewAfterSettingsChange(t *testing.T) {
	var planned []lake.Offsets
	var sizes []int
	run := func(in TableInput, update bool) *testsuite.TestWorkflowEnvironment {
		env, acts := newEnv(t)
		env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{Offsets: lake.Offsets{0: 0}}, nil).Once()
		env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(spec.MaxWait).Return(func(_ context.Context, req activities.PlanRequest) (activities.Plan, error) {
			planned = append(planned, req.Offsets)
			sizes = append(sizes, req.Spec.MaxEvents)
			from := req.Offsets[0]
			if from >= 20 {
				return activities.Plan{Offsets: lake.Offsets{0: from}, HighWatermarks: lake.Offsets{0: 20}}, nil
			}
			n := int64(req.Spec.MaxEvents)
			return activities.Plan{Ranges: []lake.Range{{Partition: 0, From: from, To: from + n}}, Records: n,
				Offsets: lake.Offsets{0: from + n}, HighWatermarks: lake.Offsets{0: 20}}, nil
		})
		env.OnActivity(acts.ApplyBatch, mock.Anything, mock.Anything).After(10 * time.Second).Return(func(_ context.Context, req activities.ApplyRequest) (activities.ApplyResult, error) {
			end := req.Batch.EndOffsets[0]
			res := activities.ApplyResult{BatchID: req.Batch.ID, BatchSeq: req.Batch.Seq, Records: 10, EndOffsets: lake.Offsets{0: end}}
			if n := int64(req.Spec.MaxEvents); end < 20 {
				res.Next = &activities.Plan{Ranges: []lake.Range{{Partition: 0, From: end, To: end + n}}, Records: n, Offsets: lake.Offsets{0: end + n}, HighWatermarks: lake.Offsets{0: 20}}
			}
			return res, nil
		})
		five := 5
		if update {
			env.RegisterDelayedCallback(func() { // while the first batch applies
				env.UpdateWorkflow(UpdateSettings, "smaller", &updateCallbacks{t: t}, SettingsRequest{SettingsChange: payload.SettingsChange{MaxEvents: &five}})
			}, spec.MaxWait+5*time.Second)
		} else {
			env.RegisterDelayedCallback(func() {
				require.Equal(t, lake.Offsets{0: 20}, status(t, env).Offsets)
				env.SignalWorkflow(SignalStop, nil)
			}, 2*time.Minute)
		}
		env.ExecuteWorkflow(TableWorkflow, in)
		require.True(t, env.IsWorkflowCompleted())
		return env
	}
	next := continued(t, run(TableInput{Spec: spec}, true))
	require.Equal(t, 5, next.Spec.MaxEvents)
	require.Equal(t, lake.Offsets{0: 10}, next.State.Offsets)
	require.Equal(t, int64(1), next.State.Totals.Batches)
	require.Equal(t, 1, next.State.Runs)
	require.Equal(t, []lake.Offsets{{0: 0}}, planned)
	env := run(next, false)
	require.NoError(t, env.GetWorkflowError())
	// the new run plans at 10; its batch [10,15) returns the plan of
	// [15,20), and the next plan finds nothing past 20
	require.Equal(t, []lake.Offsets{{0: 0}, {0: 10}, {0: 20}}, planned[:3])
	require.Equal(t, []int{spec.MaxEvents, 5, 5}, sizes[:3])
}

// A non-retryable apply failure blocks the table with the error in status;
// the retry signal re-runs the same batch.
func TestTableWorkflowBlocksAndRetries(t *testing.T) {
	env, acts := newEnv(t)
	env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{Offsets: lake.Offsets{}}, nil)
	plans := 0
	env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(spec.MaxWait).Return(func(_ context.Context, req activities.PlanRequest) (activities.Plan, error) {
		plans++
		if plans == 1 {
			return activities.Plan{Ranges: []lake.Range{{Partition: 0, From: 0, To: 3}}, Offsets: lake.Offsets{0: 3}, HighWatermarks: lake.Offsets{0: 3}}, nil
		}
		return activities.Plan{Offsets: req.Offsets, HighWatermarks: lake.Offsets{0: 3}}, nil
	})
	var attempts []lake.Batch
	env.OnActivity(acts.ApplyBatch, mock.Anything, mock.Anything).Return(func(_ context.Context, req activities.ApplyRequest) (activities.ApplyResult, error) {
		attempts = append(attempts, req.Batch)
		if len(attempts) == 1 {
			return activities.ApplyResult{}, temporal.NewNonRetryableApplicationError("record shop.public.orders/0@1: unknown op \"x\"", activities.ErrTypeUndecodable, errors.New("bad"))
		}
		return activities.ApplyResult{BatchID: req.Batch.ID, BatchSeq: req.Batch.Seq, EndOffsets: req.Batch.EndOffsets}, nil
	})
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Equal(t, PhaseBlocked, st.Phase)
		require.Equal(t, `UndecodableRecord: record shop.public.orders/0@1: unknown op "x"`, st.LastError)
		require.Equal(t, lake.Offsets{}, st.Offsets)
		env.SignalWorkflow(SignalRetry, nil)
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Equal(t, PhaseStream, st.Phase)
		require.Empty(t, st.LastError)
		require.Equal(t, lake.Offsets{0: 3}, st.Offsets)
		env.SignalWorkflow(SignalStop, nil)
	}, 2*time.Minute)
	env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: spec})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, attempts, 2)
	require.Equal(t, attempts[0], attempts[1], "the retry must re-run the same batch")
}

// Pause holds the position: no batch is planned while paused.
func TestTableWorkflowPauseHoldsPosition(t *testing.T) {
	env, acts := newEnv(t)
	env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{Offsets: lake.Offsets{0: 5}}, nil)
	plansWhilePaused, paused := 0, false
	env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(spec.MaxWait).Return(func(_ context.Context, req activities.PlanRequest) (activities.Plan, error) {
		if paused {
			plansWhilePaused++
		}
		return activities.Plan{Offsets: req.Offsets, HighWatermarks: lake.Offsets{0: 9}}, nil
	})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalPause, nil) }, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		paused = true
		st := status(t, env)
		require.Equal(t, PhasePaused, st.Phase)
		require.True(t, st.Paused)
		require.Equal(t, lake.Offsets{0: 5}, st.Offsets)
	}, 20*time.Second)
	env.RegisterDelayedCallback(func() {
		paused = false
		env.SignalWorkflow(SignalResume, nil)
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, PhaseStream, status(t, env).Phase)
		env.SignalWorkflow(SignalStop, nil)
	}, time.Hour+time.Minute)
	env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: spec})
	require.NoError(t, env.GetWorkflowError())
	require.Zero(t, plansWhilePaused)
}

// The workflow continues as new when its history is large (events or
// bytes), not after a fixed number of rounds, carrying its offsets and
// batch number.
func TestTableWorkflowContinuesAsNew(t *testing.T) {
	for _, large := range []func(env *testsuite.TestWorkflowEnvironment){
		func(env *testsuite.TestWorkflowEnvironment) { env.SetCurrentHistoryLength(historyEventsPerRun) },
		func(env *testsuite.TestWorkflowEnvironment) { env.SetCurrentHistorySize(historyBytesPerRun) },
		func(env *testsuite.TestWorkflowEnvironment) { env.SetContinueAsNewSuggested(true) },
	} {
		env, acts := newEnv(t)
		env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{BatchSeq: 2, Offsets: lake.Offsets{0: 7}}, nil).Once()
		plans := 0
		env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(spec.MaxWait).Return(func(_ context.Context, req activities.PlanRequest) (activities.Plan, error) {
			plans++
			return activities.Plan{Offsets: req.Offsets, HighWatermarks: lake.Offsets{0: 7}}, nil
		})
		// far more rounds than the old fixed count, then a large history
		env.RegisterDelayedCallback(func() { large(env) }, time.Duration(2*iterationsPerRun)*spec.MaxWait+spec.MaxWait/2)
		env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: spec})
		var can *workflow.ContinueAsNewError
		err := env.GetWorkflowError()
		require.True(t, errors.As(err, &can), "got %v", err)
		require.Equal(t, 2*iterationsPerRun+1, plans)
		var next TableInput
		require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
		require.NotNil(t, next.State)
		require.True(t, next.State.Recovered)
		require.Equal(t, int64(2), next.State.BatchSeq)
		require.Equal(t, lake.Offsets{0: 7}, next.State.Offsets)
		require.Equal(t, 1, next.State.Runs)
	}
}

// A batch blocked by the quarantine limit is let through by raising the
// limit with the settings update and retrying: the retry runs with the
// new limit.
func TestQuarantineLimitLiftedBySettings(t *testing.T) {
	env, acts := newEnv(t)
	env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{Offsets: lake.Offsets{}}, nil)
	plans := 0
	env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(spec.MaxWait).Return(func(_ context.Context, req activities.PlanRequest) (activities.Plan, error) {
		plans++
		if plans == 1 {
			return activities.Plan{Ranges: []lake.Range{{Partition: 0, From: 0, To: 3}}, Offsets: lake.Offsets{0: 3}, HighWatermarks: lake.Offsets{0: 3}}, nil
		}
		return activities.Plan{Offsets: req.Offsets, HighWatermarks: lake.Offsets{0: 3}}, nil
	})
	var limits []int
	env.OnActivity(acts.ApplyBatch, mock.Anything, mock.Anything).Return(func(_ context.Context, req activities.ApplyRequest) (activities.ApplyResult, error) {
		limits = append(limits, req.Spec.MaxQuarantine)
		if req.Spec.MaxQuarantine < 3 {
			return activities.ApplyResult{}, temporal.NewNonRetryableApplicationError("3 records of batch shop.orders#1 cannot be applied (limit 2 per batch)", activities.ErrTypeQuarantineLimit, nil)
		}
		return activities.ApplyResult{BatchID: req.Batch.ID, BatchSeq: req.Batch.Seq, Quarantined: 3, EndOffsets: req.Batch.EndOffsets}, nil
	})
	ten := 10
	env.RegisterDelayedCallback(func() {
		require.Equal(t, PhaseBlocked, status(t, env).Phase)
		env.UpdateWorkflow(UpdateSettings, "raise", &updateCallbacks{t: t}, SettingsRequest{SettingsChange: payload.SettingsChange{MaxQuarantine: &ten}})
	}, time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalRetry, nil) }, 90*time.Second)
	spec2 := spec
	spec2.MaxQuarantine = 2
	env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: spec2})
	// the blocked batch is applied with the new limit; then the run
	// continues as new with it in its input
	next := continued(t, env)
	require.Equal(t, 10, next.Spec.MaxQuarantine)
	require.Equal(t, lake.Offsets{0: 3}, next.State.Offsets)
	require.Equal(t, int64(3), next.State.Totals.Quarantined)
	require.Equal(t, PhaseStream, next.State.Phase)
	require.Equal(t, []int{2, 10}, limits)
}

// updateCallbacks fails the test when an update is rejected or fails.
type updateCallbacks struct{ t *testing.T }

func (u *updateCallbacks) Accept()                   {}
func (u *updateCallbacks) Reject(err error)          { u.t.Errorf("update rejected: %v", err) }
func (u *updateCallbacks) Complete(_ any, err error) { require.NoError(u.t, err) }

// An activity that keeps failing with an error that may pass (here Kafka
// refusing connections) shows the table as retrying with the error in
// status instead of retrying silently; once it passes the table streams
// again with the error cleared.
func TestRetryableFailureShowsRetrying(t *testing.T) {
	env, acts := newEnv(t)
	env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{Offsets: lake.Offsets{0: 5}}, nil)
	calls := 0
	env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(spec.MaxWait).Return(func(_ context.Context, req activities.PlanRequest) (activities.Plan, error) {
		calls++
		if calls <= 2*visibleAttempts {
			return activities.Plan{}, errors.New("kafka: dial tcp 127.0.0.1:9092: connect: connection refused")
		}
		return activities.Plan{Offsets: req.Offsets, HighWatermarks: lake.Offsets{0: 5}}, nil
	})
	var seen []string
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		seen = append(seen, st.Phase)
		require.Equal(t, PhaseRetrying, st.Phase)
		require.Contains(t, st.LastError, "connection refused")
	}, 20*time.Second)
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Equal(t, PhaseStream, st.Phase)
		require.Empty(t, st.LastError)
		env.SignalWorkflow(SignalStop, nil)
	}, time.Minute)
	env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: spec})
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, []string{PhaseRetrying}, seen)
	require.Greater(t, calls, 2*visibleAttempts)
}

// A table stopped while blocked shows stopped, not the phase it was in.
func TestStoppedWhileBlockedShowsStopped(t *testing.T) {
	env, acts := newEnv(t)
	env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{Offsets: lake.Offsets{}}, nil)
	env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(spec.MaxWait).Return(
		activities.Plan{Ranges: []lake.Range{{Partition: 0, From: 0, To: 3}}, Offsets: lake.Offsets{0: 3}, HighWatermarks: lake.Offsets{0: 3}}, nil)
	env.OnActivity(acts.ApplyBatch, mock.Anything, mock.Anything).Return(activities.ApplyResult{},
		temporal.NewNonRetryableApplicationError("record 0@1: unknown op", activities.ErrTypeUndecodable, nil))
	env.RegisterDelayedCallback(func() {
		require.Equal(t, PhaseBlocked, status(t, env).Phase)
		env.SignalWorkflow(SignalStop, nil)
	}, time.Minute)
	env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: spec})
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, PhaseStopped, status(t, env).Phase)
}

// The table records the catalog of the first worker that recovers it and
// keeps it: later activities carry it (workers on another catalog refuse
// them), a plan from a worker reporting another catalog does not replace
// it, and settings changes keep it.
func TestTableRecordsItsCatalog(t *testing.T) {
	env, acts := newEnv(t)
	env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(func(_ context.Context, s activities.TableSpec) (activities.RecoverResult, error) {
		require.Equal(t, "", s.Catalog)
		return activities.RecoverResult{Offsets: lake.Offsets{}, Catalog: "rest http://iceberg-rest:8181 s3://warehouse/"}, nil
	})
	var planned []string
	env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(spec.MaxWait).Return(func(_ context.Context, req activities.PlanRequest) (activities.Plan, error) {
		planned = append(planned, req.Spec.Catalog)
		return activities.Plan{Offsets: lake.Offsets{0: 0}, HighWatermarks: lake.Offsets{0: 0}, Catalog: "sql file:/elsewhere/catalog.db -"}, nil
	})
	five := 5
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(UpdateSettings, "smaller", &updateCallbacks{t: t}, SettingsRequest{SettingsChange: payload.SettingsChange{MaxEvents: &five}})
	}, 5*time.Second)
	env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: spec})
	next := continued(t, env) // the settings update ends the run
	require.Equal(t, "rest http://iceberg-rest:8181 s3://warehouse/", next.Spec.Catalog)
	require.Equal(t, 5, next.Spec.MaxEvents)
	require.NotEmpty(t, planned)
	for _, c := range planned {
		require.Equal(t, "rest http://iceberg-rest:8181 s3://warehouse/", c)
	}
}

// Pause and resume as control signals apply in the order sent: the last
// one wins, an unknown op changes nothing. (The test environment hands
// the workflow one signal at a time; the order within one workflow task,
// which separate pause and resume signals lose, is checked on the
// embedded server: worker/runner TestControlSignalsSentWhileNoWorkerRunsApplyInOrder.)
func TestTableWorkflowControlSignalsApplyInOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		send   func(env *testsuite.TestWorkflowEnvironment)
		paused bool
	}{
		{"control resume pause resume pause", func(env *testsuite.TestWorkflowEnvironment) {
			for _, op := range []string{SignalResume, SignalPause, SignalResume, SignalPause} {
				env.SignalWorkflow(SignalControl, op)
			}
		}, true},
		{"control pause resume", func(env *testsuite.TestWorkflowEnvironment) {
			env.SignalWorkflow(SignalControl, SignalPause)
			env.SignalWorkflow(SignalControl, SignalResume)
		}, false},
		{"control pause, unknown op ignored", func(env *testsuite.TestWorkflowEnvironment) {
			env.SignalWorkflow(SignalControl, SignalPause)
			env.SignalWorkflow(SignalControl, "stop-everything")
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, acts := newEnv(t)
			env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{Offsets: lake.Offsets{0: 5}}, nil)
			env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(spec.MaxWait).Return(func(_ context.Context, req activities.PlanRequest) (activities.Plan, error) {
				return activities.Plan{Offsets: req.Offsets, HighWatermarks: lake.Offsets{0: 5}}, nil
			})
			env.RegisterDelayedCallback(func() { tc.send(env) }, 10*time.Second)
			env.RegisterDelayedCallback(func() {
				st := status(t, env)
				require.Equal(t, tc.paused, st.Paused)
				if tc.paused {
					require.Equal(t, PhasePaused, st.Phase)
				} else {
					require.Equal(t, PhaseStream, st.Phase)
				}
				env.SignalWorkflow(SignalStop, nil)
			}, 10*time.Minute)
			env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: spec})
			require.NoError(t, env.GetWorkflowError())
		})
	}
}

// A settings update taken while the table is paused ends the paused wait
// and the run: it continues as new, still paused, with the new settings in
// its input.
func TestSettingsWhilePausedContinueAsNew(t *testing.T) {
	env, acts := newEnv(t)
	env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{Offsets: lake.Offsets{0: 4}}, nil).Once()
	env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(spec.MaxWait).Return(activities.Plan{Offsets: lake.Offsets{0: 4}, HighWatermarks: lake.Offsets{0: 4}}, nil)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalPause, nil) }, 5*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, PhasePaused, status(t, env).Phase)
		two := 2
		env.UpdateWorkflow(UpdateSettings, "fewer", &updateCallbacks{t: t}, SettingsRequest{SettingsChange: payload.SettingsChange{MaxEvents: &two}})
	}, time.Hour)
	env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: spec})
	next := continued(t, env)
	require.Equal(t, 2, next.Spec.MaxEvents)
	require.True(t, next.State.Paused)
	require.Equal(t, PhasePaused, next.State.Phase)
	require.Equal(t, lake.Offsets{0: 4}, next.State.Offsets)
}

// A settings update that changes nothing (the value the table has) starts
// no new run: the workflow goes on and completes on stop.
func TestSettingsUnchangedKeepsTheRun(t *testing.T) {
	env, acts := newEnv(t)
	env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{Offsets: lake.Offsets{0: 4}}, nil).Once()
	env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(spec.MaxWait).Return(activities.Plan{Offsets: lake.Offsets{0: 4}, HighWatermarks: lake.Offsets{0: 4}}, nil)
	same := spec.MaxEvents
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(UpdateSettings, "same", &updateCallbacks{t: t}, SettingsRequest{SettingsChange: payload.SettingsChange{MaxEvents: &same}})
	}, 5*time.Second)
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Equal(t, spec.MaxEvents, st.Spec.MaxEvents)
		require.Equal(t, PhaseStream, st.Phase)
		require.Equal(t, 0, st.Runs)
		env.SignalWorkflow(SignalStop, nil)
	}, time.Minute)
	env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: spec})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
}
