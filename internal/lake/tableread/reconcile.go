package tableread

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/validate"
)

// MirrorRow is one mirror row as reconciliation reads it: the source
// columns' values (system columns left out), its `_seq` (hex), soft
// delete flag and `_ingested_at` (µs since the epoch; 0 when the mirror
// has none).
type MirrorRow struct {
	Row      *cdc.Row
	Seq      string
	Deleted  bool
	Ingested int64
}

// ScanMirrorRows reads every row of the mirror's current Iceberg
// snapshot (position deletes applied) and calls fn with each, in no
// particular order; rows of one record batch share their *cdc.Columns.
// It returns the applied position (lakecat.PropAppliedPosition, hex; ""
// when none) of the table metadata it read, so what the rows reflect: no
// row is above it. ("", nil) when the mirror does not exist. Memory: one
// record batch. Errors: catalog and file IO failures, a column type the
// mirror does not write, an error from fn (returned as is).
func ScanMirrorRows(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, fn func(MirrorRow) error) (string, error) {
	tbl, err := lakecat.LoadTable(ctx, cat, name.Mirror())
	if err != nil || tbl == nil {
		return "", err
	}
	applied := tbl.Properties()[lakecat.PropAppliedPosition]
	if tbl.CurrentSnapshot() == nil {
		return applied, nil
	}
	return applied, ScanRows(ctx, tbl, 0, fn)
}

// BronzeChanges is what the operation balance reads from bronze: the row
// changes (key, op c/u/d/r, `_seq`; Partition and Offset as stored) of
// the table's topic and of its direct loads and repairs (topics
// "<topic>#<id>"), the positions of truncates, and the
// source-commit-to-apply delays (`_ingested_at` − `_source_ts`) of the
// newest stream records (the topic's own, at most lateness of them, by
// `_ingested_at`).
type BronzeChanges struct {
	Records   []validate.Record
	Truncates []string
	Delays    []time.Duration
	// LoadSeqs are the positions of the direct loads' and repairs'
	// records (`_seq` hex): a re-snapshot soft-deletes its ghost rows at
	// its position without a bronze record.
	LoadSeqs map[string]bool
}

