// Package activities holds the Temporal activities of the table pipeline:
// thin adapters that read Kafka (internal/kafka), decode Debezium records
// (schemas) and write Iceberg (internal/lake). Each exported method of
// Activities is the activity of its name (payload.Activity* names them for
// the workflows; TestActivityNamesAreMethods checks the names and
// signatures). The workflow side sees only the request and result types,
// which live in internal/payload; this package keeps their names as type
// aliases (payload.go: activities.ApplyResult = payload.ApplyResult, the
// ErrType* constants, ...).
package activities
