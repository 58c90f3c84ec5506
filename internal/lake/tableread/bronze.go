package tableread

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// BronzeRow is one Kafka record as the bronze table stores it: the
// record as received (payload.Record: partition, offset, key — nil when
// the record had none —, value — nil for a tombstone —, Kafka timestamp
// in µs since the epoch, headers) and what decoding found. Writing takes
// the topic from the batch (Batch.Topic), not from Record.Topic; read
// back, Record.Topic is the stored topic. internal/lake calls it
// BronzeRecord (what its writers store) and BronzeRow (what they read
// back).
type BronzeRow struct {
	payload.Record
	Op       string  // Debezium op as received; "" when not a row change
	Seq      cdc.Seq // source position; "" when not a row change
	SourceTs int64   // source commit time, µs since the epoch; meaningful when Seq != ""
	PK       cdc.Key // the row change's primary key; "" when not a row change
}

// ReadBronzeKeys returns every bronze record of the given primary keys
// (the `_key` column), in no particular order: ReadBronzeKeysCounted's
// rows.
func ReadBronzeKeys(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, keys []cdc.Key) ([]BronzeRow, error) {
	rows, _, err := ReadBronzeKeysCounted(ctx, cat, name, keys)
	return rows, err
}

// BronzeKeyScan is what one ReadBronzeKeysCounted read: bronze data
// files (Files of them, Pruned more left out by their manifest `_key`
// bounds), the `_key` values it looked at (KeysScanned, one per row of
// every file read), the rows it decoded whole (RowsRead: every row of a
// row group holding a wanted key) and the rows of bronze's current
// Iceberg snapshot (TotalRows, its summary's total-records; 0 when
// unknown).
type BronzeKeyScan struct {
	Files, Pruned         int
	KeysScanned, RowsRead int64
	TotalRows             int64
}

// ReadBronzeKeysCounted returns every bronze record of the given primary
// keys (the `_key` column), in no particular order, and what it read.
// Files are pruned by their manifest `_key` bounds (PlanFiles with an IN
// filter); of each remaining file only the `_key` column is read first,
// and the whole rows only of the row groups holding a wanted key, so a
// file without one costs its key column alone. Iceberg's own row-group
// pruning is left out on purpose: iceberg-go v0.7.0's row-group evaluator
// takes a Parquet column chunk's value count (non-null values only) as if
// it included nulls, so a row group whose `_key` has as many nulls
// (tombstones) as values looks all-null and is skipped, losing records.
// It serves the late-key rebuild, never the in-order path. Errors:
// catalog and file IO failures, a bronze file with delete files (this
// pipeline never writes them), a `_key` that is not hex.
func ReadBronzeKeysCounted(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, keys []cdc.Key) ([]BronzeRow, BronzeKeyScan, error) {
	var scan BronzeKeyScan
	if len(keys) == 0 {
		return nil, scan, nil
	}
	hexKeys := make([]string, len(keys))
	want := make(map[string]bool, len(keys))
	for i, k := range keys {
		hexKeys[i] = hex.EncodeToString([]byte(k))
		want[hexKeys[i]] = true
	}
	tbl, tasks, fs, err := bronzeTasks(ctx, cat, name, iceberg.IsIn(iceberg.Reference(lakecat.ColKey), hexKeys...), fmt.Sprintf(" for %d keys", len(keys)))
	if err != nil || tbl == nil {
		return nil, scan, err
	}
	if sum := tbl.CurrentSnapshot().Summary; sum != nil {
		if n, err := strconv.ParseInt(sum.Properties["total-records"], 10, 64); err == nil {
			scan.TotalRows = n
		}
		if n, err := strconv.Atoi(sum.Properties["total-data-files"]); err == nil {
			scan.Pruned = max(n-len(tasks), 0)
		}
	}
	keep := func(_ string, _ int32, _ int64, pk string, hasKey bool) bool { return hasKey && want[pk] }
	var out []BronzeRow
	readFile := func(path string) error {
		p, err := parquetio.Open(fs, path)
		if err != nil {
			return err
		}
		defer p.Close()
		groups, n, err := bronzeKeyGroups(ctx, p, path, want)
		scan.KeysScanned += n
		if err != nil || len(groups) == 0 {
			return err
		}
		var read int64
		out, read, err = readBronzeGroups(ctx, p, path, groups, keep, out)
		scan.RowsRead += read
		return err
	}
	for _, t := range tasks {
		scan.Files++
		if err := readFile(t.File.FilePath()); err != nil {
			return nil, scan, err
		}
	}
	return out, scan, nil
}