// ReadBronzeChanges reads bronze's current Iceberg snapshot for topic
// and its "#"-suffixed load topics, leaving out the records the
// quarantine table holds (by topic, partition and offset: they were not
// applied). It returns nil when bronze does not exist. Memory: about 60
// bytes per record plus the key. Errors: catalog and file IO failures.
func ReadBronzeChanges(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, topic string, lateness int) (*BronzeChanges, error) {
	tbl, err := lakecat.LoadTable(ctx, cat, name.Bronze())
	if err != nil || tbl == nil {
		return nil, err
	}
	quarantined, err := quarantinedCoordinates(ctx, cat, name)
	if err != nil {
		return nil, err
	}
	out := &BronzeChanges{LoadSeqs: map[string]bool{}}
	if tbl.CurrentSnapshot() == nil {
		return out, nil
	}
	type delay struct {
		at int64
		d  time.Duration
	}
	var delays []delay
	err = ScanColumns(ctx, tbl, []string{lakecat.BronzeTopic, lakecat.BronzePartition, lakecat.BronzeOffset, lakecat.BronzeOp, lakecat.ColSeq, lakecat.ColKey, lakecat.ColSourceTs, lakecat.ColIngestedAt},
		func(rec arrow.RecordBatch, col func(string) arrow.Array) error {
			topics, _ := col(lakecat.BronzeTopic).(*array.String)
			parts, _ := col(lakecat.BronzePartition).(*array.Int32)
			offs, _ := col(lakecat.BronzeOffset).(*array.Int64)
			ops, _ := col(lakecat.BronzeOp).(*array.String)
			seqs, _ := col(lakecat.ColSeq).(*array.String)
			keys, _ := col(lakecat.ColKey).(*array.String)
			srcTs, _ := col(lakecat.ColSourceTs).(*array.Timestamp)
			ingTs, _ := col(lakecat.ColIngestedAt).(*array.Timestamp)
			if topics == nil || parts == nil || offs == nil || ops == nil || seqs == nil || keys == nil || srcTs == nil || ingTs == nil {
				return fmt.Errorf("lake: bronze %s: unexpected column types %s", name, rec.Schema())
			}
			for r := 0; r < int(rec.NumRows()); r++ {
				t := topics.Value(r)
				stream := t == topic
				if !stream && !strings.HasPrefix(t, topic+"#") {
					continue
				}
				if ops.IsNull(r) || seqs.IsNull(r) || quarantined[coordinate{t, parts.Value(r), offs.Value(r)}] {
					continue
				}
				if !stream {
					out.LoadSeqs[seqs.Value(r)] = true
				}
				switch op := ops.Value(r); op {
				case "t":
					out.Truncates = append(out.Truncates, seqs.Value(r))
				case "c", "u", "d", "r":
					if keys.IsNull(r) {
						continue
					}
					out.Records = append(out.Records, validate.Record{Key: keys.Value(r), Partition: parts.Value(r), Offset: offs.Value(r), Op: op, Seq: seqs.Value(r)})
					if stream && !srcTs.IsNull(r) {
						at := int64(ingTs.Value(r))
						delays = append(delays, delay{at, time.Duration(at-int64(srcTs.Value(r))) * time.Microsecond})
					}
				}
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	// the newest lateness delays
	if lateness > 0 && len(delays) > lateness {
		slices.SortFunc(delays, func(a, b delay) int { return cmp.Compare(b.at, a.at) })
		delays = delays[:lateness]
	}
	for _, d := range delays {
		out.Delays = append(out.Delays, d.d)
	}
	return out, nil
}

// coordinate is a Kafka record's topic, partition and offset.
type coordinate struct {
	topic     string
	partition int32
	offset    int64
}

// quarantinedCoordinates reads the coordinates of every record the
// quarantine table holds (none when it does not exist).
func quarantinedCoordinates(ctx context.Context, cat catalog.Catalog, name lakecat.TableName) (map[coordinate]bool, error) {
	out := map[coordinate]bool{}
	tbl, err := lakecat.LoadTable(ctx, cat, name.Quarantine())
	if err != nil || tbl == nil || tbl.CurrentSnapshot() == nil {
		return out, err
	}
	err = ScanColumns(ctx, tbl, []string{lakecat.BronzeTopic, lakecat.BronzePartition, lakecat.BronzeOffset}, func(rec arrow.RecordBatch, col func(string) arrow.Array) error {
		topics, _ := col(lakecat.BronzeTopic).(*array.String)
		parts, _ := col(lakecat.BronzePartition).(*array.Int32)
		offs, _ := col(lakecat.BronzeOffset).(*array.Int64)
		if topics == nil || parts == nil || offs == nil {
			return fmt.Errorf("lake: quarantine %s: unexpected column types %s", name, rec.Schema())
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			out[coordinate{topics.Value(r), parts.Value(r), offs.Value(r)}] = true
		}
		return nil
	})
	return out, err
}

// ScanRows reads every row of a mirror-shaped table at Iceberg snapshot
// snapshotID (0: the current one; position deletes applied) and calls fn
// with each, as ScanMirrorRows.
func ScanRows(ctx context.Context, tbl *table.Table, snapshotID int64, fn func(MirrorRow) error) error {
	cols := []string{"*"} // an older snapshot: its own schema's columns
	if snapshotID == 0 {
		cols = cols[:0]
		for _, f := range tbl.Schema().Fields() {
			cols = append(cols, f.Name)
		}
	}
	sys, err := lakecat.SystemColumnsOf(schemaAt(tbl, snapshotID))
	if err != nil {
		return fmt.Errorf("lake: %s: %w", lakecat.IdentString(tbl.Identifier()), err)
	}
	return scanColumnsAt(ctx, tbl, snapshotID, cols, func(rec arrow.RecordBatch, col func(string) arrow.Array) error {
		seqs, _ := col(lakecat.ColSeq).(*array.String)
		dels, _ := col(sys.SoftDelete).(*array.Boolean)
		ingested, _ := col(lakecat.ColIngestedAt).(*array.Timestamp)
		if seqs == nil || dels == nil {
			return fmt.Errorf("lake: %s: no %s or %s column", lakecat.IdentString(tbl.Identifier()), lakecat.ColSeq, sys.SoftDelete)
		}
		var names []string
		var arrs []arrow.Array
		for i, f := range rec.Schema().Fields() {
			if sys.Has(f.Name) {
				continue
			}
			names = append(names, f.Name)
			arrs = append(arrs, rec.Column(i))
		}
		shared := cdc.NewColumns(names)
		for r := 0; r < int(rec.NumRows()); r++ {
			vals := make([]cdc.Value, len(arrs))
			for i, a := range arrs {
				v, err := parquetio.ValueAt(a, r)
				if err != nil {
					return fmt.Errorf("lake: %s: column %q: %w", lakecat.IdentString(tbl.Identifier()), names[i], err)
				}
				vals[i] = v
			}
			m := MirrorRow{Row: &cdc.Row{Cols: shared, Vals: vals}, Seq: seqs.Value(r), Deleted: dels.Value(r)}
			if ingested != nil && ingested.IsValid(r) {
				m.Ingested = int64(ingested.Value(r))
			}
			if err := fn(m); err != nil {
				return err
			}
		}
		return nil
	})
}

// schemaAt returns the schema of tbl's Iceberg snapshot snapshotID (0, or
// a snapshot that names no schema: the current schema).
func schemaAt(tbl *table.Table, snapshotID int64) *iceberg.Schema {
	if snapshotID != 0 {
		if s := tbl.Metadata().SnapshotByID(snapshotID); s != nil && s.SchemaID != nil {
			for _, sc := range tbl.Metadata().Schemas() {
				if sc.ID == *s.SchemaID {
					return sc
				}
			}
		}
	}
	return tbl.Schema()
}
