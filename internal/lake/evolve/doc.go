// Package evolve brings a mirror's schema up to a batch's events
// (issue 3, schema evolution): it compares each Connect schema
// with the table, applies what may be applied on its own (new optional
// columns, Iceberg-allowed widenings), blocks on the rest with
// *SchemaBlockedError unless an operator decided (payload.DecisionEvolve
// or DecisionSkip), and settles source columns named like a system
// column before the table is created or changed.
//
// Map:
//   - evolve.go: Evolve (the schema step of the mirror writer's Prepare:
//     diff, decide, commit the evolution on its own before the batch's
//     data), CreationSince (PropColumnSince for a table being created).
//   - schemachange.go: SchemaChange, the table properties
//     PropAcceptedSchemas and PropColumnSince, the diff (diffSchema,
//     promotions, fingerprints), the columns holding values, why evolve is
//     refused for a key column, and the schema commit.
//   - reserved.go: SettleReserved (ReservedPlan: the reserved names left
//     out, recorded now or skipped), RecordIgnored and PropIgnoredColumns.
//   - errors.go: SchemaBlockedError (internal/lake keeps the lake name,
//     as it does SchemaChange's).
//
// Callers: internal/lake's mirror writer (mirror.go: Ensure and Prepare).
// It imports internal/lake/lakecat (types, system columns, commits),
// internal/payload (the decisions) and internal/cdc, never internal/lake
// (internal/cdc's TestLakeImportsPointDown).
package evolve
