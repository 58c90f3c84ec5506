package activities

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/validation"
	"github.com/lakemirror/lakemirror/internal/validate"
	"github.com/lakemirror/lakemirror/schemas"
)

// Validate runs the validation checks (internal/validate) on a table's
// bronze and mirror tables and the topic's retained log, writes one row
// per check to <ns>.<table>_validation and returns the results. A
// failing check is a result, not an error. Reading cost: one scan of
// bronze's coordinate, op, `_seq` and `_key` columns, of the mirror's
// `_seq` and `_source_ts`, and (replay) of the mirror's rows and the
// purged-keys table; Kafka is read only over the spans of bronze's
// holes that it still retains (one fetch per window of at most 50,000
// offsets holding holes).
// Errors: a bad spec (non-retryable InvalidTableSpec), catalog, storage
// and Kafka failures (retried).
func (a *Activities) Validate(ctx context.Context, req ValidationRequest) (ValidationResult, error) {
	spec := req.Spec.Defaults()
	res := ValidationResult{Table: spec.Table, RunID: req.RunID, CheckedAt: time.Now().UTC()}
	name, err := lake.ParseTableName(spec.Table)
	if err != nil {
		return res, badSpec(err)
	}
	stop := keepAlive(ctx, 5*time.Second, func() any { return "validate" })
	defer stop()
	mirror, err := validation.ReadMirrorAudit(ctx, a.Catalog, name)
	if err != nil {
		return res, err
	}
	if mirror == nil {
		mirror = &validation.MirrorAudit{}
	}
	var bronze *validation.BronzeAudit
	var parts []validate.PartitionOffsets
	if !spec.WithoutBronze {
		if bronze, err = validation.ReadBronzeAudit(ctx, a.Catalog, name, spec.Topic); err != nil {
			return res, err
		}
	}
	if bronze == nil {
		res.Skipped = []string{validate.CheckPartitioning, validate.CheckTransitions, validate.CheckContinuity, validate.CheckReplay, validate.CheckReapply}
		res.SkipReasons = map[string]string{}
		for _, c := range res.Skipped {
			res.SkipReasons[c] = "the table keeps no bronze"
		}
	} else if !bronze.TrimmedBefore.IsZero() {
		// the checks that read a key's or a partition's whole past from
		// bronze would report what retention dropped as lost
		res.Checks = append(res.Checks, validate.Partitioning(bronze.Records))
		res.Skipped = []string{validate.CheckTransitions, validate.CheckContinuity, validate.CheckReplay}
		res.SkipReasons = map[string]string{}
		for _, c := range res.Skipped {
			res.SkipReasons[c] = fmt.Sprintf("bronze retention dropped the records ingested before %s; this check needs bronze's whole past (docs/retention.md)",
				bronze.TrimmedBefore.UTC().Format(time.RFC3339))
		}
	} else {
		res.Checks = append(res.Checks, validate.Partitioning(bronze.Records), validate.Transitions(bronze.Records, bronze.Truncates))
		position := mirror.Checkpoint.EndOffsets
		if mirror.Checkpoint.BatchSeq == 0 {
			position = bronze.Checkpoint.EndOffsets
		}
		keyOf, err := a.holeKeys(ctx, spec, name)
		if err != nil {
			return res, err
		}
		if parts, err = a.offsetsOf(ctx, spec.Topic, bronze, position, keyOf); err != nil {
			return res, err
		}
		res.Checks = append(res.Checks, validate.Continuity(parts))
	}
	res.Checks = append(res.Checks, validate.Watermarks(mirror.Points, mirror.MaxSeq, mirror.Applied))
	if bronze != nil {
		rs, err := validation.ReadMirrorReplayState(ctx, a.Catalog, name)
		if err != nil {
			return res, err
		}
		if rs == nil {
			rs = &validation.MirrorReplayState{}
		}
		if bronze.TrimmedBefore.IsZero() {
			res.Checks = append(res.Checks, validate.Replay(appliedRecords(bronze.Records, mirror.Checkpoint), rs.Rows, rs.Purges, rs.Pending))
		}
		r, why, err := a.reapply(ctx, spec, name, req.RunID, rs.Purges, rs.Pending)
		if err != nil {
			return res, err
		}
		if why != "" {
			res.Skipped = append(res.Skipped, validate.CheckReapply)
			if res.SkipReasons == nil {
				res.SkipReasons = map[string]string{}
			}
			res.SkipReasons[validate.CheckReapply] = why
		} else {
			res.Checks = append(res.Checks, r)
		}
	}
	if err := a.nameKeys(ctx, spec, name, res.Checks); err != nil {
		return res, err
	}
	for _, c := range res.Checks {
		if c.Verdict == validate.Fail {
			res.Failed++
		}
	}
	if mirror.Applied != "" {
		res.SourceWatermark = mirror.Applied
	}
	eventTs := mirror.MaxSourceTs // without bronze: the newest applied
	if bronze != nil {
		eventTs = validate.EventTimeWatermark(appliedRecords(bronze.Records, mirror.Checkpoint), parts)
	}
	if eventTs > 0 {
		res.EventTimeWatermark = time.UnixMicro(eventTs).UTC()
	}
	if res.Snapshot, err = validation.Append(ctx, a.Catalog, name, req.RunID, res.CheckedAt, res.Checks); err != nil {
		return res, err
	}
	if a.Metrics != nil {
		failed := map[string]bool{}
		for _, c := range res.Checks {
			failed[c.Check] = c.Verdict == validate.Fail
		}
		a.Metrics.ObserveValidation(spec.Table, res.CheckedAt, failed)
	}
	return res, nil
}

