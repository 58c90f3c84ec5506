// Package rowdelta writes a batch to an Iceberg table as one
// merge-on-read row delta: the new rows as data files, one per partition
// of the table's current spec and sorted by its sort order; the rows
// they replace as deletes in the table's delete format (position-delete
// files, one per partition of the files they point at, on a
// format-version 2 table; deletion vectors on a format-version 3 one);
// and the commit that adds both with the batch's bookkeeping in the
// snapshot summary and the table properties. It keeps no state of its
// own beyond the partitions of the data files a writer has written
// (FilePartitions); what to write is internal/lake's, which imports it.
//
// Map:
//   - partition.go: BindLayout (a table's partition spec and sort order
//     bound to a record's columns: RecordLayout, with Group splitting a
//     record's rows into RowGroups and NewPath naming a partition's
//     file), WriteRecord (a record as data files: FileOut, and each
//     input row's RowLocation), TakeRows; the partition values and
//     paths.
//   - filepartitions.go: FilePartitions (NewFilePartitions, Add; the
//     partitions of files not written here are read from the manifests
//     when a delete first needs them), EverPartitioned, WriteDeletes (a
//     DeleteSet in the table's delete format) and the position-delete
//     files per partition.
//   - deletevectors.go: DeleteSet, DeleteFormatOf, CheckDeleteFormat,
//     WithFormatVersion (the properties of a delete format), the
//     deletion vectors written (replacing a file's live one) and read
//     (ReadDVs).
//   - errors.go: DeleteFormatError (internal/lake keeps it under its
//     lake name with the lake's other errors).
//   - rowdelta.go: CommitRowDelta (the row delta, the properties, then
//     maintain's automatic snapshot expiry and manifest merge) and
//     DataFiles.
//
// It relies on internal/lake/parquetio (the Parquet writers, RowLoc),
// internal/lake/lakecat (table names, CommitTx, SnapID, the bookkeeping
// property names, UniqueColumns, MetadataRetention),
// internal/lake/maintain (AutoExpire, AutoMergeManifests),
// internal/layout (DeleteFormat) and the Iceberg and Arrow libraries,
// never internal/lake.
package rowdelta
