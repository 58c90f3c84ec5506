// Package cdc is the event model of the pipeline: change operations, source
// positions (the `_seq` order), typed column values, row images and primary
// keys. It is pure: it imports only the standard library and does no I/O.
//
// Decoders (package schemas) turn Debezium records into Events, typing
// values by the rules of internal/cdc/typing; the merge rules (package
// internal/merge) fold Events into table state; the lake adapter (package
// internal/lake) writes that state to Iceberg.
package cdc