// nameKeys names the keys of the findings in rs as people read them
// ("order_id=1001", validate.NameKeys): by the key columns the mirror
// recorded, else the spec's. Errors: reading the mirror (catalog,
// storage) and its key columns.
func (a *Activities) nameKeys(ctx context.Context, spec TableSpec, name lake.TableName, rs []validate.Result) error {
	cols := spec.KeyColumns
	mirror, err := lake.LoadTable(ctx, a.Catalog, name.Mirror())
	if err != nil {
		return err
	}
	if mirror != nil {
		recorded, err := lakecat.KeyColumnsOf(mirror)
		if err != nil {
			return err
		}
		if len(recorded) > 0 {
			cols = recorded
		}
	}
	validate.NameKeys(rs, cols)
	return nil
}

// holeKeys returns what names a record found in one of bronze's holes:
// the hex of the primary key of the row change it carries, decoded as the
// table's batches decode it (the mirror's recorded key columns, else the
// spec's, and its Bits byte order), or "" for a record that is no row
// change or does not decode (the hole's finding still counts it). Errors:
// reading the mirror (catalog, storage) and its key columns.
func (a *Activities) holeKeys(ctx context.Context, spec TableSpec, name lake.TableName) (func(*kgo.Record) string, error) {
	opts := a.decoderOptions(spec)
	mirror, err := lake.LoadTable(ctx, a.Catalog, name.Mirror())
	if err != nil {
		return nil, err
	}
	if mirror != nil {
		recorded, err := lakecat.KeyColumnsOf(mirror)
		if err != nil {
			return nil, err
		}
		if len(recorded) > 0 {
			opts.KeyColumns = recorded
		}
		opts.BitsLeastSignificantFirst = lake.BitsLeastSignificantFirst(mirror)
	}
	dec := schemas.NewDecoder(opts)
	return func(r *kgo.Record) string {
		d, err := dec.Decode(schemas.Record{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value})
		if err != nil || d.Kind != schemas.KindChange || d.Event == nil || d.Event.Key == "" {
			return ""
		}
		return hex.EncodeToString([]byte(d.Event.Key))
	}, nil
}

// holeWindow is the widest offset span one fetch of bronze's holes reads
// (a single hole wider than this is still read in one fetch); a variable
// for tests.
var holeWindow int64 = 50_000

