package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/payload"
)

// The activity options (timeouts, heartbeats, retry policies) of the
// workflows' activities, one constructor per activity. The table
// workflow's own (shortOptions, planOptions, applyOptions and the
// rebuild's) are still in table.go. Changing a value here changes what
// new workflow histories record; the replay fixtures
// (workflows/testdata/replay) hold the values of before.

// eraseOptions are the Erase activity's: it reads every data file the
// table's snapshots reach (12 h), heartbeats, and retries storage and
// commit failures 60 times (backoff 1 s to 1 min); a bad spec or a
// refused erasure fails at once.
func eraseOptions(req payload.EraseRequest) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 12 * time.Hour, // it reads every data file the table's snapshots reach
		HeartbeatTimeout:    time.Minute,
		Summary:             fmt.Sprintf("erase %d keys of %s", len(req.Keys.Hashes), req.Spec.Table),
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute, MaximumAttempts: 60,
			NonRetryableErrorTypes: []string{payload.ErrTypeBadSpec, payload.ErrTypeErasureRefused}},
	}
}

// loadOptions are the direct load's (LoadTable, load id id of spec's
// table): up to 24 h, heartbeat 2 min, retried without limit (backoff
// 1 s to 1 min) except for a bad spec or the quarantine limit.
func loadOptions(id string, spec payload.TableSpec) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		ActivityID:          "load-" + id,
		StartToCloseTimeout: 24 * time.Hour,
		HeartbeatTimeout:    2 * time.Minute,
		Summary:             fmt.Sprintf("direct load %s of %s from %s %s", id, spec.Table, spec.Source, spec.SourceTable),
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute,
			NonRetryableErrorTypes: []string{payload.ErrTypeBadSpec, payload.ErrTypeQuarantineLimit}},
	}
}

// maintenanceOptions are a maintenance job's (Maintain): up to 1 h,
// heartbeat 1 min, 60 attempts (backoff 1 s to 1 min: commit conflicts
// with the table's batches), a bad spec not retried.
func maintenanceOptions(req payload.MaintenanceRequest) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    time.Minute,
		Summary:             fmt.Sprintf("%s %s", req.Job, req.Spec.Table),
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute,
			MaximumAttempts: 60, NonRetryableErrorTypes: []string{payload.ErrTypeBadSpec}},
	}
}

// reconcileOptions are the reconciliation's activities' (table's): up to
// 24 h, heartbeat 2 min, 10 attempts (backoff 1 s to 1 min), a bad spec
// not retried.
func reconcileOptions(table string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 24 * time.Hour,
		HeartbeatTimeout:    2 * time.Minute,
		Summary:             "reconcile " + table,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute,
			MaximumAttempts: 10, NonRetryableErrorTypes: []string{payload.ErrTypeBadSpec}},
	}
}

// validationOptions are the validation's (Validate, table's): up to 1 h,
// heartbeat 1 min, 10 attempts (backoff 1 s to 1 min), a bad spec not
// retried.
func validationOptions(table string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    time.Minute,
		Summary:             "validate " + table,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute,
			MaximumAttempts: 10, NonRetryableErrorTypes: []string{payload.ErrTypeBadSpec}},
	}
}

// ownerLookupOptions are TableOwner's (onOwner asks which worker owns
// table): 30 s, 3 attempts 1 s apart.
func ownerLookupOptions(table string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		Summary:             "owner of " + table,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
	}
}

// claimOptions are ClaimTable's (table's): 30 s, backoff 100 ms by 1.5
// to 5 s; payload.ClaimAttempts attempts, unlimited for a forced claim
// (force: the table waits for a worker).
func claimOptions(table string, force bool) workflow.ActivityOptions {
	opts := workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		Summary:             "claim " + table,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, BackoffCoefficient: 1.5,
			MaximumInterval: 5 * time.Second}, // a forced claim: unlimited, a table waits for a worker
	}
	if !force {
		opts.RetryPolicy.MaximumAttempts = payload.ClaimAttempts
	}
	return opts
}
