package activities

import (
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/source"
	"github.com/lakemirror/lakemirror/schemas"
)

// classify turns errors that retrying cannot fix into non-retryable
// Temporal application errors with a stable type; others pass through
// and are retried by the activity's retry policy.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var de *schemas.DecodeError
	var ce *lake.ConformError
	var ge *kafka.RetentionGapError
	var sb *lake.SchemaBlockedError
	var rc *lake.ReservedColumnError
	var sc *lake.SourceServerChangedError
	var le *lake.LayoutError
	switch {
	case errors.As(err, &le):
		return badSpec(err)
	case errors.As(err, &sc):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeSourceServerChanged, err,
			map[string]any{"server": sc.Server, "known": sc.Known, "position": sc.Position.Hex(), "applied": sc.Applied.Hex()})
	case errors.As(err, &rc):
		return badSpec(err)
	case errors.As(err, &sb):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeSchemaBlocked, err, sb.Changes)
	case errors.As(err, &de):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeUndecodable, err,
			map[string]any{"topic": de.Topic, "partition": de.Partition, "offset": de.Offset, "reason": de.Reason})
	case errors.As(err, &ce):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeUnfit, err,
			map[string]any{"topic": ce.Origin.Topic, "partition": ce.Origin.Partition, "offset": ce.Origin.Offset})
	case errors.As(err, &ge), errors.Is(err, kafka.ErrRetentionGap):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeRetentionGap, err)
	case errors.Is(err, kafka.ErrLogReset):
		return temporal.NewNonRetryableApplicationError(err.Error()+"; the pipeline stops here rather than apply the new log's records under offsets it already recorded: mirror the new topic into a new table name (or drop this table's Iceberg tables and start again)", ErrTypeLogReset, err)
	}
	return err
}

func badSpec(err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadSpec, err)
}

// sourceError classifies an error of the source database: non-retryable
// (BadSpec) when the table cannot be read as asked (source.IsDefinition:
// no such table, unsupported types, no usable key, a malformed DSN, no
// privilege), else retryable (a database down, restarting or unreachable:
// the table shows "retrying", then blocks after its attempts).
func sourceError(err error) error {
	if source.IsDefinition(err) {
		return badSpec(err)
	}
	return err
}
