// Package devstack runs the pipeline's infrastructure inside the current
// process for development and tests: an embedded Temporal dev server with
// the Web UI (StartTemporal) and an embedded Kafka broker (StartKafka).
//
// Process-wide behaviour of the embedded Temporal server (server v1.32.1):
//   - Several servers may run one after another or at the same time in one
//     process as long as their ports and DB files differ. Stop closes every
//     listener (gRPC, HTTP API, UI, metrics), so the ports can be reused.
//   - The server's SQLite plugin pools connections per DSN for the life of the
//     process and never closes them: each in-memory server keeps its
//     database in memory after Stop, and a DB file stays open until exit. Two
//     servers must not use the same DB file at the same time.
//   - Metrics use a per-server Prometheus registry, never the default
//     registerer; pprof (a process-global listener) stays off.
//   - The server's logger is never allowed to exit the process: Fatal and
//     Panic messages are logged at error level and Fatal ones are reported
//     by StartTemporal.
//   - ui-server exits the process if its port is taken when it binds; the
//     port is checked just before.
package devstack
