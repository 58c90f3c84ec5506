package activities

import (
	"context"
	"errors"
	"maps"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
)

// pollInterval is how often PlanBatch re-reads the high watermarks while
// it waits for a batch to fill; idlePollInterval how often the worker's
// shared watch (hwmwatch.go) re-reads those of all tables waiting for a
// first record past MaxWait (PlanRequest.IdleWait).
// idleHeartbeat is how often an idle PlanBatch heartbeats while it waits
// on the shared watch (the SDK sends at most one per 80 % of the
// heartbeat timeout).
const (
	pollInterval     = 200 * time.Millisecond
	idlePollInterval = time.Second
	idleHeartbeat    = 5 * time.Second
)

// PlanBatch chooses the next batch: exact offset ranges per partition,
// starting at the workflow's offsets, bounded by spec.MaxEvents records in
// total (more, up to spec.MaxBatchEvents, while the table is more than two
// batches behind: TableSpec.BatchBudget), waiting up to spec.MaxWait for
// MaxEvents to arrive. It returns as soon as MaxEvents are available, or
// at MaxWait with whatever is there; when nothing is there it waits on for
// a first record up to req.IdleWait (heartbeating; the workflow cancels it
// for a signal) and returns what arrived, possibly nothing. Partitions the
// workflow has no offset for start as StartOffsets says. The first plan of
// a table that starts from "latest" returns at once, with no ranges, so
// the workflow records the starting offsets before it waits: a record
// produced while it waited would otherwise be skipped when the wait
// re-read the high watermarks. That first plan also records the offsets
// in the catalog (lakecat.StartRecord), so that a restart before the first
// commit goes on from them (Recover). A topic that does not exist yet yields an
// empty plan. When the activity's worker begins to stop while the plan
// waits (or before it), the plan returns at once with what has arrived
// (possibly nothing) and Leaving set, after writing the table's state
// sidecar (sidecars on): the workflow claims the table again, and another
// worker, or this one restarted, plans and applies on (leave.go).
//
// Errors: a next offset below the partition's log start offset (records
// deleted by retention before they were applied) is a non-retryable
// KafkaRetentionGap failure; a partition whose log ends below the
// workflow's offset, or that no longer exists (the topic was deleted and
// re-created), a non-retryable KafkaLogReset failure; other Kafka errors
// are retried.
func (a *Activities) PlanBatch(ctx context.Context, req PlanRequest) (Plan, error) {
	spec := req.Spec.Defaults()
	if err := a.checkCatalog(spec); err != nil {
		return Plan{}, err
	}
	started := time.Now()
	a.owner.touch(spec.Table, started) // an idle table stays held while it plans here
	deadline, idleDeadline := started.Add(spec.MaxWait), started.Add(max(spec.MaxWait, req.IdleWait))
	topicWasMissing := req.TopicWasMissing
	stop := a.workerStop(ctx)
	wctx, cancelWait := untilStop(ctx, stop) // the waits end when the worker stops
	defer cancelWait()
	for {
		plan, avail, err := a.planOnce(ctx, spec, req.Offsets, topicWasMissing)
		if errors.Is(err, kafka.ErrUnknownTopic) {
			plan, avail, err = Plan{Offsets: maps.Clone(req.Offsets), TopicMissing: true}, 0, nil
			topicWasMissing = true // created while this plan waits: read it from its start
		}
		if err != nil && ctx.Err() != nil {
			return Plan{}, waitCanceled(ctx)
		}
		if err != nil {
			a.observeFailure(spec.Table, "plan", err)
			return Plan{}, classify(err)
		}
		now := time.Now()
		// nothing yet: wait on, up to IdleWait (not for a missing topic: the
		// workflow shows topic_missing once the plan returns)
		idle := avail == 0 && !plan.TopicMissing && now.Before(idleDeadline)
		// a first plan from "latest" returns its starting offsets at once
		pinLatest := len(req.Offsets) == 0 && len(plan.Offsets) > 0 && startsAtEnd(spec, req.Offsets, topicWasMissing)
		if pinLatest {
			if plan, err = a.recordStart(ctx, spec, plan); err != nil {
				a.observeFailure(spec.Table, "plan", err)
				return Plan{}, classify(err)
			}
		}
		plan.Leaving = closed(stop)
		if pinLatest || avail >= int64(spec.MaxEvents) || (!now.Before(deadline) && !idle) || plan.Leaving {
			a.observeLag(spec.Table, plan)
			plan.Catalog = a.CatalogID
			if plan.Leaving {
				a.leaveTable(ctx, spec.Table)
			}
			return plan, nil
		}
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx, avail)
		}
		if !now.Before(deadline) {
			// idle past MaxWait: wait on the worker's shared watch of the
			// high watermarks (one ListOffsets round per second for all
			// idle tables), heartbeating, until the topic moves or
			// IdleWait ends; then plan again
			for !a.watch().wait(wctx, spec.Topic, plan.HighWatermarks, min(idleHeartbeat, time.Until(idleDeadline))) {
				if ctx.Err() != nil {
					return Plan{}, waitCanceled(ctx)
				}
				if !time.Now().Before(idleDeadline) || closed(stop) {
					break
				}
				if activity.IsActivity(ctx) {
					activity.RecordHeartbeat(ctx, avail)
				}
			}
			continue
		}
		wait := min(pollInterval, deadline.Sub(now))
		select {
		case <-ctx.Done():
			return Plan{}, waitCanceled(ctx)
		case <-stop:
		case <-time.After(wait):
		}
	}
}