// bronzeKeyGroups reads only the `_key` column of bronze data file p
// (at path) and returns the row groups holding a key of want (hex), and
// the rows it looked at.
func bronzeKeyGroups(ctx context.Context, p *parquetio.File, path string, want map[string]bool) ([]int, int64, error) {
	leaf := p.ColumnIndex(lakecat.ColKey)
	if leaf < 0 {
		return nil, 0, fmt.Errorf("lake: bronze file %s: no %s column", path, lakecat.ColKey)
	}
	var groups []int
	var n int64
	for rg := 0; rg < p.NumRowGroups(); rg++ {
		hit := false
		err := p.Scan(ctx, []int{leaf}, []int{rg}, func(rec arrow.RecordBatch, _ int64) error {
			pks, ok := rec.Column(0).(*array.String)
			if !ok {
				return fmt.Errorf("lake: bronze file %s: no string %s column", path, lakecat.ColKey)
			}
			n += int64(pks.Len())
			for r := 0; r < pks.Len() && !hit; r++ {
				hit = pks.IsValid(r) && want[pks.Value(r)]
			}
			return nil
		})
		if err != nil {
			return nil, n, err
		}
		if hit {
			groups = append(groups, rg)
		}
	}
	return groups, n, nil
}

// bronzeTasks plans the scan of bronze's current Iceberg snapshot: the
// data files filter (nil: every file) may match by their manifest bounds,
// and the table's file IO. tbl is nil for a missing or empty bronze. what
// (with a leading space, or "") names the scan in errors. Errors: catalog
// and file IO failures, a data file with delete files (this pipeline
// never writes them).
func bronzeTasks(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, filter iceberg.BooleanExpression, what string) (*table.Table, []table.FileScanTask, iceio.IO, error) {
	tbl, err := lakecat.LoadTable(ctx, cat, name.Bronze())
	if err != nil || tbl == nil || tbl.CurrentSnapshot() == nil {
		return nil, nil, nil, err
	}
	var opts []table.ScanOption
	if filter != nil {
		opts = append(opts, table.WithRowFilter(filter))
	}
	tasks, err := tbl.Scan(opts...).PlanFiles(ctx)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("lake: plan bronze scan%s: %w", what, err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("lake: file IO: %w", err)
	}
	for _, t := range tasks {
		if len(t.DeleteFiles) > 0 || len(t.EqualityDeleteFiles) > 0 || len(t.DeletionVectorFiles) > 0 {
			return nil, nil, nil, fmt.Errorf("lake: bronze data file %s has delete files, which this pipeline does not write", t.File.FilePath())
		}
	}
	return tbl, tasks, fs, nil
}

// ScanBronze calls fn with the row changes of each bronze data file of
// the table's current snapshot (rows with a `_key`), one file at a time:
// the past changes a worker loads into its local state once (see
// State.LoadEvents). Errors: catalog and file IO failures, a bronze file
// with delete files, a `_key` that is not hex, and fn's.
func ScanBronze(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, fn func([]BronzeRow) error) error {
	return EachBronzeFile(ctx, cat, name, nil, "", keyedRows, fn)
}

// BronzeKeep tells which rows of a bronze file to read, from the row's
// topic, partition, offset and `_key` (hex; hasKey false for a keyless
// record: a tombstone, a truncate, a schema change).
type BronzeKeep func(topic string, partition int32, offset int64, pk string, hasKey bool) bool

// keyedRows keeps the row changes (rows with a `_key`).
func keyedRows(_ string, _ int32, _ int64, _ string, hasKey bool) bool { return hasKey }

// EachBronzeFile calls fn with the rows keep accepts of each data file of
// bronze's current snapshot that filter (nil: every file) may match by
// its manifest bounds, a file at a time (fn is called for every file,
// with no rows when none is kept). what names the scan in errors. A
// missing or empty bronze calls fn never. Errors: catalog and file IO
// failures, a bronze file with delete files (this pipeline never writes
// them), a `_key` that is not hex, fn's.
func EachBronzeFile(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, filter iceberg.BooleanExpression, what string,
	keep BronzeKeep, fn func([]BronzeRow) error) error {
	if what != "" {
		what = " " + what
	}
	tbl, tasks, fs, err := bronzeTasks(ctx, cat, name, filter, what)
	if err != nil || tbl == nil {
		return err
	}
	for _, t := range tasks {
		rows, err := readBronzeFile(ctx, fs, t.File.FilePath(), keep, nil)
		if err != nil {
			return err
		}
		if err := fn(rows); err != nil {
			return err
		}
	}
	return nil
}

// readBronzeFile appends to out the rows of one bronze data file that
// keep accepts. A kept keyless row has an empty PK.
func readBronzeFile(ctx context.Context, fs iceio.IO, path string, keep BronzeKeep, out []BronzeRow) ([]BronzeRow, error) {
	p, err := parquetio.Open(fs, path)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	out, _, err = readBronzeGroups(ctx, p, path, nil, keep, out)
	return out, err
}

