package activities

import (
	"errors"
	"fmt"
	"strings"
	"time"

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
	var pt *lake.PastTrimmedError
	var dfe *lake.DeleteFormatError
	var br *lake.BinlogRestartedError
	switch {
	case errors.As(err, &pt):
		return temporal.NewNonRetryableApplicationError(pt.Error(), ErrTypePastTrimmed, nil,
			map[string]any{"keys": pt.Keys, "trimmed_before": pt.Before.UTC().Format(time.RFC3339), "missing": pt.Missing.Hex()})
	case errors.As(err, &le), errors.As(err, &dfe):
		return badSpec(err)
	case errors.As(err, &sc):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeSourceServerChanged, err,
			map[string]any{"server": sc.Server, "known": sc.Known, "position": sc.Position.Hex(), "applied": sc.Applied.Hex()})
	case errors.As(err, &br):
		// the message names Kafka coordinates and positions, never the key or values
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBinlogRestarted, err,
			map[string]any{"position": br.Change.Seq.Hex(), "above": br.Above.Seq.Hex(), "topic": br.Change.Origin.Topic,
				"partition": br.Change.Origin.Partition, "offset": br.Change.Origin.Offset, "ambiguous": br.Ambiguous})
	case errors.As(err, &rc):
		return badSpec(err)
	case errors.As(err, &sb):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeSchemaBlocked, err, sb.Changes)
	case errors.As(err, &de):
		// the message, not the error (whose text holds the record's
		// values), goes to Temporal history
		reason := redactRecordContent(de.Reason)
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("record %s/%d@%d cannot be decoded: %s", de.Topic, de.Partition, de.Offset, reason),
			ErrTypeUndecodable, nil, map[string]any{"topic": de.Topic, "partition": de.Partition, "offset": de.Offset, "reason": reason})
	case errors.As(err, &ce):
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("record %s/%d@%d does not fit the mirror table: %s",
			ce.Origin.Topic, ce.Origin.Partition, ce.Origin.Offset, redactRecordContent(ce.Err.Error())), ErrTypeUnfit, nil,
			map[string]any{"topic": ce.Origin.Topic, "partition": ce.Origin.Partition, "offset": ce.Origin.Offset})
	case errors.As(err, &ge), errors.Is(err, kafka.ErrRetentionGap):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeRetentionGap, err)
	case errors.Is(err, kafka.ErrLogReset):
		return temporal.NewNonRetryableApplicationError(err.Error()+"; the pipeline stops here rather than apply the new log's records under offsets it already recorded: mirror the new topic into a new table name (or drop this table's Iceberg tables and start again)", ErrTypeLogReset, err)
	}
	return err
}

// quarantineLimit is the non-retryable error of a batch with more records
// to quarantine than spec allows (ql). It names the first record's
// coordinates, stage and reason without its values (it reaches the
// workflow's status and Temporal history: redactRecordContent) and says
// how to go on.
func quarantineLimit(spec TableSpec, b lake.Batch, ql *lake.QuarantineLimitError) error {
	r := ql.First
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%d records of batch %s cannot be applied (limit %d per batch); first: %s/%d@%d (%s): %s. "+
		"To keep them in the quarantine and go on: starter settings %s --max-quarantine %d && starter retry %s; "+
		"then starter dump %s --quarantine shows them with their reasons",
		ql.Records, b.ID, ql.Limit, b.Topic, r.Partition, r.Offset, r.Stage, redactRecordContent(withoutCoordinates(r.Reason)),
		spec.Table, ql.Records, spec.Table, spec.Table), ErrTypeQuarantineLimit, nil)
}

// withoutCoordinates is a quarantine reason without the decoder's
// "schemas: cannot decode topic[p]@offset: " prefix (the caller names
// the record).
func withoutCoordinates(reason string) string {
	rest, ok := strings.CutPrefix(reason, "schemas: cannot decode ")
	if !ok {
		return reason
	}
	if _, after, ok := strings.Cut(rest, "]@"); ok {
		if _, r, ok := strings.Cut(after, ": "); ok {
			return r
		}
	}
	return reason
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
