package activities

import "github.com/lakemirror/lakemirror/internal/payload"

// The activities' request and result types live in internal/payload, the
// standard-library-only contract between workflows and activities; these
// aliases keep their activities names (the same types, so the same JSON).
type (
	TableSpec          = payload.TableSpec
	RecoverResult      = payload.RecoverResult
	PlanRequest        = payload.PlanRequest
	Plan               = payload.Plan
	ApplyRequest       = payload.ApplyRequest
	ApplyResult        = payload.ApplyResult
	RebuildRequest     = payload.RebuildRequest
	RebuildResult      = payload.RebuildResult
	StateUsage         = payload.StateUsage
	ClaimRequest       = payload.ClaimRequest
	ClaimResult        = payload.ClaimResult
	LoadRequest        = payload.LoadRequest
	LoadResult         = payload.LoadResult
	SignalResult       = payload.SignalResult
	BackfillRequest    = payload.BackfillRequest
	MaintenanceRequest = payload.MaintenanceRequest
	MaintenanceResult  = payload.MaintenanceResult
	EraseRequest       = payload.EraseRequest
	ValidationRequest  = payload.ValidationRequest
	ValidationResult   = payload.ValidationResult
	ReconcileRequest   = payload.ReconcileRequest
	ReconcileResult    = payload.ReconcileResult
)

// Error types of non-retryable activity failures (payload.ErrType*).
const (
	ErrTypeUndecodable         = payload.ErrTypeUndecodable
	ErrTypeUnfit               = payload.ErrTypeUnfit
	ErrTypeRetentionGap        = payload.ErrTypeRetentionGap
	ErrTypeLogReset            = payload.ErrTypeLogReset
	ErrTypeBadSpec             = payload.ErrTypeBadSpec
	ErrTypeSourceServerChanged = payload.ErrTypeSourceServerChanged
	ErrTypeSchemaBlocked       = payload.ErrTypeSchemaBlocked
	ErrTypeQuarantineLimit     = payload.ErrTypeQuarantineLimit
	ErrTypePastTrimmed         = payload.ErrTypePastTrimmed
	ErrTypeBinlogRestarted     = payload.ErrTypeBinlogRestarted
	ErrTypeCatalogMismatch     = payload.ErrTypeCatalogMismatch
	ErrTypeWaitCanceled        = payload.ErrTypeWaitCanceled
	ErrTypeClaimRefused        = payload.ErrTypeClaimRefused
	ErrTypeErasureRefused      = payload.ErrTypeErasureRefused
)

// ClaimAttempts, InitialLoadID and the maintenance jobs
// (payload.ClaimAttempts, payload.InitialLoadID, payload.Job*).
const (
	ClaimAttempts  = payload.ClaimAttempts
	InitialLoadID  = payload.InitialLoadID
	JobPurge       = payload.JobPurge
	JobCompact     = payload.JobCompact
	JobExpire      = payload.JobExpire
	JobKeepApplied = payload.JobKeepApplied
)
