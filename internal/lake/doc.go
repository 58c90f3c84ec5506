// Package lake is the Iceberg adapter: it opens the catalog, creates the
// bronze and mirror tables, keeps the per-table primary-key index, and
// writes each batch as one merge-on-read row delta (new row versions plus
// a position-delete file for the versions they replace), with the batch's
// bookkeeping in the snapshot summary and table properties.
//
// Data and delete files are written here with arrow-go's Parquet writer
// (so row positions are known exactly) and described to Iceberg with
// table.DataFileFromMetadata (column statistics included): the codec is
// internal/lake/parquetio.
package lake