// readBronzeGroups is readBronzeFile for the open file p (at path) and
// the given row groups (nil: all); read counts the rows it decoded.
func readBronzeGroups(ctx context.Context, p *parquetio.File, path string, groups []int, keep BronzeKeep, out []BronzeRow) ([]BronzeRow, int64, error) {
	var read int64
	err := p.Scan(ctx, nil, groups, func(rec arrow.RecordBatch, _ int64) error {
		read += rec.NumRows()
		sc := rec.Schema()
		col := func(name string) arrow.Array {
			if idx := sc.FieldIndices(name); len(idx) > 0 {
				return rec.Column(idx[0])
			}
			return nil
		}
		pks, ok := col(lakecat.ColKey).(*array.String)
		if !ok {
			return fmt.Errorf("lake: bronze file %s: no string %s column", path, lakecat.ColKey)
		}
		topics, _ := col(lakecat.BronzeTopic).(*array.String)
		parts, _ := col(lakecat.BronzePartition).(*array.Int32)
		offs, _ := col(lakecat.BronzeOffset).(*array.Int64)
		ks, _ := col(lakecat.BronzeKey).(*array.Binary)
		vs, _ := col(lakecat.BronzeValue).(*array.Binary)
		tss, _ := col(lakecat.BronzeTimestamp).(*array.Timestamp)
		hdrs, _ := col(lakecat.BronzeHeaders).(*array.List)
		if topics == nil || parts == nil || offs == nil || ks == nil || vs == nil || tss == nil {
			return fmt.Errorf("lake: bronze file %s: unexpected column types %s", path, sc)
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			if !keep(topics.Value(r), parts.Value(r), offs.Value(r), pks.Value(r), pks.IsValid(r)) {
				continue
			}
			var row BronzeRow
			row.Topic, row.Partition, row.Offset = topics.Value(r), parts.Value(r), offs.Value(r)
			if !ks.IsNull(r) {
				row.Key = append([]byte(nil), ks.Value(r)...)
			}
			if !vs.IsNull(r) {
				row.Value = append([]byte(nil), vs.Value(r)...)
			}
			if !tss.IsNull(r) {
				row.Timestamp = int64(tss.Value(r))
			}
			if pks.IsValid(r) {
				pk, err := hex.DecodeString(pks.Value(r))
				if err != nil {
					return fmt.Errorf("lake: bronze _key %q: %w", pks.Value(r), err)
				}
				row.PK = cdc.Key(pk)
			}
			if hdrs != nil {
				row.Headers = readHeaders(hdrs, r)
			}
			out = append(out, row)
		}
		return nil
	})
	return out, read, err
}

// readHeaders reads row r of the kafka_headers list<struct<key, value>>.
func readHeaders(l *array.List, r int) []payload.Header {
	if l.IsNull(r) {
		return nil
	}
	st, ok := l.ListValues().(*array.Struct)
	if !ok || st.NumField() < 2 {
		return nil
	}
	keys, ok1 := st.Field(0).(*array.String)
	vals, ok2 := st.Field(1).(*array.Binary)
	if !ok1 || !ok2 {
		return nil
	}
	start, end := l.ValueOffsets(r)
	out := make([]payload.Header, 0, end-start)
	for i := int(start); i < int(end); i++ {
		h := payload.Header{Key: keys.Value(i)}
		if !vals.IsNull(i) {
			h.Value = append([]byte(nil), vals.Value(i)...)
		}
		out = append(out, h)
	}
	return out
}

// ReadBronzeTopic calls fn with every bronze record of topic, a file at
// a time. It reads every bronze file whose manifest bounds on kafka_topic
// admit topic, which Iceberg truncates to 16 characters: topics sharing
// that prefix (a table's stream and load topics) prune nothing. Errors: as
// ScanBronze's.
func ReadBronzeTopic(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, topic string, fn func([]BronzeRow) error) error {
	keep := func(t string, _ int32, _ int64, _ string, _ bool) bool { return t == topic }
	return EachBronzeFile(ctx, cat, name, iceberg.EqualTo(iceberg.Reference(lakecat.BronzeTopic), topic), "of topic "+topic, keep, func(rows []BronzeRow) error {
		if len(rows) == 0 {
			return nil
		}
		return fn(rows)
	})
}

// BronzeKeysOfTopic returns the distinct primary keys of the bronze rows
// of one topic (e.g. the rows a direct load stored under its own topic
// name), for a resumed re-snapshot's ghost check. It reads the topic and
// key columns of the matching files.
func BronzeKeysOfTopic(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, topic string) (map[cdc.Key]bool, error) {
	out := map[cdc.Key]bool{}
	tbl, err := lakecat.LoadTable(ctx, cat, name.Bronze())
	if err != nil || tbl == nil {
		return out, err
	}
	sc, it, err := tbl.Scan(table.WithRowFilter(iceberg.EqualTo(iceberg.Reference(lakecat.BronzeTopic), topic))).ToArrowRecords(ctx)
	if err != nil {
		return nil, fmt.Errorf("lake: scan bronze topic %s: %w", topic, err)
	}
	ki := sc.FieldIndices(lakecat.ColKey)[0]
	for rec, err := range it {
		if err != nil {
			return nil, fmt.Errorf("lake: scan bronze topic %s: %w", topic, err)
		}
		keys := rec.Column(ki).(*array.String)
		for r := 0; r < int(rec.NumRows()); r++ {
			if keys.IsNull(r) {
				continue
			}
			b, err := hex.DecodeString(keys.Value(r))
			if err != nil {
				return nil, err
			}
			out[cdc.Key(b)] = true
		}
		rec.Release()
	}
	return out, nil
}
