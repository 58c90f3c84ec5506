package kafka

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors returned by this package wrap them, so test with
// errors.Is.
var (
	// ErrRetentionGap: records a caller asked for were deleted from the log
	// (retention, DeleteRecords) before they were read. The full error is a
	// *RetentionGapError naming the topic, partition and missing offsets.
	ErrRetentionGap = errors.New("kafka: requested records were deleted by retention")

	// ErrUnknownTopic: the topic does not exist.
	ErrUnknownTopic = errors.New("kafka: unknown topic")

	// ErrRangePastEnd: a Fetch range ends beyond the partition's high
	// watermark, so it could never complete.
	ErrRangePastEnd = errors.New("kafka: range ends past the high watermark")

	// ErrLogReset: a partition's log ends below an offset the caller has
	// already consumed (the topic was deleted and re-created, or a
	// partition vanished). The full error is a *LogResetError.
	ErrLogReset = errors.New("kafka: the log ends below an offset already consumed")
)

// LogResetError reports a partition whose high watermark End is below the
// offset Consumed the caller has already read up to (End is -1 when the
// partition no longer exists). Offsets of the new log do not identify the
// same records as before, so reading on would mix two logs. It matches
// ErrLogReset under errors.Is.
type LogResetError struct {
	Topic     string
	Partition int32
	Consumed  int64 // next offset the caller would read
	End       int64 // the partition's high watermark; -1 = no such partition
}

func (e *LogResetError) Error() string {
	if e.End < 0 {
		return fmt.Sprintf("kafka: %s partition %d no longer exists but offsets up to %d were consumed from it: the topic was deleted and re-created with fewer partitions",
			e.Topic, e.Partition, e.Consumed)
	}
	return fmt.Sprintf("kafka: %s partition %d ends at offset %d, below offset %d already consumed: the topic was deleted and re-created (its offsets name other records now)",
		e.Topic, e.Partition, e.End, e.Consumed)
}

// Unwrap makes errors.Is(err, ErrLogReset) true.
func (e *LogResetError) Unwrap() error { return ErrLogReset }

// RetentionGapError is the error Fetch returns when a range starts below
// the partition's log start offset. Missing offsets are the half-open
// interval [From, To); LogStart is the partition's log start offset when
// the gap was detected. It matches ErrRetentionGap under errors.Is.
type RetentionGapError struct {
	Topic     string
	Partition int32
	From, To  int64 // missing offsets, [From, To)
	LogStart  int64
}

func (e *RetentionGapError) Error() string {
	return fmt.Sprintf("kafka: %s partition %d: offsets [%d, %d) were deleted by retention (log start offset is %d)",
		e.Topic, e.Partition, e.From, e.To, e.LogStart)
}

// Unwrap makes errors.Is(err, ErrRetentionGap) true.
func (e *RetentionGapError) Unwrap() error { return ErrRetentionGap }

func unknownTopic(topic string, cause error) error {
	if cause == nil {
		return fmt.Errorf("%w %q", ErrUnknownTopic, topic)
	}
	return fmt.Errorf("%w %q: %w", ErrUnknownTopic, topic, cause)
}
