// Package compact rewrites a table's data files with their deletes
// applied (docs/design.md, "Compaction"), in one atomic Iceberg `replace`
// snapshot: the maintenance schedule's compaction (activities'
// Maintenance) and the pipeline tests call it.
//
// Map:
//   - compact.go: Compact and Options (the target file size): plans the
//     rewrite of every data file with deletes or below 75% of the
//     target; an unpartitioned, unsorted table is rewritten by
//     iceberg-go's RewriteDataFiles.
//   - compactlaid.go: compactLaid, the compaction of a table that is or
//     was partitioned, or is sorted: it reads the live rows of the files
//     to rewrite and writes them again through rowdelta.WriteRecord (one
//     file per partition of the current spec, in the sort order), so
//     that files of older partition specs move into the current one.
//
// The result is payload.CompactResult (lake.CompactResult). The key
// indexes of internal/lake's writers notice the new snapshot and rebuild.
//
// It imports internal/lake/lakecat, parquetio and rowdelta, never
// internal/lake (internal/cdc's TestLakeImportsPointDown).
package compact
