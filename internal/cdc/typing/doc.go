// Package typing holds the value-typing rules of the pipeline: how a
// decoded value converts exactly to a column type (Coerce), how column
// types are inferred from events that carried no schema (InferColumns),
// and the exact number, JSON-text and UUID helpers those rules stand on,
// exported for the decoders in package schemas.
//
// Like package cdc it is pure: it imports only the standard library and
// internal/cdc, and does no I/O (imports_test.go in internal/cdc checks
// this). Package schemas (decoding) and internal/lake (conforming rows to
// a table's columns) both use it, so internal/ never imports schemas.
package typing
