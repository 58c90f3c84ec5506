// Package merge holds the CDC merge rules of docs/design.md, "The rules": order
// by source position, per-batch reduction to the latest change per primary
// key, the sequence guard, soft deletes that keep the last known values,
// and idempotence under replays. It is pure (standard library and
// internal/cdc only) and does no I/O: the caller supplies what the
// primary-key index knows of each stored row and writes the outcome.
package merge
