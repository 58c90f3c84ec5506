package parquetio

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// countingWriter counts the bytes written through it (the file size that
// the manifest records).
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// FileSpec says what kind of Iceberg file WriteFile produces.
type FileSpec struct {
	Schema     *iceberg.Schema // schema the file conforms to (the table's, or iceberg.PositionalDeleteSchema)
	Content    iceberg.ManifestEntryContent
	Referenced string // position deletes: the one data file they all point at, else ""
	// Unique names columns whose values are (nearly) all distinct (a
	// position, a key, a hash): they are written without a dictionary,
	// which would only cost time.
	Unique []string
	// Spec is the partition spec the file is written under (nil: the
	// table's current one) and Partition its partition values by
	// partition field id (nil for an unpartitioned spec).
	Spec      *iceberg.PartitionSpec
	Partition map[int]any
	// SortOrderID is the table sort order the file's rows follow (0:
	// unsorted).
	SortOrderID int
}

// NewFilePath returns a fresh data-file location in tbl's data directory:
// <prefix>-<uuid>.parquet.
func NewFilePath(tbl *table.Table, prefix string) (string, error) {
	lp, err := tbl.LocationProvider()
	if err != nil {
		return "", fmt.Errorf("lake: location provider: %w", err)
	}
	return lp.NewDataLocation(fmt.Sprintf("%s-%s.parquet", prefix, uuid.New())), nil
}

// WriteDataFile writes rec as a new data file <prefix>-<uuid>.parquet in
// tbl's data directory (see WriteFile); the caller keeps ownership of
// rec. Errors: the location provider and WriteFile's.
func WriteDataFile(ctx context.Context, tbl *table.Table, prefix string, rec arrow.RecordBatch, unique ...string) (iceberg.DataFile, error) {
	path, err := NewFilePath(tbl, prefix)
	if err != nil {
		return nil, err
	}
	return WriteFile(ctx, tbl, path, rec, FileSpec{Schema: tbl.Schema(), Content: iceberg.EntryContentData, Unique: unique})
}

// WriteFile writes rec (whose Arrow schema carries PARQUET:field_id
// metadata) as one zstd Parquet file at path and returns its Iceberg
// description with column statistics. Rows are written in rec's order,
// so row i of rec is position i of the file. Errors come from the FileIO
// (create/write/close) or from building the manifest entry.
func WriteFile(ctx context.Context, tbl *table.Table, path string, rec arrow.RecordBatch, spec FileSpec) (iceberg.DataFile, error) {
	ps, err := Create(ctx, tbl, path, rec, spec)
	if err != nil {
		return nil, err
	}
	if err := ps.Write(rec); err != nil {
		return nil, err
	}
	return ps.Finish()
}

// Stream is one Parquet file being written as a sequence of row
// groups (one per write), so that the rows of a large batch can be
// encoded while the next ones are still being decided. Row i of the
// file is the i-th row written, across row groups. Not safe for
// concurrent use.
type Stream struct {
	tbl  *table.Table
	path string
	spec FileSpec
	f    io.Closer
	bw   *bufio.Writer // between cw and f
	cw   *countingWriter
	pw   *pqarrow.FileWriter
}

// Create creates the file at path for rows of sample's schema;
// sample (the first rows, not written here) chooses the per-column
// dictionary encoding (distinctTextProps). Errors: the FileIO's, the
// Parquet writer's.
func Create(ctx context.Context, tbl *table.Table, path string, sample arrow.RecordBatch, spec FileSpec) (*Stream, error) {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("lake: file IO: %w", err)
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("lake: the table's file IO cannot write files")
	}
	f, err := wfs.Create(path)
	if err != nil {
		return nil, fmt.Errorf("lake: create %s: %w", path, err)
	}
	// the Parquet writer writes each page header and page on its own:
	// buffered, a file is a few large writes instead of thousands of
	// system calls
	bw := fileBuffers.Get().(*bufio.Writer)
	bw.Reset(f)
	cw := &countingWriter{w: bw}
	props := parquet.NewWriterProperties(append(writerProps(tbl.Properties(), sample.Schema(), spec.Unique), distinctTextProps(sample)...)...)
	pw, err := pqarrow.NewFileWriter(sample.Schema(), cw, props, pqarrow.DefaultWriterProps())
	if err != nil {
		f.Close()
		bw.Reset(nil)
		fileBuffers.Put(bw)
		return nil, fmt.Errorf("lake: parquet writer for %s: %w", path, err)
	}
	return &Stream{tbl: tbl, path: path, spec: spec, f: f, bw: bw, cw: cw, pw: pw}, nil
}

// fileBufferBytes is the write buffer of a Parquet file being written.
const fileBufferBytes = 1 << 20

// fileBuffers holds the write buffers of finished files for the next
// ones: a partitioned batch writes dozens of small files, and a new
// 1 MiB buffer per file (allocated and zeroed) cost a tenth of such a
// batch's CPU.
var fileBuffers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, fileBufferBytes) }}

// releaseBuffer returns the stream's write buffer to fileBuffers once
// nothing more is written through it: anything the Parquet writer would
// still write (a second Close) then fails instead of reaching a buffer
// another file uses.
func (p *Stream) releaseBuffer() {
	if p.bw == nil {
		return
	}
	p.cw.w = closedWriter{}
	p.bw.Reset(nil)
	fileBuffers.Put(p.bw)
	p.bw = nil
}

// closedWriter is the writer of a stream whose buffer was released.
type closedWriter struct{}

