package activities

// Debezium PostgreSQL blocking snapshots (docs/design.md rules 1 and 6):
// the reads of a consistent source, at (0, L), add nothing. The tables
// equal those of the same source without the blocking reads, for any
// split into batches, delivery order (late records, redeliveries) and
// worker restart, with table truncates, TOAST placeholders, primary-key
// changes, transactions in flight at the source snapshot, tracked
// columns and collapsed transactions. Written from a breaker's runs
// (2026-12-04); BLOCKING_SEED and BLOCKING_SEEDS widen the search.