// recordStart records the starting offsets of a table's first plan from
// "latest" in the catalog (lakecat.RecordStart), where they outlive the
// workflow: a table stopped before its first batch commits and started
// again goes on from them (Recover) instead of from the topic's end of
// that moment, which would skip what was produced in between. A start
// already recorded for the topic (a retried first plan) wins: plan then
// takes its offsets, with no ranges (the next plan reads from them).
func (a *Activities) recordStart(ctx context.Context, spec TableSpec, plan Plan) (Plan, error) {
	name, err := lake.ParseTableName(spec.Table)
	if err != nil {
		return plan, badSpec(err)
	}
	rec, err := lakecat.RecordStart(ctx, a.Catalog, name, lakecat.StartRecord{Topic: spec.Topic, StartFrom: spec.StartFrom,
		Offsets: plan.Offsets, At: time.Now().UTC()})
	if err != nil {
		return plan, err
	}
	if !maps.Equal(rec.Offsets, plan.Offsets) {
		plan.Offsets, plan.Ranges, plan.Records = maps.Clone(rec.Offsets), nil, 0
	}
	return plan, nil
}

// waitCanceled is PlanBatch's error when its context ends while it waits:
// a benign ApplicationError of type ErrTypeWaitCanceled (the SDK logs it at
// DEBUG instead of an ERROR "Activity error" per idle table at every
// worker shutdown and every signal that cuts a wait short) that wraps the
// context's error, so a cancellation by the workflow is still reported to
// Temporal as the activity's cancellation (errors.Is context.Canceled).
// The message names the cause (the SDK's "worker is now shutdown", or
// the workflow's cancellation).
func waitCanceled(ctx context.Context) error {
	cause := context.Cause(ctx)
	if cause == nil {
		cause = ctx.Err()
	}
	return temporal.NewApplicationErrorWithOptions("the plan's wait for records was cut short: "+cause.Error(), ErrTypeWaitCanceled,
		temporal.ApplicationErrorOptions{Cause: ctx.Err(), Category: temporal.ApplicationErrorCategoryBenign})
}