func (closedWriter) Write([]byte) (int, error) { return 0, errStreamClosed }

var errStreamClosed = errors.New("lake: parquet stream already finished or aborted")

// Write appends rec's rows as one row group (or several, past
// rowGroupRows). On error the file is abandoned (closed, never
// described). Errors: the Parquet writer's and the FileIO's.
func (p *Stream) Write(rec arrow.RecordBatch) error {
	if err := p.pw.Write(rec); err != nil {
		p.Abort()
		return fmt.Errorf("lake: write %s: %w", p.path, err)
	}
	return nil
}

// Abort closes the file without finishing it (it is then an orphan no
// table refers to).
func (p *Stream) Abort() {
	if p == nil || p.bw == nil { // none, or already finished or aborted
		return
	}
	p.pw.Close()
	p.f.Close()
	p.releaseBuffer()
}

// Finish closes the file and returns its Iceberg description with column
// statistics. Errors: closing, building the manifest entry.
func (p *Stream) Finish() (iceberg.DataFile, error) {
	if p.bw == nil {
		return nil, fmt.Errorf("lake: finish %s: %w", p.path, errStreamClosed)
	}
	if err := p.pw.Close(); err != nil { // cw is not an io.Closer, so f stays open until we close it
		p.f.Close()
		p.releaseBuffer()
		return nil, fmt.Errorf("lake: close %s: %w", p.path, err)
	}
	err := p.bw.Flush()
	p.releaseBuffer()
	if err != nil {
		p.f.Close()
		return nil, fmt.Errorf("lake: write %s: %w", p.path, err)
	}
	if err := p.f.Close(); err != nil {
		return nil, fmt.Errorf("lake: close %s: %w", p.path, err)
	}
	md, err := p.pw.FileMetadata()
	if err != nil {
		return nil, fmt.Errorf("lake: metadata of %s: %w", p.path, err)
	}
	tbl, spec := p.tbl, p.spec
	args := table.DataFileArgs{
		Schema:        spec.Schema,
		Spec:          tbl.Spec(),
		SortOrderID:   spec.SortOrderID,
		Format:        iceberg.ParquetFile,
		Metadata:      md,
		FilePath:      p.path,
		FileSize:      p.cw.n,
		Content:       spec.Content,
		Properties:    metricsProps(tbl, spec.Content),
		FormatVersion: tbl.Metadata().Version(),
	}
	if spec.Spec != nil {
		args.Spec, args.PartitionValues = *spec.Spec, spec.Partition
	}
	if spec.Referenced != "" {
		ref := spec.Referenced
		args.ReferencedDataFile = &ref
	}
	df, err := table.DataFileFromMetadata(args)
	if err != nil {
		return nil, fmt.Errorf("lake: describe %s: %w", p.path, err)
	}
	return df, nil
}

// Defaults of the Parquet writer. zstd at level 1 compresses CDC rows
// about as well as the codec's default level 3 in half the time; a table
// can choose with Iceberg's write.parquet.compression-codec (zstd, snappy,
// gzip, uncompressed) and write.parquet.compression-level properties.
const (
	defaultZstdLevel = 1
	rowGroupRows     = 128 * 1024
)

// writerProps are the Parquet writer settings for a table with the given
// properties and a file of the given Arrow schema. Dictionary encoding is
// kept for text columns (CDC text is often categorical: a status, a
// country) and turned off for numbers, decimals and times (mostly
// distinct: ids, amounts, timestamps; hashing them into a dictionary that
// is then abandoned costs a third of the write time).
func writerProps(tp iceberg.Properties, sc *arrow.Schema, unique []string) []parquet.WriterProperty {
	codec, level := compress.Codecs.Zstd, defaultZstdLevel
	switch strings.ToLower(tp["write.parquet.compression-codec"]) {
	case "snappy":
		codec, level = compress.Codecs.Snappy, compress.DefaultCompressionLevel
	case "gzip":
		codec, level = compress.Codecs.Gzip, compress.DefaultCompressionLevel
	case "uncompressed", "none":
		codec, level = compress.Codecs.Uncompressed, compress.DefaultCompressionLevel
	}
	if l, err := strconv.Atoi(tp["write.parquet.compression-level"]); err == nil {
		level = l
	}
	out := []parquet.WriterProperty{
		parquet.WithCompression(codec),
		parquet.WithCompressionLevel(level),
		parquet.WithStats(true),
		parquet.WithDictionaryDefault(true),
		parquet.WithMaxRowGroupLength(rowGroupRows),
	}
	for _, c := range unique {
		out = append(out, parquet.WithDictionaryFor(c, false))
	}
	for _, f := range sc.Fields() {
		switch f.Type.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128,
			arrow.DATE32, arrow.TIME64, arrow.TIMESTAMP:
			out = append(out, parquet.WithDictionaryFor(f.Name, false))
		}
	}
	return out
}

// metricsProps are the table properties that choose column statistics.
// Position-delete files get full-length bounds on file_path (as Iceberg's
// Java writer does): with the default 16-character truncation every
// delete file's path range would span all data files of the table, and
// readers would apply every delete file to every data file.
func metricsProps(tbl *table.Table, content iceberg.ManifestEntryContent) iceberg.Properties {
	if content != iceberg.EntryContentPosDeletes {
		return tbl.Properties()
	}
	p := iceberg.Properties{}
	for k, v := range tbl.Properties() {
		p[k] = v
	}
	p["write.metadata.metrics.column.file_path"] = "full"
	return p
}
