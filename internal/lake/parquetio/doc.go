// Package parquetio is the Parquet/Arrow codec of the lake layer: it
// turns cdc values into Arrow columns, writes Parquet data and
// position-delete files through a table's FileIO and describes them to
// Iceberg, and reads Parquet files back by column and row group. It knows
// nothing of bronze, mirror or history: which columns a file has and what
// they mean is the caller's (internal/lake).
//
// Map:
//   - arrowvalues.go: cdc.Value ↔ Arrow (AppendValue, ValueAt), per
//     Iceberg type (spec, "Schemas and Data Types").
//   - arrowtypes.go, arrowreserve.go: timestamps, sizing builders before
//     appending (ReserveValueData), hex text without a string per value
//     (HexScratch).
//   - hexcodec.go: lowercase hex four bytes at a time (EncodeHex,
//     DecodeLowerHex), the text of every `_seq` and `_key`.
//   - concat.go: ConcatRecords (record batches as one).
//   - binarycolumn.go: an Arrow binary column over a reused buffer
//     (BinaryColumn), for bronze's raw values.
//   - parquetdict.go: dictionary encoding per text column, decided from a
//     sample of the file's values.
//   - parquetfile.go: data files (WriteDataFile, or Create → Stream.Write
//     → Stream.Finish for a file written in row groups), with column
//     statistics, zstd level 1 by default (table properties
//     write.parquet.compression-codec / -level choose).
//   - posdelete.go: position-delete files (WritePositionDeletes; Iceberg
//     spec, "Position Delete Files").
//   - parquetread.go: reading files back (Open → File.Scan), by row group
//     for positions (RowGroupsOf, RowGroupStart).
//
// It imports internal/cdc and the Arrow, Parquet and Iceberg libraries,
// never internal/lake.
package parquetio
