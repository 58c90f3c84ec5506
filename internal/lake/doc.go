// Package lake is the Iceberg write path: the table writer (TableWriter,
// WriteBatch: the write protocol of one source table behind one call),
// the mirror writer, and the bronze, quarantine and purged-keys tables.
// Each batch is written as one merge-on-read row delta per table (new row
// versions plus the position deletes or deletion vectors of the versions
// they replace), with the batch's bookkeeping in the snapshot summary and
// table properties. The history writer and the local state it shares
// with the mirror writer are packages of their own below it.
//
// Data and delete files are written here with arrow-go's Parquet writer
// (so row positions are known exactly) and described to Iceberg with
// table.DataFileFromMetadata (column statistics included): the codec is
// internal/lake/parquetio.
//
// Below it (internal/cdc's TestLakeImportsPointDown checks that no
// package under internal/lake imports internal/lake or a package of its
// own or a higher layer):
//   - internal/lake/parquetio: the Parquet/Arrow codec.
//   - internal/lake/keyindex: the primary-key index (spill, budget,
//     sidecar codec).
//   - internal/lake/lakecat: the catalog (CatalogConfig, OpenCatalog),
//     table names (TableName) and loading (LoadTable, LoadOrCreate), the
//     batch's table cache and CommitTx, schemas and system columns,
//     layouts, bookkeeping property names and values (BatchProps,
//     FindCommitted, PendingKeys, the recorded start: StartRecord). lakecat.go keeps the lake
//     names of its most used declarations for callers outside.
//   - internal/lake/localstate: the local state's storage: the chain log
//     (Log), the chain record codec (ChainRec, RecWriter, RecReader,
//     Codec), stored history rows (HistRow), the build's key sort
//     (BuildSorter) and the sidecar file's format
//     (SidecarImage, EncodeSidecar, ParseSidecar).
//   - internal/lake/tablestate: one table's local write-path state (State:
//     the key index and chain log, built from the tables or loaded from
//     the sidecar, recording each batch's plan), the batch plans the
//     writers decide on (Plan), the mirror's source-column layout
//     (Shape), the key-change creates waiting for their old key (heirs),
//     and the errors about it (ErrStateMoved, BinlogRestartedError;
//     errors.go keeps their lake names).
//   - internal/lake/scd2: the SCD type 2 history writer (HistoryWriter,
//     HistoryStage), on the State it shares with the mirror writer
//     (NewWriters); StageAfter reuses the mirror stage's plan.
//   - internal/lake/cuts: a source group's consistent cuts in the tables
//     (Publish: the tags cut-<n> and consistent, the _cuts rows; Read).
//   - internal/lake/maintain: snapshot expiry (AutoExpire after each
//     commit, the scheduled Expire), the expired snapshots' files, orphan
//     files, manifest merges, bronze retention's file drops (TrimBronze,
//     TrimmedBefore, LastTrim), table sizes (SizeOf). Purge and what a rebuild does about a
//     trimmed past (TrimmedPast, KeepApplied) use the writers and stay
//     here.
//   - internal/lake/tableread: the row readers: ReadRows and
//     WriteJSONLines (the dump; tableread.go keeps their lake names for
//     callers outside), the mirror row scans reconciliation and replay
//     checks compare (ScanMirrorRows, ScanRows), bronze's row changes
//     (ReadBronzeChanges), ScanColumns, bronze's records (BronzeRow, which
//     bronze.go keeps as lake.BronzeRecord and lake.BronzeRow;
//     ReadBronzeKeys, ReadBronzeKeysCounted, ScanBronze, ReadBronzeTopic,
//     BronzeKeysOfTopic, EachBronzeFile), the purged-keys table's rows
//     (ReadPurgedRows).
//   - internal/lake/rowdelta: the row-delta writes: data files per
//     partition and sort order (WriteRecord, BindLayout), deletes in the
//     table's delete format (WriteDeletes: position-delete files per
//     partition or deletion vectors; FilePartitions), the delete format
//     checks (CheckDeleteFormat, DeleteFormatError, DeleteFormatOf; the
//     last two keep their lake names in errors.go and deleteformat.go),
//     and CommitRowDelta. What rows to write, and the state they update,
//     stay here.
//   - internal/lake/erasure: erasure on request: Erase (rewrite, expire
//     and clean up across bronze, mirror, history, quarantine and
//     purged), the erasures table (HashEraseKeys, the audit rows,
//     Horizon), Guard (the erased keys a Prepare checks changes against)
//     and TypedKey. The mirror writer's side (StageErased, the refusal in
//     Prepare, the redaction of bronze and quarantine records, the purge
//     fence) stays here, in erased.go.
//   - internal/lake/evolve: schema evolution: Evolve (the schema step of
//     Prepare: diff, decide, commit), SchemaChange and SchemaBlockedError
//     (errors.go keeps their lake names), the settling of reserved source
//     column names (SettleReserved, PropIgnoredColumns), PropColumnSince.
//     Prepare's options (WithSchemaDecision, ForPastChanges) stay here,
//     in mirror.go.
//   - internal/lake/validation: the validation table (Schema, Val*
//     columns, Append) and the validation readers (ReadBronzeAudit,
//     ReadMirrorAudit), which read the bookkeeping (lakecat.ReadCheckpoint,
//     lakecat.ReadCoverage), and the replay check's read of the mirror
//     (ReadMirrorReplayState).
//   - internal/lake/compact: compaction (Compact, Options): data files
//     rewritten with their deletes applied, through rowdelta.WriteRecord
//     for a partitioned or sorted table.
//
// The bookkeeping and result types the workflows also see (Offsets, Range,
// Batch, BatchTally, LoadCursor, KeyPart, the per-table results such as
// MirrorResult, EraseResult, and the schema decisions) are defined in
// internal/payload; payload.go keeps their lake names as type aliases
// (lake.RebuildResult is payload.TableRebuildResult). A bronze record is
// the Kafka record as fetched and decoded (tableread.BronzeRow, which
// embeds payload.Record; BronzeRecord and BronzeRow are aliases of it,
// BronzeHeader of payload.Header). What needs Iceberg
// (reading a checkpoint or a load cursor from a table, writing the
// properties) stays here; the checkpoint and bronze's coverage are read by
// lakecat (ReadCheckpoint, which bookkeeping.go keeps under its lake
// name, with the Checkpoint alias; ReadCoverage).
package lake
