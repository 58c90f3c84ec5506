package activities

import (
	"context"
	"fmt"
	"slices"

	"github.com/lakemirror/lakemirror/internal/lake"
)

// ResolveBackfill turns a backfill request into exact ranges: a start
// time becomes, per partition, [first offset at or after it, position);
// every range is clamped to [log start offset, position) so it only
// covers records Kafka still holds and the table has already passed.
// Empty ranges are dropped; ranges come out in partition order.
// Errors: a range naming a partition the topic does not have
// (InvalidTableSpec, not retried); Kafka failures (retried).
func (a *Activities) ResolveBackfill(ctx context.Context, req BackfillRequest) ([]lake.Range, error) {
	spec := req.Spec.Defaults()
	if err := a.checkCatalog(spec); err != nil {
		return nil, err
	}
	starts, err := a.Kafka.StartOffsets(ctx, spec.Topic)
	if err != nil {
		return nil, classify(err)
	}
	ranges := slices.Clone(req.Ranges)
	for _, r := range ranges {
		if _, ok := starts[r.Partition]; !ok {
			return nil, badSpec(fmt.Errorf("backfill of %s: topic %s has no partition %d (it has %d)", spec.Table, spec.Topic, r.Partition, len(starts)))
		}
	}
	if len(ranges) == 0 {
		at, err := a.Kafka.OffsetsAfterTime(ctx, spec.Topic, req.From)
		if err != nil {
			return nil, classify(err)
		}
		for p, o := range at {
			ranges = append(ranges, lake.Range{Partition: p, From: o, To: req.Position[p]})
		}
	}
	var out []lake.Range
	for _, r := range ranges {
		r.From = max(r.From, starts[r.Partition])
		r.To = min(r.To, req.Position[r.Partition])
		if r.To > r.From {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(x, y lake.Range) int { return int(x.Partition - y.Partition) })
	return out, nil
}
