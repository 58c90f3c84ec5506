// Package keyindex is a table's primary-key index in the local write-path
// state (docs/design.md, "Local state"): per key, its mirror row's place
// and guard state and the head of its record chain in the state log.
//
// A map of it:
//   - keyindex.go: Index (an open-addressing hash table over pointer-free
//     columns, about 53 bytes per key for one bigint key), Entry, the
//     lookups and updates a batch makes, SnapshotID (the mirror Iceberg
//     snapshot it reflects).
//   - spill.go: the part past the memory budget on local disk (pebble):
//     SetBudget, Resolve (a batch's lookups as one sorted multi-get),
//     Flush, Release, and the failures that void it (Err, Lost).
//   - budget.go: Budget (a worker's and a table's bytes in RAM), Meter
//     and Usage (what a table's index holds in RAM and on disk, for
//     status and metrics on other goroutines).
//   - codec.go, sidecar.go: the index's image in the state sidecar (Enc,
//     Dec; EncodeSidecar, DecodeSidecar).
//
// It imports internal/cdc, internal/merge (the guard state a fold takes:
// StoredAt) and pebble, nothing else of the module. Not
// safe for concurrent use, except Meter and Budget's counters.
package keyindex