// offsetsOf gathers, per partition bronze covers or the table tracks,
// the covered ranges, the table's position, the topic's log start and
// high watermark, and bronze's holes with the records Kafka returns in
// their retained part, each named by keyOf (the key of its row change,
// "" for none). A topic that no longer exists leaves every hole
// unverified and the log start at 0.
func (a *Activities) offsetsOf(ctx context.Context, topic string, b *validation.BronzeAudit, position lake.Offsets, keyOf func(*kgo.Record) string) ([]validate.PartitionOffsets, error) {
	if a.Kafka == nil {
		return nil, errors.New("validate: no Kafka client")
	}
	starts, err := a.Kafka.StartOffsets(ctx, topic)
	if err != nil && !errors.Is(err, kafka.ErrUnknownTopic) {
		return nil, err
	}
	ends, err := a.Kafka.EndOffsets(ctx, topic)
	if err != nil && !errors.Is(err, kafka.ErrUnknownTopic) {
		return nil, err
	}
	all := map[int32]bool{}
	for p := range b.Covered {
		all[p] = true
	}
	for p := range position {
		all[p] = true
	}
	var out []validate.PartitionOffsets
	for _, p := range slices.Sorted(maps.Keys(all)) {
		po := validate.PartitionOffsets{Partition: p, Covered: b.Covered[p], Position: position[p], LogStart: starts[p], End: ends[p]}
		if _, ok := position[p]; !ok && len(po.Covered) > 0 {
			po.Position = po.Covered[len(po.Covered)-1].To
		}
		holes := validate.Holes(po.Covered, b.Offsets[p])
		// the retained part of the holes, read in windows of at most
		// holeWindow offsets (each one fetch) so memory stays bounded
		found := map[int64]string{} // offset → key of its row change
		fetch := func(from, to int64) error {
			recs, err := a.Kafka.Fetch(ctx, topic, []kafka.Range{{Partition: p, From: from, To: to}})
			if err != nil {
				return fmt.Errorf("validate: read partition %d [%d, %d) to check bronze's holes: %w", p, from, to, err)
			}
			for _, r := range recs {
				found[r.Offset] = keyOf(r)
			}
			return nil
		}
		var from, to int64 = -1, -1
		for _, h := range holes {
			f, t := max(h.From, po.LogStart), min(h.To, po.End)
			if ends == nil || f >= t {
				continue
			}
			if from >= 0 && t-from > holeWindow {
				if err := fetch(from, to); err != nil {
					return nil, err
				}
				from = -1
			}
			if from < 0 {
				from = f
			}
			to = t
		}
		if from >= 0 {
			if err := fetch(from, to); err != nil {
				return nil, err
			}
		}
		for _, h := range holes {
			hole := validate.Hole{Span: h, Retained: ends != nil && h.To > po.LogStart}
			for o := max(h.From, po.LogStart); hole.Retained && o < h.To; o++ {
				if k, ok := found[o]; ok {
					hole.Found = append(hole.Found, o)
					hole.Keys = append(hole.Keys, k)
				}
			}
			po.Holes = append(po.Holes, hole)
		}
		out = append(out, po)
	}
	return out, nil
}

// appliedRecords are the bronze records of recs below the mirror's
// recorded position (its checkpoint's end offsets, read before the
// mirror's rows): the changes the mirror has committed. A batch commits
// bronze before the mirror, so records at or above the position may be a
// batch whose mirror commit is still to come (in flight, or retried after
// a crash); the replay check leaves them out. None before the mirror's
// first batch.
func appliedRecords(recs []validate.Record, cp lake.Checkpoint) []validate.Record {
	if cp.BatchSeq == 0 {
		return nil
	}
	out := make([]validate.Record, 0, len(recs))
	for _, r := range recs {
		if end, ok := cp.EndOffsets[r.Partition]; ok && r.Offset < end {
			out = append(out, r)
		}
	}
	return out
}
