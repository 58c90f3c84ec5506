// Package maintain keeps Iceberg tables' metadata and files bounded: it
// expires snapshots (on every batch commit past a bound, and on the
// maintenance schedule), deletes the files only expired snapshots
// referenced, deletes orphan files, merges small data manifests, and
// drops bronze's and the quarantine's old files (bronze retention). It
// rewrites no data: compaction (internal/lake/compact) and purge
// (internal/lake) rewrite or delete rows and live above it.
//
// Map:
//   - autoexpire.go: AutoExpire, run after each batch commit: past
//     PropSnapshotsRetain (default 100) and half again, expire all but
//     the newest that many.
//   - expire.go: Expire (the scheduled expiry and orphan clean-up,
//     ExpireOptions → payload.ExpireResult) and the expiry commit both
//     share.
//   - expirefiles.go: DeleteExpiredFiles, the files of expired snapshots
//     (manifest lists, manifests, data and delete files no kept snapshot
//     names), without reading every kept manifest.
//   - manifestmerge.go: AutoMergeManifests, every ManifestMergeEvery
//     commits, a metadata-only merge of small data manifests.
//   - retention.go: bronze retention (docs/design.md, "Bronze
//     retention"): TrimBronze drops the bronze and quarantine data files
//     whose records were all ingested before the cutoff, in one delete
//     commit per table, and records it (PropTrimmedBefore, PropLastTrim;
//     read back by TrimmedBefore and LastTrim). What a rebuild does about
//     a trimmed past (TrimmedPast, KeepApplied) needs the writers and
//     stays in internal/lake.
//   - tablesize.go: SizeOf, what a table holds and what its metadata
//     costs (TableSize, shown by `starter status`).
//
// It imports internal/lake/lakecat (loading and committing tables),
// internal/payload (the result types) and the Iceberg library, never
// internal/lake.
package maintain
