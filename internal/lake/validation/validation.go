package validation

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/maintain"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/lake/rowdelta"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
	"github.com/lakemirror/lakemirror/internal/validate"
)

// Columns of the validation table.
const (
	ValCheck     = "check"      // the check's name (validate.Check*)
	ValScope     = "scope"      // what it looked at
	ValExpected  = "expected"   // what a correct table gives
	ValObserved  = "observed"   // what it found
	ValVerdict   = "verdict"    // pass or fail
	ValDetails   = "details"    // the findings, keys named, capped
	ValCheckedAt = "checked_at" // when the run checked
	ValRunID     = "run_id"     // the run that wrote the row (one per check)
)

// Schema is the validation table's schema: one row per check
// run (all strings but checked_at, a timestamptz).
func Schema() *iceberg.Schema {
	str := iceberg.PrimitiveTypes.String
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: ValCheck, Type: str, Required: true},
		iceberg.NestedField{ID: 2, Name: ValScope, Type: str, Required: true},
		iceberg.NestedField{ID: 3, Name: ValExpected, Type: str, Required: true},
		iceberg.NestedField{ID: 4, Name: ValObserved, Type: str, Required: true},
		iceberg.NestedField{ID: 5, Name: ValVerdict, Type: str, Required: true, Doc: "pass or fail"},
		iceberg.NestedField{ID: 6, Name: ValDetails, Type: str, Doc: "findings, one a line, at most 20 and 8 KiB"},
		iceberg.NestedField{ID: 7, Name: ValCheckedAt, Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
		iceberg.NestedField{ID: 8, Name: ValRunID, Type: str, Required: true},
	)
}

// maxDetails caps the details column, in bytes.
const maxDetails = 8 << 10

