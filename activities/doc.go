// Package activities holds the Temporal activities of the table pipeline:
// thin adapters that read Kafka (internal/kafka), decode Debezium records
// (schemas) and write Iceberg (internal/lake). The workflow side sees only
// the request/result types of this package.
package activities
