// Package lakecat is the catalog layer of the lake: which Iceberg catalog
// to open and how (credentials from the environment, redacted from every
// message), what a source table's Iceberg tables are called, how they are
// loaded, created and committed (with one batch's table cache), their
// schemas and system columns, their partition and sort layout, and the
// names and values of the bookkeeping properties. It writes no data file and keeps no
// local state: that is internal/lake's, which imports it.
//
// Map:
//   - catalog.go: CatalogConfig (type, URI, warehouse, properties) →
//     Properties, Identity (the wiring check's catalog name, no secrets),
//     OpenCatalog.
//   - catalogenv.go: storage credentials from the process environment
//     (AWS, GCS, Azure), RedactText and CatalogConfig.Redact (secrets out
//     of any text).
//   - probe.go: WarehouseIO (the warehouse's FileIO without a catalog)
//     and ProbeWrite (write, read back and remove one object).
//   - tables.go: TableName (ParseTableName; Mirror, Bronze, History,
//     Quarantine, Purged, Validation, Erasures, Scratch identifiers),
//     LoadTable ((nil, nil) when absent), LoadOrCreate and
//     LoadOrCreateLaid (create with a layout, or evolve to it),
//     TableProperties (format v2, merge-on-read, zstd, MetadataRetention),
//     KeyColumnsOf, TopicOf, MirrorKeyColumns, SidecarPath (where the
//     state sidecar lives).
//   - cache.go: WithTableCache (one batch loads each table once),
//     CommitTx (every commit of the lake goes through it: the cache
//     follows the committed table), CacheTable, HasCache.
//   - schema.go, historyschema.go: system column names (ColSeq,
//     ColDeleted, Bronze*, ColValid*, ...), MirrorSchema, BronzeSchema,
//     HistorySchema, IcebergType (cdc type → Iceberg type) and CDCType
//     (back), SourceColumns (a mirror's columns but the system ones, typed),
//     the reserved names (SystemColumnsOf, SystemSet, ReservedColumnError).
//   - layout.go: layout.Spec → Iceberg partition spec and sort order,
//     evolving a table to it (Relaid), *LayoutError.
//   - props.go: the exactly-once bookkeeping property names (PropBatchID,
//     PropBatchSeq, PropEndOffsets, PropBatchResult, PropCovered,
//     PropKeyColumns, PropTopic, PropBatchTally), the mirror's applied
//     position (PropAppliedPosition), the direct load's cursor
//     (PropLoadCursor), the pending-rebuild set (PropPendingRebuild) and
//     the purge horizons (PropPurgeHorizon, PropPurgeLegacy; the root
//     keeps their lake names).
//   - propvalues.go: property values: SeqProp (a hex `_seq`), ReadPending,
//     PendingJSON and PendingKeys (the pending-rebuild set), PurgeLegacy
//     (the horizon of purges made before purged keys were recorded).
//   - batchprops.go: a batch's bookkeeping properties (BatchProps) and
//     the result a commit recorded (RecordedResult).
//   - committed.go: FindCommitted (what each table recorded for a batch
//     found committed: Committed) and RecordedMirrorResult.
//   - startrecord.go: where a table started reading when it started from
//     "latest" (StartRecord; ReadStart, RecordStart, ClearStart), a
//     namespace property (PropStartPrefix).
//   - snapshots.go: SnapID (a table's current snapshot id), Ancestors.
//   - checkpoint.go: the bookkeeping read back: Checkpoint (the last
//     batch a table committed: ReadCheckpoint, CheckpointFrom) and
//     bronze's covered offsets (Coverage, ReadCoverage).
//
// It imports internal/cdc, internal/layout, internal/names,
// internal/payload (Offsets, BatchTally) and the
// Iceberg libraries, never internal/lake or another package under it.
package lakecat
