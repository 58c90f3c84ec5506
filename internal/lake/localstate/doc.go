// Package localstate is the storage of a table's local state
// (docs/design.md, "Local state" and "State sidecar"): the chain log on
// the worker's disk, the chain record codec, the key sort a build from
// the tables writes its records through, and the sidecar file. The state
// itself (tablestate.State: the key index, building, recording the batches,
// the late path's reads) stays in internal/lake, which walks the
// writers' batch plans; it keeps its log and codec here.
//
// Files:
//   - log.go: Log, the append-only file of length-prefixed records read
//     back by reference (OpenLog, Append, Read, Flush; Flushed and Load
//     for the sidecar), and the log's magic.
//   - record.go: the chain record of one key and one batch (ChainRec, the
//     Rec* section flags), its writer (RecWriter) and reader (RecReader,
//     Codec.DecodeRec with the Want* sections), the Codec that interns
//     column layouts and topics, and the row helpers the codec uses
//     (SameNames, HasUnavailable).
//   - buildsort.go: BuildSorter, the external sort of a build's items
//     by key (chunks in memory, run files beside the log, merged), and
//     the item kinds; the chunk size (buildChunkBytes) and the items'
//     payloads stay with the build (internal/lake/tablestate/build.go).
//   - histrow.go: HistRow, a stored history row (its version's identity
//     and interval, file id and position), and its merge.Version.
//   - sidecar.go: the sidecar file's format (SidecarImage, EncodeSidecar,
//     ParseSidecar, ErrStaleSidecar). Writing and loading a State's
//     sidecar stays in internal/lake (sidecar.go).
//
// It imports only internal/cdc, internal/merge, internal/lake/parquetio
// and internal/lake/keyindex.
package localstate