// planOnce builds a plan from the current offsets; avail is the number of
// offsets available beyond the workflow's position (not capped).
// topicWasMissing: see StartOffsets.
func (a *Activities) planOnce(ctx context.Context, spec TableSpec, from lake.Offsets, topicWasMissing bool) (Plan, int64, error) {
	ends, err := a.Kafka.EndOffsets(ctx, spec.Topic)
	if err != nil {
		return Plan{}, 0, err
	}
	starts, err := a.Kafka.StartOffsets(ctx, spec.Topic)
	if err != nil {
		return Plan{}, 0, err
	}
	next := StartOffsets(spec, from, topicWasMissing, starts, ends)
	avail := map[int32]int64{}
	var total int64
	for _, p := range from.SortedPartitions() {
		if end, ok := ends[p]; !ok || from[p] > end {
			if !ok {
				end = -1
			}
			return Plan{}, 0, &kafka.LogResetError{Topic: spec.Topic, Partition: p, Consumed: from[p], End: end}
		}
	}
	for _, p := range next.SortedPartitions() {
		if s, ok := starts[p]; ok && next[p] < s {
			return Plan{}, 0, &kafka.RetentionGapError{Topic: spec.Topic, Partition: p, From: next[p], To: s, LogStart: s}
		}
		if n := ends[p] - next[p]; n > 0 {
			avail[p] = n
			total += n
		}
	}
	plan := Plan{Offsets: next, HighWatermarks: lake.Offsets(ends), LogStart: lake.Offsets(starts)}
	plan.Ranges = share(next, avail, spec.BatchBudget(total))
	plan.Offsets = maps.Clone(next)
	for _, r := range plan.Ranges {
		plan.Offsets[r.Partition] = r.To
		plan.Records += r.To - r.From
	}
	return plan, total, nil
}

// StartOffsets returns from with a starting offset added for every
// partition of ends it lacks: the partition's log start (starts[p]) with
// StartFrom "earliest", its high watermark (ends[p]) with "latest". It
// adds the high watermark only on the table's first plan (from empty) of a
// topic that existed when the table started (topicWasMissing false). A
// partition that appears once the table has offsets (partitions added to
// the topic), or a topic created after the table started, holds only
// records produced after the start, so it starts at its log start with
// "latest" too: starting it at its high watermark would skip the records
// written to it before the table's next plan. Offsets are Kafka offsets.
func StartOffsets(spec TableSpec, from lake.Offsets, topicWasMissing bool, starts, ends map[int32]int64) lake.Offsets {
	next := maps.Clone(from)
	if next == nil {
		next = lake.Offsets{}
	}
	atEnd := startsAtEnd(spec, from, topicWasMissing)
	for p, end := range ends {
		if _, ok := next[p]; !ok {
			if atEnd {
				next[p] = end
			} else {
				next[p] = starts[p]
			}
		}
	}
	return next
}

// startsAtEnd: partitions without an offset start at their high
// watermark (StartOffsets).
func startsAtEnd(spec TableSpec, from lake.Offsets, topicWasMissing bool) bool {
	return spec.StartFrom == "latest" && len(from) == 0 && !topicWasMissing
}

// share splits a budget of offsets over the partitions with data, evenly
// first, then giving what some could not use to the others, in partition
// order. Ranges come out in partition order.
func share(next lake.Offsets, avail map[int32]int64, budget int64) []lake.Range {
	take := map[int32]int64{}
	parts := next.SortedPartitions()
	for budget > 0 {
		var open []int32
		for _, p := range parts {
			if avail[p]-take[p] > 0 {
				open = append(open, p)
			}
		}
		if len(open) == 0 {
			break
		}
		each := max(budget/int64(len(open)), 1)
		for _, p := range open {
			n := min(each, avail[p]-take[p], budget)
			take[p] += n
			budget -= n
			if budget == 0 {
				break
			}
		}
	}
	var out []lake.Range
	for _, p := range parts {
		if take[p] > 0 {
			out = append(out, lake.Range{Partition: p, From: next[p], To: next[p] + take[p]})
		}
	}
	return out
}