// Append writes one row per result to <ns>.<table>_validation
// (created on first use) in one commit, and returns the snapshot id.
// Errors: catalog, file IO and commit failures (retryable: a retry writes
// the run again, under the same run id).
func Append(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, runID string, at time.Time, results []validate.Result) (int64, error) {
	tbl, _, err := lakecat.LoadOrCreate(ctx, cat, name.NamespaceIdent(), name.Validation(),
		func() (*iceberg.Schema, error) { return Schema(), nil }, lakecat.TableProperties(nil))
	if err != nil {
		return 0, err
	}
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return 0, fmt.Errorf("lake: arrow schema: %w", err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	str := func(col string) *array.StringBuilder { return b.Field(sc.FieldIndices(col)[0]).(*array.StringBuilder) }
	ts := b.Field(sc.FieldIndices(ValCheckedAt)[0]).(*array.TimestampBuilder)
	for _, r := range results {
		str(ValCheck).Append(r.Check)
		str(ValScope).Append(r.Scope)
		str(ValExpected).Append(r.Expected)
		str(ValObserved).Append(r.Observed)
		str(ValVerdict).Append(r.Verdict)
		d := r.Details()
		if len(d) > maxDetails {
			d = d[:maxDetails] + "\n... (cut)"
		}
		str(ValDetails).Append(d)
		ts.Append(parquetio.Timestamp(at.UnixMicro()))
		str(ValRunID).Append(runID)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	files, _, err := rowdelta.WriteRecord(ctx, tbl, "validation", rec)
	df := rowdelta.DataFiles(files)
	if err != nil {
		return 0, err
	}
	_, snap, err := rowdelta.CommitRowDelta(ctx, tbl, "validation", df, rowdelta.DeleteSet{}, iceberg.Properties{"lakemirror.validation-run": runID})
	if err != nil {
		return 0, err
	}
	return snap, nil
}

// BronzeAudit is what validation reads from a table's bronze table for
// one topic: the row changes (key, partition, offset, op c/u/d/r, `_seq`),
// the positions of truncates, every offset held per partition (row changes
// or not), the covered offset ranges and bronze's checkpoint.
type BronzeAudit struct {
	Records    []validate.Record
	Truncates  []string
	Offsets    map[int32][]int64
	Covered    map[int32][]validate.Span
	Checkpoint lakecat.Checkpoint
	// TrimmedBefore: bronze retention dropped the records ingested
	// before it (zero: bronze holds every record it took).
	TrimmedBefore time.Time
}

// ReadBronzeAudit reads the bronze table's records of topic (its current
// snapshot; bronze is append-only). It returns nil when the table does
// not exist. Memory: about 60 bytes per record plus the key. Errors:
// catalog and file IO failures, a bad lakemirror.covered.
func ReadBronzeAudit(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, topic string) (*BronzeAudit, error) {
	tbl, err := lakecat.LoadTable(ctx, cat, name.Bronze())
	if err != nil || tbl == nil {
		return nil, err
	}
	a := &BronzeAudit{Offsets: map[int32][]int64{}, Covered: map[int32][]validate.Span{}}
	if a.Checkpoint, err = lakecat.ReadCheckpoint(tbl); err != nil {
		return nil, err
	}
	if a.TrimmedBefore, err = maintain.TrimmedBefore(tbl); err != nil {
		return nil, err
	}
	cov, err := lakecat.ReadCoverage(tbl)
	if err != nil {
		return nil, err
	}
	for p, rs := range cov[topic] {
		for _, r := range rs {
			a.Covered[p] = append(a.Covered[p], validate.Span{From: r[0], To: r[1]})
		}
	}
	if tbl.CurrentSnapshot() == nil {
		return a, nil
	}
	err = tableread.ScanColumns(ctx, tbl, []string{lakecat.BronzeTopic, lakecat.BronzePartition, lakecat.BronzeOffset, lakecat.BronzeOp, lakecat.ColSeq, lakecat.ColKey, lakecat.ColSourceTs}, func(rec arrow.RecordBatch, col func(string) arrow.Array) error {
		tss, _ := col(lakecat.ColSourceTs).(*array.Timestamp) // nil for a bronze table without the column
		topics, _ := col(lakecat.BronzeTopic).(*array.String)
		parts, _ := col(lakecat.BronzePartition).(*array.Int32)
		offs, _ := col(lakecat.BronzeOffset).(*array.Int64)
		ops, _ := col(lakecat.BronzeOp).(*array.String)
		seqs, _ := col(lakecat.ColSeq).(*array.String)
		keys, _ := col(lakecat.ColKey).(*array.String)
		if topics == nil || parts == nil || offs == nil || ops == nil || seqs == nil || keys == nil {
			return fmt.Errorf("lake: bronze %s: unexpected column types %s", name, rec.Schema())
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			if topics.Value(r) != topic {
				continue
			}
			p, o := parts.Value(r), offs.Value(r)
			a.Offsets[p] = append(a.Offsets[p], o)
			if ops.IsNull(r) || seqs.IsNull(r) {
				continue
			}
			switch op := ops.Value(r); op {
			case "t":
				a.Truncates = append(a.Truncates, seqs.Value(r))
			case "c", "u", "d", "r":
				if keys.IsNull(r) {
					continue
				}
				vr := validate.Record{Key: keys.Value(r), Partition: p, Offset: o, Op: op, Seq: seqs.Value(r)}
				if tss != nil && !tss.IsNull(r) {
					vr.SourceTs = int64(tss.Value(r))
				}
				a.Records = append(a.Records, vr)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(a.Records, func(x, y validate.Record) int {
		return cmp.Or(cmp.Compare(x.Partition, y.Partition), cmp.Compare(x.Offset, y.Offset))
	})
	return a, nil
}

// lastBatchSeq is the highest batch sequence number among points.
func lastBatchSeq(points []validate.Point) int64 {
	var n int64
	for _, p := range points {
		n = max(n, p.BatchSeq)
	}
	return n
}

// resultWatermark is the watermark of a lakecat.PropBatchResult JSON ("" when
// it has none or does not parse).
func resultWatermark(js string) string {
	var r struct {
		Watermark string `json:"watermark"`
	}
	if json.Unmarshal([]byte(js), &r) != nil {
		return ""
	}
	return r.Watermark
}

// MirrorAudit is what validation reads from a mirror table: the
// bookkeeping of each snapshot in its current ancestry (oldest first, then
// the table properties when a later batch changed no row and so committed
// no snapshot),
// the applied position recorded now (lakecat.PropAppliedPosition; for a table
// written before it, the highest batch watermark its retained snapshots
// and checkpoint recorded; "" when none), the highest `_seq` and `_source_ts` (µs since the
// epoch) of its rows, its row count and checkpoint.
type MirrorAudit struct {
	Points      []validate.Point
	Applied     string
	MaxSeq      string
	MaxSourceTs int64
	Rows        int
	Checkpoint  lakecat.Checkpoint
}

// ReadMirrorAudit reads the mirror's snapshot summaries and its rows'
// `_seq` and `_source_ts`. It returns nil when the table does not exist.
// Errors: catalog and file IO failures, a summary whose batch-seq or
// end-offsets does not parse.
func ReadMirrorAudit(ctx context.Context, cat catalog.Catalog, name lakecat.TableName) (*MirrorAudit, error) {
	tbl, err := lakecat.LoadTable(ctx, cat, name.Mirror())
	if err != nil || tbl == nil {
		return nil, err
	}
	a := &MirrorAudit{Applied: tbl.Properties()[lakecat.PropAppliedPosition]}
	if a.Checkpoint, err = lakecat.ReadCheckpoint(tbl); err != nil {
		return nil, err
	}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return a, nil
	}
	// a table written before lakecat.PropAppliedPosition: the highest batch
	// watermark its retained snapshots and checkpoint recorded
	legacy := a.Applied == ""
	if legacy {
		a.Applied = resultWatermark(string(a.Checkpoint.Result))
	}
	anc := lakecat.Ancestors(tbl, snap.SnapshotID)
	slices.Reverse(anc)
	for _, s := range anc {
		pt := validate.Point{Snapshot: s.SnapshotID}
		if s.Summary != nil {
			p := s.Summary.Properties
			pt.Applied = p[lakecat.PropAppliedPosition]
			if t := p[lakecat.PropBatchSeq]; t != "" {
				if pt.BatchSeq, err = strconv.ParseInt(t, 10, 64); err != nil {
					return nil, fmt.Errorf("lake: snapshot %d: bad %s %q", s.SnapshotID, lakecat.PropBatchSeq, t)
				}
			}
			if t := p[lakecat.PropEndOffsets]; t != "" {
				if err := json.Unmarshal([]byte(t), &pt.EndOffsets); err != nil {
					return nil, fmt.Errorf("lake: snapshot %d: bad %s %q: %w", s.SnapshotID, lakecat.PropEndOffsets, t, err)
				}
			}
		}
		a.Points = append(a.Points, pt)
		if legacy && s.Summary != nil {
			a.Applied = max(a.Applied, resultWatermark(s.Summary.Properties[lakecat.PropBatchResult]))
		}
	}
	// a batch that changed no row commits its bookkeeping to the
	// properties only
	if last := lastBatchSeq(a.Points); a.Checkpoint.BatchSeq > last {
		a.Points = append(a.Points, validate.Point{BatchSeq: a.Checkpoint.BatchSeq,
			Applied: tbl.Properties()[lakecat.PropAppliedPosition], EndOffsets: a.Checkpoint.EndOffsets})
	}
	err = tableread.ScanColumns(ctx, tbl, []string{lakecat.ColSeq, lakecat.ColSourceTs}, func(rec arrow.RecordBatch, col func(string) arrow.Array) error {
		seqs, _ := col(lakecat.ColSeq).(*array.String)
		tss, _ := col(lakecat.ColSourceTs).(*array.Timestamp)
		if seqs == nil {
			return fmt.Errorf("lake: mirror %s: no string %s column", name, lakecat.ColSeq)
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			a.Rows++
			if !seqs.IsNull(r) {
				a.MaxSeq = max(a.MaxSeq, seqs.Value(r))
			}
			if tss != nil && !tss.IsNull(r) {
				a.MaxSourceTs = max(a.MaxSourceTs, int64(tss.Value(r)))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}
